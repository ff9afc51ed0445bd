package check_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/check"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// testTimeout is the checker's time per answer in these tests.
const testTimeout = 2 * time.Second

// playerChecks are the checks of Player, in order; GET /health only for
// HTTP targets.
var playerChecks = []string{
	"ping", "GET /health", "ROUND_ANNOUNCEMENT", "invitation by tool name", "invitation by message type",
	"parity choice", "two matches at once", "GAME_OVER", "LEAGUE_STANDINGS_UPDATE", "ROUND_COMPLETED",
	"LEAGUE_COMPLETED", "conversation_id echoed", "reply envelope", "league.v1 refused (E011)",
	"malformed JSON refused (-32700)",
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// names lists the checks of r by name, and those that failed.
func names(r *check.Report) (all, failed []string) {
	for _, c := range r.Checks {
		all = append(all, c.Name)
		if !c.Passed {
			failed = append(failed, c.Name)
		}
	}
	return all, failed
}

func wantChecks(n *transporttest.Net, list []string) []string {
	if n.Name == "http" {
		return list
	}
	var out []string
	for _, c := range list {
		if c != "GET /health" {
			out = append(out, c)
		}
	}
	return out
}

// explain prints the failed checks of r.
func explain(t *testing.T, r *check.Report) {
	t.Helper()
	for _, c := range r.Checks {
		if !c.Passed {
			t.Logf("FAIL %s: %s\n  sent %s\n  got  %s", c.Name, c.Detail, c.Sent, c.Got)
		}
	}
}

func servePlayer(t *testing.T, n *transporttest.Net, o player.Options) (string, *player.Player) {
	t.Helper()
	if o.Strategy == nil {
		o.Strategy, _ = player.StrategyByName("random")
	}
	p := player.New(o, n.Client(time.Second), nil)
	return n.Serve(t, "player", p.Handler()), p
}

func checkPlayer(t *testing.T, n *transporttest.Net, ep string) *check.Report {
	t.Helper()
	r, err := check.Player(ctxFor(t, 30*time.Second), check.Options{Target: ep, Network: n, Timeout: testTimeout})
	if err != nil {
		t.Fatalf("check.Player: %v", err)
	}
	return r
}

// TestOurPlayerPasses: our own player, unregistered, with or without an id
// of its own, passes every check.
func TestOurPlayerPasses(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, id := range []string{"P01", ""} {
			t.Run("id "+id, func(t *testing.T) {
				is := is.New(t)
				ep, _ := servePlayer(t, n, player.Options{RequestedID: id, Seed: 7})
				r := checkPlayer(t, n, ep)
				explain(t, r)
				all, failed := names(r)
				is.Equal(all, wantChecks(n, playerChecks)) // every check, in order
				is.Equal(failed, nil)                      // all passed
				is.Equal(r.Role, "player")
				is.Equal(r.Target, ep)
				is.Equal(r.Failed(), 0)
				is.Equal(r.Passed(), len(all))
			})
		}
	})
}

// TestOurPlayerInALeaguePasses: our player, registered in a league whose
// manager has signed a broadcast with its token (from then on it refuses
// an unsigned one of its league), passes every check all the same: the
// check's broadcasts are of another league, acknowledged and ignored. Its
// league is not ended by the check's LEAGUE_COMPLETED.
func TestOurPlayerInALeaguePasses(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		const league, token = "league_2025_even_odd", "tok_player_P05_00112233445566778899aabbccddeeff"
		mgr := transport.NewMux(nil)
		mgr.HandleFunc(string(protocol.TypeLeagueRegisterRequest), func(_ context.Context, r *transport.Request) (any, error) {
			return &protocol.LeagueRegisterResponse{
				Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueRegisterResponse,
					Sender: "league_manager:LM01", Timestamp: "2025-01-15T10:30:00Z", ConversationID: r.Env.ConversationID,
					LeagueID: league, AuthToken: token},
				Status: protocol.StatusAccepted, PlayerID: "P05",
			}, nil
		})
		ep, p := servePlayer(t, n, player.Options{RequestedID: "P05", Seed: 7, Endpoint: "http://127.0.0.1:9/mcp",
			ManagerEndpoint: n.Serve(t, "league_manager", mgr)})
		is.NoErr(p.Register(ctxFor(t, 10*time.Second)))
		announce := &protocol.RoundAnnouncement{Envelope: protocol.Envelope{Protocol: protocol.Version,
			MessageType: protocol.TypeRoundAnnouncement, Sender: "league_manager:LM01", Timestamp: "2025-01-15T10:30:00Z",
			ConversationID: "conv-round-1", LeagueID: league, AuthToken: token}, RoundID: 1}
		is.NoErr(n.Client(time.Second).Call(ctxFor(t, 10*time.Second), ep, protocol.MethodNotifyRound, announce, nil)) // signed

		r := checkPlayer(t, n, ep)
		explain(t, r)
		all, failed := names(r)
		is.Equal(all, wantChecks(n, playerChecks))
		is.Equal(failed, nil) // all passed
		select {
		case <-p.Done():
			t.Fatal("the check ended the player's league")
		default:
		}
		is.Equal(p.State().State, player.StateRegistered)
	})
}

