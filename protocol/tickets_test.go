package protocol_test

import (
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// playerToken is a player's token of the tests below.
const playerToken = "tok_player_P01_00112233445566778899aabbccddeeff"

// TestTicket: a match ticket has the form of a referee's shown token with
// the hand-over's number in it, is fixed by the player's token, the match,
// the referee and the number (python3, below), and is checked by
// CheckTicket, which gives the number back and takes no other ticket.
func TestTicket(t *testing.T) {
	is := is.New(t)
	key := protocol.TicketKey(playerToken)
	// python3: hmac.new(b"tok_player_P01_00112233445566778899aabbccddeeff", b"leaguectl match ticket key", hashlib.sha256).hexdigest()
	is.Equal(hex.EncodeToString(key), "320bb5ab3fe72e93506bcb123c82e053162650ff690b0126f053f66433b3cf1d")
	is.Equal(protocol.TicketKey(""), nil) // no token, no key
	// python3: "tok_referee_REF01_1736937000000_" + hmac.new(key, b"leaguectl match ticket\0R1M1\0REF01\01736937000000", hashlib.sha256).hexdigest()[:32]
	ticket := protocol.Ticket(key, "R1M1", "REF01", 1736937000000)
	is.Equal(ticket, "tok_referee_REF01_1736937000000_812b013b43f06407570eb15667f1db7f")
	is.True(regexp.MustCompile(`^tok_referee_REF01_[0-9]+_[0-9a-f]{32}$`).MatchString(ticket))

	n, ok := protocol.CheckTicket(key, ticket, "R1M1", "REF01")
	is.True(ok)
	is.Equal(n, uint64(1736937000000)) // the hand-over it is of

	other := protocol.TicketKey("tok_player_P02_00112233445566778899aabbccddeeff")
	for _, tc := range []struct {
		name                   string
		key                    []byte
		ticket, match, referee string
	}{
		{"another match", key, ticket, "R1M2", "REF01"},
		{"another referee", key, ticket, "R1M1", "REF02"},
		{"another player's key", other, ticket, "R1M1", "REF01"},
		{"no key", nil, ticket, "R1M1", "REF01"},
		{"no referee", key, ticket, "R1M1", ""},
		{"another number", key, strings.Replace(ticket, "_1736937000000_", "_1736937000001_", 1), "R1M1", "REF01"},
		{"the number spelt otherwise", key, strings.Replace(ticket, "_1736937000000_", "_01736937000000_", 1), "R1M1", "REF01"},
		{"a digit changed", key, ticket[:len(ticket)-1] + "0", "R1M1", "REF01"},
		{"upper case", key, strings.ToUpper(ticket[:len(ticket)-32]) + strings.ToUpper(ticket[len(ticket)-32:]), "R1M1", "REF01"},
		{"cut short", key, ticket[:len(ticket)-2], "R1M1", "REF01"},
		{"the shown token", key, protocol.ShownToken(protocol.RoleReferee, "REF01", "tok-ref"), "R1M1", "REF01"},
		{"empty", key, "", "R1M1", "REF01"},
		{"no number", key, "tok_referee_REF01__812b013b43f06407570eb15667f1db7f", "R1M1", "REF01"},
	} {
		_, ok := protocol.CheckTicket(tc.key, tc.ticket, tc.match, tc.referee)
		is.True(!ok) // refused
		if ok {
			t.Logf("taken: %s", tc.name)
		}
	}
	// A referee whose id has underscores in it: the id is the sender's,
	// not read out of the ticket.
	odd := protocol.Ticket(key, "R1M1", "REF_0_1", 7)
	n, ok = protocol.CheckTicket(key, odd, "R1M1", "REF_0_1")
	is.True(ok)
	is.Equal(n, uint64(7))
	_, ok = protocol.CheckTicket(key, odd, "R1M1", "REF")
	is.True(!ok)
}

// TestTicketlessAnnouncement: a ROUND_ANNOUNCEMENT may say a match was
// handed to a referee that carries no tickets (ticketless_assignment with
// referee_id); the number without the referee is refused (E002), and
// dialect-a's referee_id alone means nothing and is taken.
func TestTicketlessAnnouncement(t *testing.T) {
	is := is.New(t)
	ra := func(mr protocol.MatchRef) *protocol.RoundAnnouncement {
		return &protocol.RoundAnnouncement{Envelope: protocol.Envelope{Protocol: protocol.Version,
			MessageType: protocol.TypeRoundAnnouncement, Sender: "league_manager:LM01"}, RoundID: 1, Matches: []protocol.MatchRef{mr}}
	}
	base := protocol.MatchRef{MatchID: "R1M1", GameType: protocol.GameEvenOdd, PlayerAID: "P01", PlayerBID: "P02"}

	told := base
	told.RefereeID, told.TicketlessAssignment = "REF02", 17
	is.NoErr(protocol.Validate(ra(told)))
	is.True(ra(told).Ticketless()) // nothing but the word about the referee

	dialectA := base
	dialectA.RefereeID = "REF01"
	is.NoErr(protocol.Validate(ra(dialectA)))
	is.True(!ra(dialectA).Ticketless()) // an announcement
	is.True(!ra(base).Ticketless())

	lone := base
	lone.TicketlessAssignment = 17
	err := protocol.Validate(ra(lone))
	is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat)
	is.True(strings.Contains(err.Error(), "matches[0].referee_id"))

	empty := ra(base)
	empty.Matches = []protocol.MatchRef{}
	is.True(!empty.Ticketless()) // no match: not a word about one
}

// FuzzCheckTicket: whatever a stranger puts in auth_token, CheckTicket
// does not panic, and takes only the ticket the key makes for the match,
// the referee and the number it gives back.
func FuzzCheckTicket(f *testing.F) {
	key := protocol.TicketKey(playerToken)
	f.Add(protocol.Ticket(key, "R1M1", "REF01", 5), "R1M1", "REF01")
	f.Add("tok_referee_REF01_5_", "R1M1", "REF01")
	f.Add("tok_referee_REF01_99999999999999999999999_00112233445566778899aabbccddeeff", "R1M1", "REF01")
	f.Add("tok_referee_REF01_-1_00112233445566778899aabbccddeeff", "R1M1", "REF01")
	f.Fuzz(func(t *testing.T, ticket, match, referee string) {
		n, ok := protocol.CheckTicket(key, ticket, match, referee)
		if ok && protocol.Ticket(key, match, referee, n) != ticket {
			t.Fatalf("took %q for match %q, referee %q: it is not the ticket of hand-over %d", ticket, match, referee, n)
		}
	})
}

// BenchmarkTicketCheck: a ticket checked with a Ticketer kept from one
// check to the next, as a player keeps its own.
func BenchmarkTicketCheck(b *testing.B) {
	tk := protocol.NewTicketer(protocol.TicketKey(playerToken))
	ticket := tk.Ticket("R12M34", "REF01", 1736937000000)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := tk.Check(ticket, "R12M34", "REF01"); !ok {
			b.Fatal("refused")
		}
	}
}

// BenchmarkTicketMake: a ticket made with a Ticketer kept from one ticket
// to the next, as the manager keeps each player's.
func BenchmarkTicketMake(b *testing.B) {
	tk := protocol.NewTicketer(protocol.TicketKey(playerToken))
	b.ReportAllocs()
	for b.Loop() {
		_ = tk.Ticket("R12M34", "REF01", 1736937000000)
	}
}
