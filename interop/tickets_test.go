package interop

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// noTickets is a manager of another implementation in front of ours: it
// takes our agents' registrations as one that does not know match
// tickets does (a strict one refuses the field and is asked again
// without it; a lenient one ignores it), so it never offers them, and
// hands out no ticket.
type noTickets struct{ next transport.Handler }

func (s noTickets) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	t, _ := protocol.MethodType(r.Method)
	if r.Method == protocol.MethodToolsCall || (t != protocol.TypeLeagueRegisterRequest && t != protocol.TypeRefereeRegisterRequest) {
		return s.next.ServeLeague(ctx, r)
	}
	msg := r.Msg
	if msg == nil {
		msg = protocol.New(t)
		if err := protocol.DecodeInto(r.Params, msg); err != nil {
			return nil, err
		}
	}
	// A copy: the message handed over in process is the sender's.
	switch m := msg.(type) {
	case *protocol.LeagueRegisterRequest:
		c, meta := *m, *m.PlayerMeta
		meta.MatchTickets, c.PlayerMeta = false, &meta
		msg = &c
	case *protocol.RefereeRegisterRequest:
		c, meta := *m, *m.RefereeMeta
		meta.MatchTickets, c.RefereeMeta = false, &meta
		msg = &c
	}
	return s.next.ServeLeague(ctx, &transport.Request{Method: r.Method, Type: t, Msg: msg, Env: msg.Env(), Peer: r.Peer})
}

// TestOurPlayerWithoutTickets: our players and referee in a league whose
// manager never offers match tickets play it through as before, with no
// technical loss, answering the referee's messages without a ticket; and,
// the risk docs/security.md names, a stranger's parity call is answered
// there.
func TestOurPlayerWithoutTickets(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		defer n.CloseIdle()
		client := n.Client(5 * time.Second)
		serve := func(name string, srv transport.Handler) string { return n.Serve(t, name, srv) }
		mgr, mgrEP, result := ourManager(ctx, func(name string, srv transport.Handler) string {
			return serve(name, noTickets{srv})
		}, client, "no-tickets", 6, 3)
		ourReferee(ctx, serve, client, 6, mgrEP)
		var players []*player.Player
		var endpoints []string
		for i := 1; i <= 3; i++ {
			players = append(players, ourPlayer(ctx, func(name string, srv transport.Handler) string {
				ep := n.Serve(t, name, srv)
				endpoints = append(endpoints, ep)
				return ep
			}, client, i, 6, mgrEP))
		}
		awaitLeague(t, ctx, result)
		for _, r := range mgr.Result().FinalStandings {
			is.Equal(r.Played, 2)          // every match played
			is.Equal(r.TechnicalLosses, 0) // our players answered a referee without tickets
		}
		for _, p := range players {
			<-p.Done()
			is.Equal(p.State().Stats.Played, 2)
		}
		var reply protocol.ChooseParityResponse
		err := client.Call(ctx, endpoints[0], protocol.MethodChooseParity, &protocol.ChooseParityCall{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeChooseParityCall,
				Sender: "referee:REF66", Timestamp: "2025-01-15T10:30:00Z", ConversationID: "conv-stranger"},
			MatchID: "R9M9", PlayerID: "P01"}, &reply)
		is.NoErr(err) // without tickets, anyone is answered: the risk of such a league
		is.True(reply.ParityChoice != "")
	})
}

// recorder is a dialect-b agent that keeps the params of every tools/call
// it is sent.
type recorder struct {
	*toolServer
	mu   sync.Mutex
	args []string
}

func (r *recorder) ServeLeague(ctx context.Context, req *transport.Request) (any, error) {
	if req.Method == protocol.MethodToolsCall {
		if tc, err := protocol.DecodeToolCall(req.Params); err == nil {
			r.mu.Lock()
			r.args = append(r.args, tc.Name+" "+string(tc.Arguments))
			r.mu.Unlock()
		}
	}
	return r.toolServer.ServeLeague(ctx, req)
}

// TestDialectPlayersGetNoTickets: in our league, with our referee, our
// players play with match tickets and players of another implementation
// beside them, which never asked for any, are sent nothing of them: their
// registration answers say nothing of tickets, and the referee shows them
// the token it shows every player; the league has no technical loss.
func TestDialectPlayersGetNoTickets(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		defer n.CloseIdle()
		client := n.Client(5 * time.Second)
		serve := func(name string, srv transport.Handler) string { return n.Serve(t, name, srv) }
		mgr, mgrEP, result := ourManager(ctx, serve, client, "mixed", 9, 4)
		ourReferee(ctx, serve, client, 9, mgrEP)
		completed := make(chan string, 4)
		var foreign []*recorder
		for i, choice := range []string{protocol.Even, protocol.Odd} {
			id := fmt.Sprintf("B%d", i+1)
			r := &recorder{toolServer: dialectBPlayer(id, choice, completed)}
			ep := n.Serve(t, "player-"+id, r)
			var answer jsontext.Value
			is.NoErr(client.Call(ctx, mgrEP, protocol.MethodToolsCall, protocol.ToolCall{Name: "register_player",
				Arguments: mustJSON(map[string]any{"player_meta": map[string]any{"protocol_version": "2.1.0", "display_name": "Player-" + id,
					"game_types": []string{"even_odd"}, "contact_endpoint": ep}})}, &answer))
			is.True(!strings.Contains(string(answer), "ticket")) // nothing of tickets to who did not ask
			foreign = append(foreign, r)
		}
		var ours []*player.Player
		for i := 3; i <= 4; i++ {
			ours = append(ours, ourPlayer(ctx, func(name string, srv transport.Handler) string { return n.Serve(t, name, srv) },
				client, i, 9, mgrEP))
		}
		awaitLeague(t, ctx, result)
		for _, r := range mgr.Result().FinalStandings {
			is.Equal(r.Played, 3)
			is.Equal(r.TechnicalLosses, 0)
		}
		for _, p := range ours {
			<-p.Done()
			is.Equal(p.State().Stats.Played, 3) // our players answered the tickets of our referee
		}
		shown := regexp.MustCompile(`^tok_referee_REF01_[0-9a-f]{32}$`)
		for _, r := range foreign {
			r.mu.Lock()
			args := append([]string(nil), r.args...)
			r.mu.Unlock()
			is.True(len(args) > 0)
			for _, a := range args {
				name, body, _ := strings.Cut(a, " ")
				is.True(!strings.Contains(body, "ticket")) // no field of the extension
				if strings.HasPrefix(name, "receive_game") || name == "choose_parity" {
					var env protocol.Envelope
					is.NoErr(json.Unmarshal([]byte(body), &env))
					is.True(shown.MatchString(env.AuthToken)) // the token shown every player, not a ticket
				}
			}
		}
	})
}