// TestInvalidPlayerFailsParity: a player that answers "Even" fails the
// parity check and no other.
func TestInvalidPlayerFailsParity(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ep, _ := servePlayer(t, n, player.Options{RequestedID: "P01", Fault: player.Fault{Kind: player.FaultInvalid}})
		r := checkPlayer(t, n, ep)
		_, failed := names(r)
		is.Equal(failed, []string{"parity choice"})
		c, _ := r.Find("parity choice")
		is.Equal(c.Detail, `parity_choice must be exactly "even" or "odd", got "Even"`)
		is.True(strings.Contains(c.Got, `"parity_choice":"Even"`))    // what came back
		is.True(strings.Contains(c.Sent, `"method":"choose_parity"`)) // what was sent
		is.True(strings.HasPrefix(c.Rule, "message-structures.md §4.5.2"))
	})
}

// rewriter serves a player and changes its requests or replies.
type rewriter struct {
	next    transport.MessageServer
	request func([]byte) []byte
	reply   func([]byte) []byte
}

func (w *rewriter) ServeMessage(ctx context.Context, body []byte, peer transport.Peer) []byte {
	if w.request != nil {
		body = w.request(body)
	}
	out := w.next.ServeMessage(ctx, body, peer)
	if w.reply != nil && out != nil {
		out = w.reply(out)
	}
	return out
}

// setResultField sets a field of a JSON-RPC response's result object.
func setResultField(t *testing.T, resp []byte, field string, value any) []byte {
	var m map[string]jsontext.Value
	if err := json.Unmarshal(resp, &m); err != nil {
		t.Error(err)
		return resp
	}
	var res map[string]any
	if json.Unmarshal(m["result"], &res) != nil {
		return resp // an error, or not an object
	}
	if _, ok := res[field]; !ok {
		return resp
	}
	res[field] = value
	b, _ := json.Marshal(res)
	m["result"] = b
	out, _ := json.Marshal(m)
	return out
}

// TestWrongConversationFails: a player whose answers carry a wrong
// conversation_id fails that check.
func TestWrongConversationFails(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
		ep := n.Serve(t, "player", &rewriter{next: p.Handler(), reply: func(b []byte) []byte {
			return setResultField(t, b, "conversation_id", "conv-not-yours")
		}})
		r := checkPlayer(t, n, ep)
		_, failed := names(r)
		is.Equal(failed, []string{"conversation_id echoed"})
		c, _ := r.Find("conversation_id echoed")
		is.True(strings.Contains(c.Detail, `"conv-not-yours"`))
		is.True(strings.Contains(c.Got, `"conversation_id":"conv-not-yours"`))
	})
}

// TestMixedUpMatchesFail: a player that answers every parity call for the
// first match it was invited to fails the two-matches check.
func TestMixedUpMatchesFail(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
		ep := n.Serve(t, "player", &rewriter{next: p.Handler(), reply: func(b []byte) []byte {
			if strings.Contains(string(b), "CHOOSE_PARITY_RESPONSE") {
				return setResultField(t, b, "match_id", "R2M1")
			}
			return b
		}})
		r := checkPlayer(t, n, ep)
		_, failed := names(r)
		is.Equal(failed, []string{"parity choice", "two matches at once"}) // R1M1's choice came for R2M1 too
		c, _ := r.Find("two matches at once")
		is.Equal(c.Detail, `the answer in R2M2 is for match "R2M1"`)
	})
}

// TestHappyWithLeagueV1Fails: a player that takes league.v1 messages fails
// the E011 check and no other.
func TestHappyWithLeagueV1Fails(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
		ep := n.Serve(t, "player", &rewriter{next: p.Handler(), request: func(b []byte) []byte {
			return []byte(strings.ReplaceAll(string(b), `"league.v1"`, `"league.v2"`))
		}})
		r := checkPlayer(t, n, ep)
		_, failed := names(r)
		is.Equal(failed, []string{"league.v1 refused (E011)"})
		c, _ := r.Find("league.v1 refused (E011)")
		is.Equal(c.Detail, "a league.v1 invitation was answered with a result, not refused")
		is.True(strings.Contains(c.Sent, `"protocol":"league.v1"`))
	})
}

