package check_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
	"ping", "GET /health", "JSON-RPC envelope", "ROUND_ANNOUNCEMENT", "invitation by tool name", "invitation by message type",
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
	r, err := check.Player(ctxFor(t, 30*time.Second), check.Options{Target: ep, Network: n, Post: n.Post, Timeout: testTimeout})
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
			ConversationID: "conv-round-1", LeagueID: league, AuthToken: token}, RoundID: 1,
			// matches is required; a nil list would go as [] over a network,
			// but the typed bus hands it over nil, and it is refused (E002).
			Matches: []protocol.MatchRef{}}
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

// editResults serves next and answers, instead of each result it gives,
// what edit makes of that result as encoded for the wire; errors pass as
// they are.
func editResults(t *testing.T, next transport.Handler, edit func(result jsontext.Value) jsontext.Value) transport.Handler {
	return transport.HandlerFunc(func(ctx context.Context, r *transport.Request) (any, error) {
		result, err := next.ServeLeague(ctx, r)
		if err != nil {
			return nil, err
		}
		enc, err := protocol.Marshal(result)
		if err != nil {
			t.Error(err)
			return nil, err
		}
		return edit(enc), nil
	})
}

// editRequests serves next with each request's params changed by edit.
func editRequests(next transport.Handler, edit func(params []byte) []byte) transport.Handler {
	return transport.HandlerFunc(func(ctx context.Context, r *transport.Request) (any, error) {
		if r.Params == nil && r.Msg != nil {
			// A message handed over in process: the sender's value, never
			// to be changed, so its encoding is edited, and decoded anew
			// by next.
			p, err := protocol.Marshal(r.Msg)
			if err != nil {
				return nil, err
			}
			r.Params, r.Msg, r.Env = p, nil, nil
		}
		r.Params = edit(r.Params)
		return next.ServeLeague(ctx, r)
	})
}

// setResultField sets a field of a result object, when it has it.
func setResultField(t *testing.T, result jsontext.Value, field string, value any) jsontext.Value {
	var res map[string]jsontext.Value
	if json.Unmarshal(result, &res) != nil {
		return result // not an object
	}
	if _, ok := res[field]; !ok {
		return result
	}
	v, err := json.Marshal(value)
	if err != nil {
		t.Error(err)
		return result
	}
	res[field] = v
	out, err := json.Marshal(res, json.Deterministic(true))
	if err != nil {
		t.Error(err)
		return result
	}
	return out
}

// serveHTTPRaw serves answer at POST /mcp on loopback HTTP, and
// {"status":"ok"} at GET /health, until the test ends: for an agent whose
// answers are bytes no transport.Handler gives (transport.ServeJSON frames
// every answer right), written as they are. An empty answer is 204 No
// Content, as httprpc answers notifications.
func serveHTTPRaw(t *testing.T, answer func(ctx context.Context, body []byte, peer transport.Peer) []byte) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			panic(http.ErrAbortHandler) // the client went away
		}
		out := answer(r.Context(), body, transport.Peer{Network: "http", Addr: r.RemoteAddr, Loopback: true})
		if len(out) == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	srv := httptest.NewServer(mux) // on 127.0.0.1:0
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// repliesEdited answers with h's encoded replies as edit rewrites them.
func repliesEdited(h transport.Handler, edit func([]byte) []byte) func(context.Context, []byte, transport.Peer) []byte {
	return func(ctx context.Context, body []byte, peer transport.Peer) []byte {
		out := transport.ServeJSON(ctx, h, body, peer)
		if out == nil {
			return nil
		}
		return edit(out)
	}
}

// TestWrongConversationFails: a player whose answers carry a wrong
// conversation_id fails that check.
func TestWrongConversationFails(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
		ep := n.Serve(t, "player", editResults(t, p.Handler(), func(res jsontext.Value) jsontext.Value {
			return setResultField(t, res, "conversation_id", "conv-not-yours")
		}))
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
		ep := n.Serve(t, "player", editResults(t, p.Handler(), func(res jsontext.Value) jsontext.Value {
			if strings.Contains(string(res), "CHOOSE_PARITY_RESPONSE") {
				return setResultField(t, res, "match_id", "R2M1")
			}
			return res
		}))
		// The run's matches pinned to the rounds 1 to 3: the answer names
		// one of them.
		r := checkPlayerWith(t, n, ep, check.WithFirstRound(check.Options{}, 1))
		_, failed := names(r)
		is.Equal(failed, []string{"parity choice", "two matches at once"}) // R1M1's choice came for R2M1 too
		c, _ := r.Find("two matches at once")
		is.Equal(c.Detail, `the answer in R2M2 is for match "R2M1"`)
	})
}

