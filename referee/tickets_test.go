package referee_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// Two match tickets, of the form the manager makes them (any string
// would do: the referee only passes them on).
const (
	ticketA = "tok_referee_REF02_1736937000000_00112233445566778899aabbccddeeff"
	ticketB = "tok_referee_REF02_1736937000000_ffeeddccbbaa99887766554433221100"
)

// withTickets is sm as params, with the players' tickets, as our manager
// sends START_MATCH to a referee that asked for them; "" leaves one out.
func withTickets(t *testing.T, sm *protocol.StartMatch, a, b string) jsontext.Value {
	t.Helper()
	raw, err := protocol.Marshal(sm)
	if err != nil {
		t.Fatal(err)
	}
	more := ""
	if a != "" {
		more += `,"player_a_ticket":"` + a + `"`
	}
	if b != "" {
		more += `,"player_b_ticket":"` + b + `"`
	}
	return jsontext.Value(strings.TrimSuffix(string(raw), "}") + more + "}")
}

// TestTicketsShownToPlayers: a referee given match tickets with
// START_MATCH shows each player its own, as the auth_token of every
// message of the match to it (the invitation, the parity call, the
// GAME_ERROR of a failure, the GAME_OVER), and never the other's; a
// player without one is shown the referee's shown token, as before.
func TestTicketsShownToPlayers(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, tc := range []struct {
			name         string
			tA, tB       string
			wantA, wantB string
		}{
			{"both", ticketA, ticketB, ticketA, ticketB},
			{"only A's", ticketA, "", ticketA, shownTok},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				h := newHarness(t, n, baseOptions(), newFakeManager(), "")
				h.startRegistered()
				a, b := h.serve(newFakePlayer("P01", protocol.Even)), h.serve(newFakePlayer("P02", protocol.Odd))
				var ack protocol.StartMatchAck
				is.NoErr(h.client.Call(context.Background(), h.refEP, string(protocol.TypeStartMatch),
					withTickets(t, h.startMatchMsg("R1M1", a, b), tc.tA, tc.tB), &ack))
				is.Equal(ack.Status, protocol.StatusAccepted)
				is.Equal(recv(t, a.invites, "A's invitation").AuthToken, tc.wantA)
				is.Equal(recv(t, b.invites, "B's invitation").AuthToken, tc.wantB)
				is.Equal(recv(t, a.calls, "A's parity call").AuthToken, tc.wantA)
				is.Equal(recv(t, b.calls, "B's parity call").AuthToken, tc.wantB)
				is.Equal(recv(t, a.overs, "A's GAME_OVER").AuthToken, tc.wantA)
				is.Equal(recv(t, b.overs, "B's GAME_OVER").AuthToken, tc.wantB)
				h.report()

				// A player that fails is told so with its own ticket too.
				c, d := h.serve(newFakePlayer("P03", protocol.Even)), h.serve(newFakePlayer("P04", protocol.Odd))
				c.join = func(ctx context.Context, inv *protocol.GameInvitation) (any, error) {
					return nil, protocol.Errorf(protocol.ErrInternal, "down")
				}
				is.NoErr(h.client.Call(context.Background(), h.refEP, string(protocol.TypeStartMatch),
					withTickets(t, h.startMatchMsg("R1M2", c, d), tc.tA, tc.tB), &ack))
				is.Equal(recv(t, c.gameErrs, "C's GAME_ERROR").AuthToken, tc.wantA)
				is.Equal(recv(t, c.overs, "C's GAME_OVER").AuthToken, tc.wantA)
				is.Equal(recv(t, d.overs, "D's GAME_OVER").AuthToken, tc.wantB)
				h.report()
			})
		}
	})
}

// TestTicketsAskedFor: the referee asks its manager for match tickets at
// registration (referee_meta.match_tickets), and a manager that refuses
// the extension (E002, a strict one) is asked again without it.
func TestTicketsAskedFor(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		mgr := newFakeManager()
		mgr.register = func(req *protocol.RefereeRegisterRequest) (any, error) {
			if req.RefereeMeta.MatchTickets {
				return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "referee_meta.match_tickets: extra fields not allowed by schema")
			}
			return &protocol.RefereeRegisterResponse{
				Envelope: mgrEnvelope(protocol.TypeRefereeRegisterResponse, req.ConversationID, refToken),
				Status:   protocol.StatusAccepted, RefereeID: assignedID,
			}, nil
		}
		h := newHarness(t, n, baseOptions(), mgr, "")
		h.startRegistered()
		is.True(recv(t, mgr.regs, "REFEREE_REGISTER_REQUEST").RefereeMeta.MatchTickets)  // asked with it
		is.True(!recv(t, mgr.regs, "REFEREE_REGISTER_REQUEST").RefereeMeta.MatchTickets) // then without
		is.Equal(h.ref.ID(), assignedID)
	})
}