// TestUnreachable: nothing at the endpoint is ErrUnreachable at once, not
// after a timeout per check, with a report all the same: the ping (and GET
// /health) failed with why, every other check of the role not run.
func TestUnreachable(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		target := "mem://nobody-here"
		if n.Name == "http" {
			target = transporttest.DeadEndpoint(t) // refused
		}
		start := time.Now()
		for role, f := range map[string]func(context.Context, check.Options) (*check.Report, error){
			"player": check.Player, "referee": check.Referee, "manager": check.Manager,
		} {
			r, err := f(ctxFor(t, 10*time.Second), check.Options{Target: target, Network: n, Timeout: 5 * time.Second})
			is.True(errors.Is(err, check.ErrUnreachable)) // unreachable
			is.Equal(r.Role, role)
			is.Equal(r.Target, target)
			all, failed := names(r)
			is.Equal(all, wantChecks(n, map[string][]string{"player": playerChecks, "referee": refereeChecks, "manager": managerChecks}[role]))
			is.Equal(failed, all) // every check listed, and failed
			ping, _ := r.Find("ping")
			is.Equal(ping.Sent, `{"jsonrpc":"2.0","method":"ping","id":1}`)
			is.True(strings.HasPrefix(ping.Detail, "ping not answered with a result: "))
			is.Equal(ping.Got, "(no answer: "+strings.TrimPrefix(ping.Detail, "ping not answered with a result: ")+")")
			for _, c := range r.Checks {
				if c.Name != "ping" && c.Name != "GET /health" {
					is.Equal(c.Detail, "not run: the agent cannot be reached")
					is.True(c.Rule != "") // each still names its rule
				}
			}
		}
		is.True(time.Since(start) < check.ReachTimeout) // at once
	})
}

// refuser answers every request with a JSON-RPC error, -32601 Method not
// found, with its id: a player that serves nothing.
type refuser struct{}

func (refuser) ServeMessage(_ context.Context, body []byte, _ transport.Peer) []byte {
	id := []byte("null")
	if items, _ := protocol.DecodeRequests(body); len(items) == 1 {
		id = items[0].ID
	}
	return protocol.AppendError(nil, id, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found"))
}

// TestNothingToLookAtIsNotRun: a player that refuses every call has its
// conversation_id and envelope checks failed as not run, not passed: they
// had no answer to look at.
func TestNothingToLookAtIsNotRun(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := checkPlayer(t, n, n.Serve(t, "player", refuser{}))
		all, failed := names(r)
		is.Equal(all, wantChecks(n, playerChecks))
		var passed []string
		for _, c := range r.Checks {
			if c.Passed {
				passed = append(passed, c.Name)
			}
		}
		is.Equal(passed, wantChecks(n, []string{"GET /health"}))
		is.True(slices.Contains(failed, "malformed JSON refused (-32700)"))
		for _, name := range []string{"conversation_id echoed", "reply envelope"} {
			c, _ := r.Find(name)
			is.Equal(c.Detail, "not run: none of the 12 answers was a result object, so there was nothing to look at (the checks that sent them say why)")
		}
	})
}

// silent never answers: a target that takes requests and says nothing.
type silent struct{ stop chan struct{} }

func (s silent) ServeMessage(ctx context.Context, _ []byte, _ transport.Peer) []byte {
	select {
	case <-ctx.Done():
	case <-s.stop:
	}
	return nil
}

// TestSilentIsUnreachable: a target that never answers costs the
// reachability deadline once, not a timeout per check.
func TestSilentIsUnreachable(t *testing.T) {
	is := is.New(t)
	n := transporttest.Mem()
	s := silent{stop: make(chan struct{})}
	ep := n.Serve(t, "silent", s)
	t.Cleanup(func() { close(s.stop) })
	start := time.Now()
	_, err := check.Player(ctxFor(t, 20*time.Second), check.Options{Target: ep, Network: n, Timeout: 5 * time.Second})
	is.True(errors.Is(err, check.ErrUnreachable))
	is.True(time.Since(start) < check.ReachTimeout+time.Second) // one deadline
	is.True(strings.Contains(err.Error(), "no answer within 3s"))
}