// TestAnswerAsAnotherPlayerFails: a player whose answers name another
// player (the opponent the invitation named, or the one the parity call
// was not for) fails the invitation and parity checks, as a referee gives
// it a technical loss (E013).
func TestAnswerAsAnotherPlayerFails(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, c := range []struct {
			name, message, failed, detail string
		}{
			{"the choice", "CHOOSE_PARITY_RESPONSE", "parity choice",
				`the choice is made as player "P98", not "P01", the call's player_id (a referee takes it for another player's answer: E013)`},
			{"the acceptance", "GAME_JOIN_ACK", "invitation by tool name",
				`the GAME_JOIN_ACK accepts as player "P98", the opponent the invitation named (a referee takes it for another player's answer: E013)`},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
				ep := n.Serve(t, "player-"+c.message, editResults(t, p.Handler(), func(res jsontext.Value) jsontext.Value {
					if strings.Contains(string(res), c.message) {
						return setResultField(t, res, "player_id", "P98")
					}
					return res
				}))
				r := checkPlayer(t, n, ep)
				_, failed := names(r)
				is.True(slices.Contains(failed, c.failed)) // the check of that answer
				got, _ := r.Find(c.failed)
				is.Equal(got.Detail, c.detail)
			})
		}
	})
}

// TestHappyWithLeagueV1Fails: a player that takes league.v1 messages fails
// the E011 check and no other.
func TestHappyWithLeagueV1Fails(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
		ep := n.Serve(t, "player", editRequests(p.Handler(), func(b []byte) []byte {
			return []byte(strings.ReplaceAll(string(b), `"league.v1"`, `"league.v2"`))
		}))
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
			r, err := f(ctxFor(t, 10*time.Second), check.Options{Target: target, Network: n, Post: n.Post, Timeout: 5 * time.Second})
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
			is.True(ping.BreaksLeague) // nothing answers: it plays nothing
			for _, c := range r.Checks {
				if c.Name != "ping" && c.Name != "GET /health" {
					is.Equal(c.Detail, "not run: the agent cannot be reached")
					is.True(c.Rule != "")    // each still names its rule
					is.True(!c.BreaksLeague) // not run: not graded
				}
			}
			health, _ := r.Find("GET /health")
			is.True(!health.BreaksLeague) // no league asks for it
			is.Equal(r.Breaking(), 1)
		}
		is.True(time.Since(start) < check.ReachTimeout) // at once
	})
}

// editEnvelope rewrites every reply's JSON-RPC members with edit; a reply
// that is not a JSON object is left as it is.
func editEnvelope(t *testing.T, edit func(m map[string]jsontext.Value)) func([]byte) []byte {
	return func(b []byte) []byte {
		var m map[string]jsontext.Value
		if err := json.Unmarshal(b, &m); err != nil {
			return b
		}
		edit(m)
		out, err := json.Marshal(m, json.Deterministic(true))
		if err != nil {
			t.Error(err)
		}
		return out
	}
}

// servePlayerReplying serves our player over loopback HTTP with its
// encoded replies rewritten by reply; n is the HTTP network it calls on.
// A Handler's answers are framed by transport.ServeJSON, right, whatever
// it returns, so JSON-RPC envelopes that break the spec are written as
// bytes: the tests that need them run over HTTP only.
func servePlayerReplying(t *testing.T, n *transporttest.Net, reply func([]byte) []byte) string {
	t.Helper()
	p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
	return serveHTTPRaw(t, repliesEdited(p.Handler(), reply))
}

// playerAnswers is how many answers the player check gets from a player
// that answers every request: the ping, ROUND_ANNOUNCEMENT, two
// invitations, the parity call, two invitations and two parity calls at
// once, four more broadcasts, the league.v1 invitation and the body cut
// short.
const playerAnswers = 15

