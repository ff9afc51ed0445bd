package player

import (
	"context"
	"crypto/subtle"
	"log/slog"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// Match tickets (docs/security.md). Without them a player answers every
// invitation and parity call, and takes every GAME_OVER: anyone who knows
// its endpoint can ask it for its move in a match before the match's
// referee does (the move is a function of the seed, the player and the
// match, so what a stranger is told is what the player will play), and
// rewrite its record. A player whose manager gives its referees tickets
// answers a message of a match only with a ticket of that match's
// hand-over to the message's referee, which only the manager can make.

// ticketed guards the handler of a message of a match (an invitation, a
// parity call, a GAME_OVER, a GAME_ERROR): refused, it never runs, so a
// refused message changes nothing and is told to no exec bot. A refusal
// is logged by the Mux, at debug level only: anyone may send them, as
// many as they like.
func (p *Player) ticketed(h handlerFunc) handlerFunc {
	return func(ctx context.Context, r *transport.Request) (any, error) {
		if err := p.checkTicket(ctx, r); err != nil {
			return nil, err
		}
		return h(ctx, r)
	}
}

// checkTicket lets a message of a match through, or says why not. A
// player not registered, or registered with a manager that issues no
// tickets, takes every one, as the spec has it. Else the message must
// carry, as auth_token, a ticket of the match made under the player's
// ticket key for the referee its sender names, of the latest hand-over of
// the match the player has seen or a later one; or its manager must have
// said that the latest hand-over is to a referee that carries none (then
// the sender's name is not held against the message: it proves nothing,
// and a referee of another implementation may sign with a name of its
// own, as dialect-b's players do). Every refusal is the same E012
// (noTicket), whatever was wrong: it tells a stranger nothing of the
// match, its referees or the player. The check is one HMAC, a few hundred
// nanoseconds, under p.mu; it allocates nothing but the entry of a
// hand-over not seen before. A checked ticket is not kept: each message
// is checked again, so that a player remembers only a number a match.
// While a registration is in flight the check waits for its answer (or
// the end of ctx): it says whether tickets are to be seen.
func (p *Player) checkTicket(ctx context.Context, r *transport.Request) error {
	if err := p.awaitAnswer(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tickets {
		return nil
	}
	match, token := matchOf(r.Msg), r.Env.AuthToken
	last, seen := p.latestLocked(match)
	referee := ""
	if s, err := protocol.ParseSender(r.Env.Sender); err == nil && s.Role == protocol.RoleReferee {
		referee = s.ID
	}
	if n, ok := p.ticketer.Check(token, match, referee); ok {
		switch {
		case seen && n < last.n:
			return noTicket() // of an earlier hand-over: the match has been handed to another referee since
		case !seen || n > last.n || last.ticketless:
			p.noteLocked(match, handOver{n: n})
		}
		return nil
	}
	if seen && last.ticketless {
		return nil // its manager said the match's referee carries no tickets
	}
	return noTicket()
}

// noTicket is the refusal of a message of a match without a valid ticket:
// E012 whether it carried no auth_token, another token, or a ticket of
// another match, referee, player or hand-over, with the same words, so
// that a refusal tells its sender nothing but that it has no ticket.
func noTicket() error {
	return protocol.Errorf(protocol.ErrAuthTokenInvalid,
		"this player answers the messages of a match only with the ticket its league's manager gave the match's referee for it")
}

// latestLocked is the latest hand-over of match the player has seen: of
// a match not over, its entry in assigned; of one over, the number kept in
// played. Under p.mu.
func (p *Player) latestLocked(match string) (handOver, bool) {
	if h, seen := p.assigned[match]; seen {
		return h, true
	}
	if n := p.played[match]; n > 0 {
		return handOver{n: n}, true
	}
	return handOver{}, false
}

// noteLocked records h as the latest hand-over of match. Under p.mu.
func (p *Player) noteLocked(match string, h handOver) {
	if _, seen := p.assigned[match]; !seen && len(p.assigned) >= maxAssigned {
		clear(p.assigned)
	}
	p.assigned[match] = h
}

// sameSecret compares a token given with one known in time that depends
// on their lengths only, without copying either (a conversion to []byte
// for crypto/subtle would cost an allocation a message).
func sameSecret(given, known string) bool {
	if len(given) != len(known) {
		return false
	}
	var v byte
	for i := 0; i < len(given); i++ {
		v |= given[i] ^ known[i]
	}
	return subtle.ConstantTimeByteEq(v, 0) == 1
}

// matchOf is the match a message of a match is of.
func matchOf(m protocol.Message) string {
	switch m := m.(type) {
	case *protocol.GameInvitation:
		return m.MatchID
	case *protocol.ChooseParityCall:
		return m.MatchID
	case *protocol.GameOver:
		return m.MatchID
	case *protocol.GameError:
		return m.MatchID
	}
	return ""
}

// announcements takes a ROUND_ANNOUNCEMENT of its manager (behind
// fromManager): the word that some matches have been handed to referees
// that carry no tickets is noted (noteTicketless), and an announcement
// that is nothing but that word (protocol.RoundAnnouncement.Ticketless)
// is only acknowledged: the round was announced already. Any other goes
// to h.
func (p *Player) announcements(h handlerFunc) handlerFunc {
	return func(ctx context.Context, r *transport.Request) (any, error) {
		ra := r.Msg.(*protocol.RoundAnnouncement)
		p.noteTicketless(ctx, r.Env, ra)
		if ra.Ticketless() {
			return p.managerAck(r), nil
		}
		return h(ctx, r)
	}
}

// noteTicketless notes each match of ra its manager says was handed, in
// hand-over n, to a referee that carries no tickets: messages of the
// match are then taken without one, until a ticket of a later hand-over
// comes. Only from a manager that issues tickets, and only signed with
// the player's token (fromManager lets a broadcast without it through
// from a manager that never signed).
func (p *Player) noteTicketless(ctx context.Context, env *protocol.Envelope, ra *protocol.RoundAnnouncement) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tickets || env.AuthToken == "" || !sameSecret(env.AuthToken, p.token) {
		return
	}
	for _, mr := range ra.Matches {
		if mr.TicketlessAssignment == 0 {
			continue
		}
		if last, seen := p.latestLocked(mr.MatchID); seen && mr.TicketlessAssignment <= last.n {
			continue // a later hand-over is known already
		}
		p.noteLocked(mr.MatchID, handOver{n: mr.TicketlessAssignment, ticketless: true})
		p.log.LogAttrs(ctx, slog.LevelInfo, "match handed to a referee that carries no tickets",
			slog.String("match_id", mr.MatchID), slog.String("referee_id", mr.RefereeID))
	}
}
