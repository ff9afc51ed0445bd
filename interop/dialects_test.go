// Package interop plays leagues in which agents of another implementation
// (dialect-b of ../testdata/interop: MCP tools/call only, its own tool
// names, replies as MCP text) take part beside ours.
package interop

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// toolServer is a dialect-b agent: it knows only tools/call, by the tool
// names of dialect-b, and answers with MCP text content.
type toolServer struct {
	tools map[string]func(ctx context.Context, args jsontext.Value) (any, error)
	calls atomic.Int64
}

func (s *toolServer) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	s.calls.Add(1)
	notFound := protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
	if r.Method != protocol.MethodToolsCall {
		return nil, notFound
	}
	tc, err := protocol.DecodeToolCall(r.Params)
	if err != nil {
		return nil, protocol.NewRPCError(protocol.CodeInvalidParams, err.Error())
	}
	tool := s.tools[tc.Name]
	if tool == nil {
		return nil, notFound
	}
	return tool(ctx, tc.Arguments) // answered as MCP text content over the wire: the method was tools/call
}

var ack = map[string]string{"status": "ACK"}

// dialectBPlayer always chooses choice, and answers as the capture does:
// {"status": "ACK"} to an invitation, a choice without player_id or
// conversation_id.
func dialectBPlayer(id, choice string, completed chan<- string) *toolServer {
	var once sync.Once
	s := &toolServer{}
	s.tools = map[string]func(context.Context, jsontext.Value) (any, error){
		"receive_game_invitation": func(context.Context, jsontext.Value) (any, error) { return ack, nil },
		"choose_parity": func(_ context.Context, args jsontext.Value) (any, error) {
			var call protocol.ChooseParityCall
			if err := json.Unmarshal(args, &call); err != nil {
				return nil, err
			}
			return map[string]string{"protocol": protocol.Version, "message_type": "CHOOSE_PARITY_RESPONSE",
				"sender": "player:" + id, "timestamp": "2026-11-21T05:30:20Z", "match_id": call.MatchID, "parity_choice": choice}, nil
		},
		"receive_game_over":      func(context.Context, jsontext.Value) (any, error) { return ack, nil },
		"notify_round":           func(context.Context, jsontext.Value) (any, error) { return ack, nil },
		"notify_standings":       func(context.Context, jsontext.Value) (any, error) { return ack, nil },
		"notify_round_completed": func(context.Context, jsontext.Value) (any, error) { return ack, nil },
		"notify_league_completed": func(context.Context, jsontext.Value) (any, error) {
			once.Do(func() { completed <- id })
			return ack, nil
		},
	}
	return s
}

// dialectBReferee plays each match inside its start_match call and
// answers only when the match is over, as the dialect-b capture does; it
// reports the result (winner and score only) in between.
type dialectBReferee struct {
	*toolServer
	id, token, manager string
	caller             transport.Caller
	draws              atomic.Int64
	matches            atomic.Int64
}

func newDialectBReferee(caller transport.Caller, manager string) *dialectBReferee {
	r := &dialectBReferee{toolServer: &toolServer{}, caller: caller, manager: manager}
	r.tools = map[string]func(context.Context, jsontext.Value) (any, error){
		"start_match":             r.startMatch,
		"notify_league_completed": func(context.Context, jsontext.Value) (any, error) { return ack, nil },
	}
	return r
}

func (r *dialectBReferee) tool(ctx context.Context, endpoint, name string, args, reply any) error {
	return r.caller.Call(ctx, endpoint, protocol.MethodToolsCall, protocol.ToolCall{Name: name, Arguments: mustJSON(args)}, reply)
}