// TestBrokenJSONRPCEnvelopeFails: a player whose league answers are right
// but whose JSON-RPC envelopes break JSON-RPC 2.0 fails the JSON-RPC
// envelope check, once, with the first broken answer shown, and (where the
// lenient reading still finds its answers) no other check. HTTP only: see
// servePlayerReplying.
func TestBrokenJSONRPCEnvelopeFails(t *testing.T) {
	all := fmt.Sprintf("%d of %d answers break JSON-RPC 2.0; the first, to ping: ", playerAnswers, playerAnswers)
	for _, tc := range []struct {
		name   string
		edit   func(m map[string]jsontext.Value)
		detail string
		failed []string // the checks failed besides JSON-RPC envelope
	}{
		{name: "jsonrpc 1.0", edit: func(m map[string]jsontext.Value) { m["jsonrpc"] = jsontext.Value(`"1.0"`) },
			detail: all + `"jsonrpc" is "1.0", not "2.0"`},
		{name: "jsonrpc a number", edit: func(m map[string]jsontext.Value) { m["jsonrpc"] = jsontext.Value(`2.0`) },
			detail: all + `"jsonrpc" is 2.0, not "2.0"`},
		{name: "no jsonrpc", edit: func(m map[string]jsontext.Value) { delete(m, "jsonrpc") },
			detail: all + `no "jsonrpc" member (want "jsonrpc": "2.0")`},
		{name: "a fixed id", edit: func(m map[string]jsontext.Value) { m["id"] = jsontext.Value(`12345`) },
			detail: all + `the id is 12345, not the request's id 1 (it is echoed byte for byte)`,
			failed: []string{"malformed JSON refused (-32700)"}}, // its id must be null too
		{name: "the id as a string", edit: func(m map[string]jsontext.Value) {
			if string(m["id"]) != "null" {
				m["id"] = jsontext.Value(`"` + string(m["id"]) + `"`)
			}
		}, detail: fmt.Sprintf(`%d of %d answers break JSON-RPC 2.0; the first, to ping: the id is "1", not the request's id 1 (it is echoed byte for byte)`,
			playerAnswers-1, playerAnswers)}, // the body cut short is answered id null, rightly
		{name: "no id", edit: func(m map[string]jsontext.Value) { delete(m, "id") },
			detail: all + `no "id" member (want the request's id 1)`,
			failed: []string{"malformed JSON refused (-32700)"}}, // its id must be null
		{name: "an error beside the result", edit: func(m map[string]jsontext.Value) {
			if m["result"] != nil && string(m["result"]) != "null" && m["error"] == nil {
				m["error"] = jsontext.Value(`{"code":-32603,"message":"oops"}`)
			}
		}, detail: fmt.Sprintf(`%d of %d answers break JSON-RPC 2.0; the first, to ping: both "result" and "error" (a response has exactly one)`,
			playerAnswers-2, playerAnswers), // the two refusals are errors only
			failed: []string{"ping", "ROUND_ANNOUNCEMENT", "invitation by tool name", "invitation by message type", "parity choice",
				"two matches at once", "GAME_OVER", "LEAGUE_STANDINGS_UPDATE", "ROUND_COMPLETED", "LEAGUE_COMPLETED",
				"conversation_id echoed", "reply envelope"}}, // read as errors, as our own client reads them
		{name: "an error that is a string", edit: func(m map[string]jsontext.Value) {
			if m["error"] != nil {
				m["error"] = jsontext.Value(`"refused"`)
			}
		}, detail: `2 of 15 answers break JSON-RPC 2.0; the first, to handle_game_invitation: "error" is "refused", not an object with "code" and "message"`,
			failed: []string{"league.v1 refused (E011)", "malformed JSON refused (-32700)"}},
		{name: "an error without its code", edit: func(m map[string]jsontext.Value) {
			if m["error"] != nil {
				m["error"] = jsontext.Value(`{"message":"refused","code":"-32600"}`)
			}
		}, detail: `2 of 15 answers break JSON-RPC 2.0; the first, to handle_game_invitation: the error object lacks an integer "code"`,
			failed: []string{"league.v1 refused (E011)", "malformed JSON refused (-32700)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			n := transporttest.HTTP()
			r := checkPlayer(t, n, servePlayerReplying(t, n, editEnvelope(t, tc.edit)))
			explain(t, r)
			all, failed := names(r)
			is.Equal(all, playerChecks) // every check, in order
			c, _ := r.Find("JSON-RPC envelope")
			is.Equal(c.Detail, tc.detail)
			is.True(!c.Passed)
			want := slices.Clone(tc.failed)
			if len(want) > 0 && want[0] == "ping" {
				want = slices.Insert(want, 1, "JSON-RPC envelope")
			} else {
				want = slices.Insert(want, 0, "JSON-RPC envelope")
			}
			is.Equal(failed, want)
			if strings.Contains(tc.detail, "the first, to ping") {
				is.Equal(c.Sent, `{"jsonrpc":"2.0","method":"ping","id":1}`) // the first broken answer, and what it answered
				is.True(strings.HasPrefix(c.Got, `{"`))
			}
			is.True(strings.HasPrefix(c.Rule, "JSON-RPC 2.0 §5: "))
		})
	}
}

