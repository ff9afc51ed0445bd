package interop

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// mcpNets are two loopback HTTP networks sharing one client: plain serves
// as our agents do (league.v2 and MCP at /mcp), mcpOnly as an agent that
// speaks nothing but MCP, built with the official SDK (initialize
// required, then tools/call in a session). Calls to either go through the
// client, which learns per endpoint how to call it.
func mcpNets(t *testing.T) (plain, mcpOnly *httprpc.Network, client *transport.Client) {
	c := httprpc.NewClient(httprpc.ClientConfig{})
	t.Cleanup(c.CloseIdleConnections)
	plain = httprpc.NewNetwork("127.0.0.1", httprpc.ServerConfig{}, c, nil)
	mcpOnly = httprpc.NewNetwork("127.0.0.1", httprpc.ServerConfig{MCP: httprpc.MCPConfig{Only: true}}, c, nil)
	return plain, mcpOnly, transport.NewClient(plain, 5*time.Second)
}

// serveOn is a serve function of the helpers that listens on nw.
func serveOn(t *testing.T, nw *httprpc.Network) func(name string, srv transport.Handler) string {
	return func(name string, srv transport.Handler) string {
		l, err := nw.Listen(name, srv)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		return l.Endpoint()
	}
}

// mcpSession is an SDK client's session with the MCP server at endpoint.
func mcpSession(t *testing.T, ctx context.Context, endpoint string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "interop-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestAgentsAreMCPServers: an MCP client that initializes a session with
// each of our agents' /mcp finds the agent's tools in tools/list, each
// with a description and an object input schema, and a tools/call of
// choose_parity gets the player's choice (a player in no league yet, so
// that it answers anyone, as for leaguectl check).
func TestAgentsAreMCPServers(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	plain, _, client := mcpNets(t)
	endpoints := map[string]string{}
	serve := func(name string, srv transport.Handler) string {
		ep := serveOn(t, plain)(name, srv)
		endpoints[name] = ep
		return ep
	}
	_, mgrEP, _ := ourManager(ctx, serve, client, "mcp-tools", 1, 2)
	ourReferee(ctx, serve, client, 1, mgrEP)
	odd, err := player.StrategyByName("odd")
	is.NoErr(err)
	p := player.New(player.Options{RequestedID: "P01", Seed: 1, Strategy: odd}, client, nil)
	endpoints["player"] = serve("player", p.Handler())

	want := map[string][]string{
		"manager": {"get_league_status", "get_standings", "league_query", "register_player", "register_referee",
			"report_match_result", "start_league"},
		"referee": {"get_match_state", "get_registration_status", "start_match"},
		"player": {"choose_parity", "get_player_state", "handle_game_invitation", "notify_game_error",
			"notify_league_completed", "notify_match_result", "notify_round", "notify_round_completed", "update_standings"},
	}
	for agent, tools := range want {
		names := toolNames(t, ctx, mcpSession(t, ctx, endpoints[agent]))
		t.Logf("%s: %v", agent, names)
		for _, tool := range tools {
			if !slices.Contains(names, tool) {
				t.Errorf("%s lists %v, without %s", agent, names, tool)
			}
		}
	}

	s := mcpSession(t, ctx, endpoints["player"])
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: protocol.MethodChooseParity, Arguments: map[string]any{
		"protocol": "league.v2", "message_type": "CHOOSE_PARITY_CALL", "sender": "referee:REF01",
		"timestamp": "2026-11-28T10:00:00Z", "conversation_id": "conv-mcp-1", "auth_token": "tok_referee_REF01",
		"match_id": "R1M1", "player_id": "P01", "game_type": "even_odd", "deadline": "2026-11-28T10:00:30Z",
		"context": map[string]any{"opponent_id": "P02", "round_id": 1, "your_standings": map[string]any{"wins": 0, "losses": 0, "draws": 0}},
	}})
	is.NoErr(err)
	is.True(!res.IsError)
	var reply protocol.ChooseParityResponse
	is.NoErr(json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &reply))
	is.Equal(reply.MessageType, protocol.TypeChooseParityResponse)
	is.Equal(reply.ParityChoice, protocol.Odd) // the choice of its strategy
	is.Equal(reply.MatchID, "R1M1")
}