func (r *dialectBReferee) startMatch(ctx context.Context, args jsontext.Value) (any, error) {
	var m struct {
		MatchID   string `json:"match_id"`
		RoundID   int    `json:"round_id"`
		A         string `json:"player_A_id"`
		B         string `json:"player_B_id"`
		EndpointA string `json:"player_A_endpoint"`
		EndpointB string `json:"player_B_endpoint"`
	}
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, err
	}
	choices := map[string]string{}
	for _, p := range []struct{ id, ep, opp string }{{m.A, m.EndpointA, m.B}, {m.B, m.EndpointB, m.A}} {
		inv := map[string]any{"protocol": protocol.Version, "message_type": "GAME_INVITATION", "sender": "referee:" + r.id,
			"auth_token": r.token, "round_id": m.RoundID, "match_id": m.MatchID, "game_type": "even_odd",
			"role_in_match": "PLAYER_A", "opponent_id": p.opp}
		if err := r.tool(ctx, p.ep, "receive_game_invitation", inv, nil); err != nil {
			return nil, err
		}
		var resp protocol.ChooseParityResponse
		call := map[string]any{"protocol": protocol.Version, "message_type": "CHOOSE_PARITY_CALL", "sender": "referee:" + r.id,
			"auth_token": r.token, "match_id": m.MatchID, "player_id": p.id, "game_type": "even_odd"}
		if err := r.tool(ctx, p.ep, "choose_parity", call, &resp); err != nil {
			return nil, err
		}
		choices[p.id] = resp.ParityChoice
	}
	n := int(r.draws.Add(1)%10) + 1 // 2, 3, …: not random, but the manager cannot tell
	parity := protocol.Odd
	if n%2 == 0 {
		parity = protocol.Even
	}
	var winner *string
	score := map[string]int{m.A: 1, m.B: 1}
	switch {
	case choices[m.A] == parity && choices[m.B] != parity:
		winner, score = &m.A, map[string]int{m.A: 3, m.B: 0}
	case choices[m.B] == parity && choices[m.A] != parity:
		winner, score = &m.B, map[string]int{m.A: 0, m.B: 3}
	}
	for _, ep := range []string{m.EndpointA, m.EndpointB} {
		over := map[string]any{"protocol": protocol.Version, "message_type": "GAME_OVER", "sender": "referee:" + r.id,
			"auth_token": r.token, "match_id": m.MatchID, "game_type": "even_odd",
			"game_result": map[string]any{"status": "WIN", "winner_player_id": winner, "drawn_number": n,
				"number_parity": parity, "choices": choices}}
		if winner == nil {
			over["game_result"].(map[string]any)["status"] = "DRAW"
		}
		if err := r.tool(ctx, ep, "receive_game_over", over, nil); err != nil {
			return nil, err
		}
	}
	report := map[string]any{"protocol": protocol.Version, "message_type": "MATCH_RESULT_REPORT", "sender": "referee:" + r.id,
		"auth_token": r.token, "timestamp": "2026-11-21T05:30:20Z", "round_id": m.RoundID, "match_id": m.MatchID,
		"game_type": "even_odd", "result": map[string]any{"winner": winner, "score": score}}
	// Counted before the report: the manager may end the league, and the
	// test look at the count, as soon as it has the last one.
	r.matches.Add(1)
	if err := r.tool(ctx, r.manager, "report_match_result", report, nil); err != nil {
		return nil, err
	}
	return map[string]string{"status": "STARTED", "match_id": m.MatchID}, nil
}

func mustJSON(v any) jsontext.Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// registerDialectB registers a dialect-b agent as dialect-b does: tools/call
// with only the meta, no envelope.
func registerDialectB(t *testing.T, c transport.Caller, manager, tool string, meta map[string]any) (id, token string) {
	t.Helper()
	var resp struct {
		Status    string `json:"status"`
		PlayerID  string `json:"player_id"`
		RefereeID string `json:"referee_id"`
		AuthToken string `json:"auth_token"`
	}
	key := "player_meta"
	if tool == "register_referee" {
		key = "referee_meta"
	}
	if err := c.Call(context.Background(), manager, protocol.MethodToolsCall,
		protocol.ToolCall{Name: tool, Arguments: mustJSON(map[string]any{key: meta})}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status != protocol.StatusAccepted {
		t.Fatalf("%s: %+v", tool, resp)
	}
	return resp.PlayerID + resp.RefereeID, resp.AuthToken
}

// TestMixedDialectsLeague: our manager and referee, two of our players and
// two dialect-b players; then the same with a dialect-b referee that
// answers START_MATCH only when the match is over. Every match is played
// and counted once, and the dialect-b players' replies are understood.
func TestMixedDialectsLeague(t *testing.T) {
	for _, foreignReferee := range []bool{false, true} {
		t.Run(fmt.Sprintf("dialect-b referee %v", foreignReferee), func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				defer n.CloseIdle()
				client := n.Client(5 * time.Second)

				serve := func(name string, srv transport.Handler) string { return n.Serve(t, name, srv) }
				mgr, mgrEP, result := ourManager(ctx, serve, client, "mixed", 9, 4)

				var foreign *dialectBReferee
				if foreignReferee {
					foreign = newDialectBReferee(client, mgrEP)
					ep := n.Serve(t, "referee-b", foreign)
					foreign.id, foreign.token = registerDialectB(t, client, mgrEP, "register_referee", map[string]any{
						"display_name": "Referee-B", "version": "2.1.0", "game_types": []string{"even_odd"},
						"contact_endpoint": ep, "max_concurrent_matches": 1})
				} else {
					ourReferee(ctx, serve, client, 9, mgrEP)
				}
				completed := make(chan string, 4)
				var ours []*player.Player
				for i, choice := range []string{protocol.Even, protocol.Odd} {
					id := fmt.Sprintf("B%d", i+1)
					ep := n.Serve(t, "player-"+id, dialectBPlayer(id, choice, completed))
					got, _ := registerDialectB(t, client, mgrEP, "register_player", map[string]any{
						"protocol_version": "2.1.0", "display_name": "Player-" + id, "game_types": []string{"even_odd"},
						"contact_endpoint": ep, "strategy": choice})
					is.Equal(got, fmt.Sprintf("P%02d", i+1)) // the manager picks the ids
				}
				for i := 3; i <= 4; i++ {
					ours = append(ours, ourPlayer(ctx, func(name string, srv transport.Handler) string { return n.Serve(t, name, srv) },
						client, i, 9, mgrEP))
				}
				awaitLeague(t, ctx, result)
				lc := mgr.Result()
				is.Equal(lc.TotalMatches, 6)
				total := 0
				for _, r := range lc.FinalStandings {
					is.Equal(r.Played, 3)          // every player played every other
					is.Equal(r.TechnicalLosses, 0) // nobody was misunderstood
					total += r.Wins*2 + r.Draws
				}
				is.Equal(total, 12) // each match counted once: 2 points of W/L or D/D per match
				for _, p := range ours {
					<-p.Done()
					is.Equal(p.State().Stats.Played, 3) // our players saw every GAME_OVER
				}
				for range 2 {
					<-completed // dialect-b players were told the league ended
				}
				if foreignReferee {
					is.Equal(foreign.matches.Load(), int64(6)) // the foreign referee played them all
				}
			})
		})
	}
}