// TestNeitherResultNorError: an answer without result and error (its
// error null) fails the JSON-RPC envelope check and the check of the call
// it answered; the checks with nothing to look at are not run. HTTP only:
// see servePlayerReplying.
func TestNeitherResultNorError(t *testing.T) {
	is := is.New(t)
	n := transporttest.HTTP()
	r := checkPlayer(t, n, servePlayerReplying(t, n, editEnvelope(t, func(m map[string]jsontext.Value) {
		if string(m["id"]) != "1" && m["result"] != nil { // the ping is answered: the player is reachable
			delete(m, "result")
			m["error"] = jsontext.Value("null")
		}
	})))
	c, _ := r.Find("JSON-RPC envelope")
	is.Equal(c.Detail, `12 of 15 answers break JSON-RPC 2.0; the first, to notify_round: neither "result" nor "error" ("error": null is no error)`)
	c, _ = r.Find("ROUND_ANNOUNCEMENT")
	is.Equal(c.Detail, "not answered with a result: response has neither result nor error")
	c, _ = r.Find("conversation_id echoed")
	is.Equal(c.Detail, "not run: none of the 12 answers was a result object, so there was nothing to look at (the checks that sent them say why)")
}

// TestDialectEnvelopesPass: what the interop captures legitimately send
// passes: a null "error" beside every result (dialect-a), and a null
// "result" beside every error, as the same serializer writes it. HTTP
// only: see servePlayerReplying.
func TestDialectEnvelopesPass(t *testing.T) {
	is := is.New(t)
	n := transporttest.HTTP()
	r := checkPlayer(t, n, servePlayerReplying(t, n, editEnvelope(t, func(m map[string]jsontext.Value) {
		if m["result"] == nil {
			m["result"] = jsontext.Value("null")
		} else {
			m["error"] = jsontext.Value("null")
		}
	})))
	explain(t, r)
	_, failed := names(r)
	is.Equal(failed, nil) // all passed
	c, _ := r.Find("JSON-RPC envelope")
	is.Equal(c.Detail, `15 answers, each with "jsonrpc": "2.0", its request's id and one of result or error`+
		` (15 with a null "error" beside the result, or a null "result" beside the error: taken as absent)`)
	is.Equal(c.Sent, "") // no one answer to show
	is.Equal(c.Got, "")
}

// TestResultNotAReplyObject: a result that is not an object fails the
// checks whose call the protocol answers with a reply message
// (GAME_JOIN_ACK, CHOOSE_PARITY_RESPONSE); the ping and the broadcasts,
// which expect no particular reply (message-structures.md: "Expected
// Response: None"), pass; the checks with no reply object to look at are
// not run.
func TestResultNotAReplyObject(t *testing.T) {
	for _, result := range []string{`null`, `"hello"`} {
		t.Run(result, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				p := player.New(player.Options{RequestedID: "P01"}, n.Client(time.Second), nil)
				r := checkPlayer(t, n, n.Serve(t, "player", editResults(t, p.Handler(), func(jsontext.Value) jsontext.Value {
					return jsontext.Value(result)
				})))
				_, failed := names(r)
				is.Equal(failed, []string{"invitation by tool name", "invitation by message type", "parity choice",
					"two matches at once", "conversation_id echoed", "reply envelope"})
				kind := map[string]string{`null`: "null", `"hello"`: "string"}[result]
				c, _ := r.Find("invitation by tool name")
				is.Equal(c.Detail, "the answer is not a GAME_JOIN_ACK: the result is a JSON "+kind+", not an object")
				is.Equal(c.Got, `{"jsonrpc":"2.0","result":`+result+`,"id":3}`)
				c, _ = r.Find("parity choice")
				is.Equal(c.Detail, "the answer is not a CHOOSE_PARITY_RESPONSE: the result is a JSON "+kind+", not an object")
				c, _ = r.Find("reply envelope")
				is.Equal(c.Detail, "not run: none of the 12 answers was a result object, so there was nothing to look at (the checks that sent them say why)")
			})
		})
	}
}

// refuser answers every request with a JSON-RPC error, -32601 Method not
// found: a player that serves nothing.
type refuser struct{}