// toolNames lists a session's tools, checking each has a description and
// an object input schema.
func toolNames(t *testing.T, ctx context.Context, s *mcp.ClientSession) []string {
	t.Helper()
	is := is.New(t)
	list, err := s.ListTools(ctx, nil)
	is.NoErr(err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		is.True(tl.Description != "")
		schema, err := json.Marshal(tl.InputSchema)
		is.NoErr(err)
		var top struct {
			Type string `json:"type"`
		}
		is.NoErr(json.Unmarshal(schema, &top))
		is.Equal(top.Type, "object")
	}
	slices.Sort(names)
	return names
}

// TestLeagueOfMCPOnlyPlayers: our manager and referee run a league whose
// players speak nothing but MCP (served by the SDK alone: initialize
// required, then tools/call in a session; our player's logic behind it).
// Our referee and manager open a session with each, once, and the league
// completes: every match played, none lost technically.
func TestLeagueOfMCPOnlyPlayers(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	plain, mcpOnly, client := mcpNets(t)
	mgr, mgrEP, result := ourManager(ctx, serveOn(t, plain), client, "mcp-players", 3, 4)
	ourReferee(ctx, serveOn(t, plain), client, 3, mgrEP)
	var players []*player.Player
	var endpoints []string
	for i := 1; i <= 4; i++ {
		players = append(players, ourPlayer(ctx, func(name string, srv transport.Handler) string {
			ep := serveOn(t, mcpOnly)(name, srv)
			endpoints = append(endpoints, ep)
			return ep
		}, client, i, 3, mgrEP))
	}
	// A plain league.v2 call is refused there, as an MCP server refuses it.
	refused, err := httprpc.NewClient(httprpc.ClientConfig{}).Post(ctx, endpoints[0],
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}`))
	is.NoErr(err)
	is.Equal(string(refused), `{"jsonrpc":"2.0","error":{"code":-32600,"message":"MCP: Accept must contain both 'application/json' and 'text/event-stream'"},"id":null}`)
	awaitLeague(t, ctx, result)
	lc := mgr.Result()
	is.Equal(lc.TotalMatches, 6)
	for _, r := range lc.FinalStandings {
		is.Equal(r.Played, 3)
		is.Equal(r.TechnicalLosses, 0) // every player was reached, through MCP
	}
	for _, p := range players {
		<-p.Done()
		is.Equal(p.State().Stats.Played, 3) // and heard every GAME_OVER
	}
}

// TestOurPlayerInMCPOnlyLeague: our players complete a league whose
// manager and referee speak nothing but MCP: their registrations, the
// manager's START_MATCH to the referee and the referee's report go
// through MCP sessions.
func TestOurPlayerInMCPOnlyLeague(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	plain, mcpOnly, client := mcpNets(t)
	mgr, mgrEP, result := ourManager(ctx, serveOn(t, mcpOnly), client, "mcp-league", 5, 4)
	ourReferee(ctx, serveOn(t, mcpOnly), client, 5, mgrEP)
	var players []*player.Player
	for i := 1; i <= 4; i++ {
		players = append(players, ourPlayer(ctx, serveOn(t, plain), client, i, 5, mgrEP))
	}
	awaitLeague(t, ctx, result)
	lc := mgr.Result()
	is.Equal(lc.TotalMatches, 6)
	for _, r := range lc.FinalStandings {
		is.Equal(r.Played, 3)
		is.Equal(r.TechnicalLosses, 0)
	}
	for _, p := range players {
		<-p.Done()
		st := p.State()
		is.Equal(st.State, player.StateCompleted) // told the league is over
		is.Equal(st.Stats.Played, 3)
	}
}