// typesOnly is a dialect-a agent's routing around one of ours: a request
// whose method is not a message type (GAME_INVITATION, …) is -32601.
type typesOnly struct {
	next    transport.Handler
	refused atomic.Int64
}

func (s *typesOnly) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	if t, ok := protocol.MethodType(r.Method); !ok || string(t) != r.Method {
		s.refused.Add(1)
		return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
	}
	return s.next.ServeLeague(ctx, r)
}

// TestDialectALeague: every agent, the manager included, answers only
// methods named by message type, as dialect-a's do; ours find that out
// and play the league through, with no technical loss.
func TestDialectALeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		defer n.CloseIdle()
		client := n.Client(5 * time.Second)
		var strict []*typesOnly
		serve := func(name string, srv transport.Handler) string {
			s := &typesOnly{next: srv}
			strict = append(strict, s)
			return n.Serve(t, name, s)
		}
		mgr, mgrEP, result := ourManager(ctx, serve, client, "dialect-a", 4, 3)
		ourReferee(ctx, serve, client, 4, mgrEP)
		var players []*player.Player
		for i := 1; i <= 3; i++ {
			players = append(players, ourPlayer(ctx, serve, client, i, 4, mgrEP))
		}
		awaitLeague(t, ctx, result)
		lc := mgr.Result()
		is.Equal(lc.TotalMatches, 3)
		for _, r := range lc.FinalStandings {
			is.Equal(r.Played, 2)          // every player played every other
			is.Equal(r.TechnicalLosses, 0) // nobody was misunderstood
		}
		for _, p := range players {
			<-p.Done()
			is.Equal(p.State().Stats.Played, 2) // each saw its GAME_OVERs
		}
		for _, s := range strict {
			is.True(s.refused.Load() > 0) // each was asked by another name first: the test tested something
		}
	})
}

// ourManager starts our manager of league id, which starts once players
// players and a referee have registered, served through serve, until ctx
// ends; the outcome of its Run comes on the channel.
func ourManager(ctx context.Context, serve func(name string, srv transport.Handler) string, client transport.Caller,
	id string, seed uint64, players int) (*league.Manager, string, <-chan error) {
	srv := &transport.Late{}
	ep := serve("manager", srv)
	mgr := league.New(league.Options{LeagueID: id, Seed: seed, Endpoint: ep, MinPlayers: players, MinReferees: 1,
		CallTimeout: 5 * time.Second, MatchTimeout: 20 * time.Second}, client, slog.New(slog.DiscardHandler))
	srv.Set(mgr.Handler())
	result := make(chan error, 1)
	go func() { _, err := mgr.Run(ctx); result <- err }()
	return mgr, ep, result
}

// ourReferee starts our referee REF01, served through serve, registering
// with the manager at mgrEP, until ctx ends.
func ourReferee(ctx context.Context, serve func(name string, srv transport.Handler) string, client transport.Caller,
	seed uint64, mgrEP string) {
	srv := &transport.Late{}
	ep := serve("referee", srv)
	ref := referee.New(referee.Options{RequestedID: "REF01", MaxConcurrent: 2, Seed: seed, ManagerEndpoint: mgrEP,
		Endpoint: ep, JoinTimeout: 5 * time.Second, ChoiceTimeout: 5 * time.Second, CallTimeout: 5 * time.Second},
		client, slog.New(slog.DiscardHandler))
	srv.Set(ref.Handler())
	go func() { _ = ref.Run(ctx) }()
}

// ourPlayer starts our player P0<i>, served through serve, registering
// with the manager at mgrEP, until ctx ends.
func ourPlayer(ctx context.Context, serve func(name string, srv transport.Handler) string, client transport.Caller,
	i int, seed uint64, mgrEP string) *player.Player {
	srv := &transport.Late{}
	ep := serve(fmt.Sprintf("player-%d", i), srv)
	p := player.New(player.Options{RequestedID: fmt.Sprintf("P%02d", i), Seed: seed, ManagerEndpoint: mgrEP,
		Endpoint: ep, CallTimeout: 5 * time.Second}, client, slog.New(slog.DiscardHandler))
	srv.Set(p.Handler())
	go func() { _ = p.Run(ctx) }()
	return p
}

// awaitLeague waits for the manager's Run to return (result), with no
// error, or fails the test when ctx ends first.
func awaitLeague(t *testing.T, ctx context.Context, result <-chan error) {
	t.Helper()
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("the league: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the league did not finish")
	}
}