func (refuser) ServeLeague(context.Context, *transport.Request) (any, error) {
	return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
}

// refuseAll answers every body with -32601 and the request's id, even a
// body that cannot be read (with id null): as refuser, but without the
// -32700 that transport.ServeJSON answers before any handler is asked.
func refuseAll(_ context.Context, body []byte, _ transport.Peer) []byte {
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
	passed := func(r *check.Report) []string {
		var out []string
		for _, c := range r.Checks {
			if c.Passed {
				out = append(out, c.Name)
			}
		}
		return out
	}
	notRun := func(is *is.I, r *check.Report) {
		for _, name := range []string{"conversation_id echoed", "reply envelope"} {
			c, _ := r.Find(name)
			is.Equal(c.Detail, "not run: none of the 12 answers was a result object, so there was nothing to look at (the checks that sent them say why)")
		}
	}
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := checkPlayer(t, n, n.Serve(t, "player", refuser{}))
		all, _ := names(r)
		is.Equal(all, wantChecks(n, playerChecks))
		// The refusals pass: a league.v1 invitation is refused, if not with
		// E011; the body cut short is answered -32700 by the transport,
		// before any handler; the envelopes are right.
		is.Equal(passed(r), wantChecks(n, []string{"GET /health", "JSON-RPC envelope", "malformed JSON refused (-32700)"}))
		notRun(is, r)
	})
	// HTTP only: -32601 to a body that cannot be read is an answer no
	// Handler gives.
	t.Run("refusing what cannot be read", func(t *testing.T) {
		is := is.New(t)
		n := transporttest.HTTP()
		r := checkPlayer(t, n, serveHTTPRaw(t, refuseAll))
		all, failed := names(r)
		is.Equal(all, playerChecks)
		is.Equal(passed(r), []string{"GET /health", "JSON-RPC envelope"})
		is.True(slices.Contains(failed, "malformed JSON refused (-32700)"))
		c, _ := r.Find("malformed JSON refused (-32700)")
		is.Equal(c.Detail, "answered -32601 (Method not found), want -32700")
		notRun(is, r)
	})
}

// TestHTTP500IsNotRun: an agent that answers every POST with HTTP 500 and
// no JSON-RPC body gives the checker no answer to look at: the JSON-RPC
// envelope, conversation_id and envelope checks are not run, and every
// check fails.
func TestHTTP500IsNotRun(t *testing.T) {
	is := is.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			_, _ = io.WriteString(w, `{"status":"ok"}`)
			return
		}
		http.Error(w, "internal error", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	n := transporttest.HTTP()
	r := checkPlayer(t, n, srv.URL+"/mcp")
	all, failed := names(r)
	is.Equal(all, playerChecks)
	is.Equal(failed, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "GET /health" }))
	c, _ := r.Find("JSON-RPC envelope")
	is.Equal(c.Detail, "not run: no answer came to look at")
	c, _ = r.Find("conversation_id echoed")
	is.Equal(c.Detail, "not run: none of the 12 answers was a result object, so there was nothing to look at (the checks that sent them say why)")
}

// silent never answers: a target that takes requests and says nothing.
type silent struct{ stop chan struct{} }

func (s silent) ServeLeague(ctx context.Context, _ *transport.Request) (any, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.stop:
		return nil, errors.New("silent: stopped")
	}
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
	_, err := check.Player(ctxFor(t, 20*time.Second), check.Options{Target: ep, Network: n, Post: n.Post, Timeout: 5 * time.Second})
	is.True(errors.Is(err, check.ErrUnreachable))
	is.True(time.Since(start) < check.ReachTimeout+time.Second) // one deadline
	is.True(strings.Contains(err.Error(), "no answer within 3s"))
}

// toolsOnly serves a player as dialect-b does: ping and MCP tools/call,
// under dialect-b's tool names only; every other method is -32601, and a
// tool named as we name it is unknown (-32602, as MCP SDKs answer).
type toolsOnly struct{ next transport.Handler }

func (s toolsOnly) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	switch r.Method {
	case protocol.MethodPing:
		return s.next.ServeLeague(ctx, r)
	case protocol.MethodToolsCall:
	default:
		return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
	}
	tc, err := protocol.DecodeToolCall(r.Params)
	switch {
	case err != nil:
		return nil, protocol.NewRPCError(protocol.CodeInvalidParams, err.Error())
	case tc.Name == protocol.MethodHandleGameInvitation || tc.Name == protocol.MethodNotifyMatchResult ||
		tc.Name == protocol.MethodUpdateStandings:
		return nil, protocol.NewRPCError(protocol.CodeInvalidParams, "Unknown tool: "+tc.Name)
	}
	return s.next.ServeLeague(ctx, r)
}

