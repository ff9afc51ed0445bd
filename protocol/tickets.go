package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"
)

// Match tickets (docs/security.md, "Match tickets"). A player answers the
// messages of a match only from the referee its league's manager handed
// the match to: the manager gives that referee, with START_MATCH, a
// ticket for each player, which the referee puts in auth_token on every
// message to that player for the match. The player checks it alone,
// without asking anyone: the ticket is an HMAC under a key that only the
// player and its manager can make, since both are made from the player's
// token, which only they know.

// ticketKeyLabel is what a player's token signs to make its ticket key.
const ticketKeyLabel = "leaguectl match ticket key"

// ticketLabel starts what a ticket signs.
const ticketLabel = "leaguectl match ticket\x00"

// ticketPrefix starts every ticket: tickets have the form of the tokens
// referees show players (ShownToken), tok_referee_<id>_…
const ticketPrefix = "tok_referee_"

// TicketKey is the key of the match tickets of the player whose token
// (the one its manager gave it at registration) is token: HMAC-SHA256
// under the token of "leaguectl match ticket key". Only the player and its
// manager have the token, so only they can make the key, and a manager
// restarted on its store makes it again with the token. It is nil when
// token is "".
func TicketKey(token string) []byte {
	if token == "" {
		return nil
	}
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte(ticketKeyLabel))
	return mac.Sum(nil)
}

// Ticket is the ticket that shows the player whose ticket key is key that
// referee refereeID was given match matchID in the assignment numbered n:
// tok_referee_<refereeID>_<n>_<32 hex digits>, the hex digits the first
// 128 bits of HMAC-SHA256 under key of
// "leaguectl match ticket\0<matchID>\0<refereeID>\0<n>", n in decimal.
// The manager numbers a match's assignments in increasing order, so a
// player that has seen a ticket of a later assignment knows an earlier
// one for stale.
func Ticket(key []byte, matchID, refereeID string, n uint64) string {
	return NewTicketer(key).Ticket(matchID, refereeID, n)
}

// CheckTicket reports whether ticket, shown by referee refereeID with a
// message of match matchID, is a ticket under key (Ticket), and which
// assignment of the match it is of.
func CheckTicket(key []byte, ticket, matchID, refereeID string) (n uint64, ok bool) {
	return NewTicketer(key).Check(ticket, matchID, refereeID)
}

// A Ticketer makes and checks the tickets of one ticket key, keeping its
// HMAC keyed and its buffers from one ticket to the next: after the first,
// a check allocates nothing and a ticket only its string. It is not safe
// for concurrent use.
type Ticketer struct {
	mac hash.Hash // nil for no key: it takes no ticket
	in  []byte
	sum [sha256.Size]byte
}

// NewTicketer is the Ticketer of key (TicketKey).
func NewTicketer(key []byte) *Ticketer {
	if len(key) == 0 {
		return &Ticketer{}
	}
	return &Ticketer{mac: hmac.New(sha256.New, key)}
}

// Ticket is Ticket under t's key.
func (t *Ticketer) Ticket(matchID, refereeID string, n uint64) string {
	var num [20]byte
	digits := strconv.AppendUint(num[:0], n, 10)
	t.signed(matchID, refereeID, digits)
	var b strings.Builder
	b.Grow(len(ticketPrefix) + len(refereeID) + 1 + len(digits) + 1 + 32)
	b.WriteString(ticketPrefix)
	b.WriteString(refereeID)
	b.WriteByte('_')
	b.Write(digits)
	b.WriteByte('_')
	var hexed [32]byte
	hex.Encode(hexed[:], t.sum[:16])
	b.Write(hexed[:])
	return b.String()
}

// Check is CheckTicket under t's key. It takes one HMAC.
func (t *Ticketer) Check(ticket, matchID, refereeID string) (n uint64, ok bool) {
	rest, found := strings.CutPrefix(ticket, ticketPrefix)
	if !found || t.mac == nil || refereeID == "" {
		return 0, false
	}
	if rest, found = strings.CutPrefix(rest, refereeID); !found || len(rest) == 0 || rest[0] != '_' {
		return 0, false
	}
	num, digits, found := strings.Cut(rest[1:], "_")
	if !found || len(digits) != 32 || len(num) == 0 || len(num) > 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0, false
	}
	var got [16]byte
	for i := range got {
		hi, ok1 := fromHex(digits[2*i])
		lo, ok2 := fromHex(digits[2*i+1])
		if !ok1 || !ok2 {
			return 0, false
		}
		got[i] = hi<<4 | lo
	}
	// The MAC covers the digits of n as they came: another spelling of
	// the same number ("007") is another ticket, which nobody made.
	var spelt [20]byte
	t.signed(matchID, refereeID, append(spelt[:0], num...))
	if !hmac.Equal(got[:], t.sum[:16]) {
		return 0, false
	}
	return n, true
}

// signed puts in t.sum the HMAC of what a ticket signs.
func (t *Ticketer) signed(matchID, refereeID string, num []byte) {
	if t.mac == nil {
		t.sum = [sha256.Size]byte{}
		return
	}
	t.in = append(append(append(append(append(append(t.in[:0], ticketLabel...), matchID...), 0), refereeID...), 0), num...)
	t.mac.Reset()
	t.mac.Write(t.in)
	t.mac.Sum(t.sum[:0])
}

// fromHex is the value of a lowercase hex digit: tickets are made so.
func fromHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// SameSecret compares a secret given with the one configured in constant
// time, lengths included: their SHA-256 hashes are compared, so not even
// the length of the configured one tells. For tokens checked now and
// then (admin, registration, dashboard), not on every message.
func SameSecret(given, want string) bool {
	g, w := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