// TestToolsCallOnlyPlayer: a player that serves only MCP tools/call, under
// dialect-b's tool names, plays a league with ours (the Client finds the
// way), so the check grades its play the same way: it fails only the two
// checks of calling the invitation by its method names, and every other
// check says the way it was answered.
func TestToolsCallOnlyPlayer(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		even, _ := player.StrategyByName("even")
		p := player.New(player.Options{RequestedID: "P01", Seed: 7, Strategy: even}, n.Client(time.Second), nil)
		ep := n.Serve(t, "player", toolsOnly{p.Handler()})
		r := checkPlayer(t, n, ep)
		all, failed := names(r)
		is.Equal(all, wantChecks(n, playerChecks))
		is.Equal(failed, []string{"invitation by tool name", "invitation by message type"})

		c, _ := r.Find("invitation by tool name")
		is.Equal(c.Detail, `handle_game_invitation is not a method of this player: a peer that calls it so, as the spec does, gets -32601; `+
			`answered only as tools/call "receive_game_invitation", not as handle_game_invitation (-32601)`)
		is.True(strings.Contains(c.Sent, `"name":"receive_game_invitation"`)) // the request that was answered
		c, _ = r.Find("invitation by message type")
		is.Equal(c.Detail, "not answered with a result: JSON-RPC error -32601 (Method not found)") // asked as such only
		is.True(strings.Contains(c.Sent, `"method":"GAME_INVITATION"`))

		c, _ = r.Find("parity choice")
		is.True(strings.HasPrefix(c.Detail, `chose "even" in `))
		is.True(strings.HasSuffix(c.Detail, `; answered only as tools/call "choose_parity", not as choose_parity (-32601)`))
		c, _ = r.Find("GAME_OVER")
		is.True(strings.HasSuffix(c.Detail, `answered only as tools/call "receive_game_over", not as notify_match_result (-32601)`))
		c, _ = r.Find("LEAGUE_STANDINGS_UPDATE")
		is.True(strings.HasSuffix(c.Detail, `answered only as tools/call "notify_standings", not as update_standings (-32601)`))
		c, _ = r.Find("league.v1 refused (E011)")
		is.True(strings.Contains(c.Sent, `"name":"receive_game_invitation"`))
		is.True(strings.Contains(c.Got, `"E011"`))
	})
}

// noParity serves a player that knows no way of being asked for its
// parity: -32601 by either name, and an answer that is no JSON-RPC
// response to any tools/call.
func noParity(h transport.Handler) func(context.Context, []byte, transport.Peer) []byte {
	return func(ctx context.Context, body []byte, peer transport.Peer) []byte {
		items, _ := protocol.DecodeRequests(body)
		if len(items) == 1 && items[0].Err == nil {
			switch items[0].Method {
			case protocol.MethodChooseParity, string(protocol.TypeChooseParityCall):
				return protocol.AppendError(nil, items[0].ID, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found"))
			case protocol.MethodToolsCall:
				return []byte("oops")
			}
		}
		return transport.ServeJSON(ctx, h, body, peer)
	}
}

// TestNoWayKnownFails: a player that answers no way of asking for its
// parity fails the parity check on its answer to the method's name, with
// what the other ways got beside it; its answers to the ways the spec does
// not name are not held against its JSON-RPC envelope. HTTP only: an
// answer that is no JSON-RPC response ("oops") is one no Handler gives.
func TestNoWayKnownFails(t *testing.T) {
	is := is.New(t)
	n := transporttest.HTTP()
	p := player.New(player.Options{RequestedID: "P01", Seed: 7}, n.Client(time.Second), nil)
	r := checkPlayer(t, n, serveHTTPRaw(t, noParity(p.Handler())))
	_, failed := names(r)
	is.Equal(failed, []string{"parity choice", "two matches at once"}) // and not the JSON-RPC envelope
	c, _ := r.Find("parity choice")
	is.Equal(c.Detail, `not answered with a result: JSON-RPC error -32601 (Method not found); asked too as `+
		`CHOOSE_PARITY_CALL as the method: JSON-RPC error -32601 (Method not found); as tools/call "choose_parity": `+
		`response is not a JSON-RPC object`)
	is.True(strings.Contains(c.Sent, `"method":"choose_parity"`)) // the request shown is the spec's
}
