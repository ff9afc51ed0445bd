package cmd

import (
	"bufio"
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/httprpc"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// mcpEndWait bounds the wait for what a test has stopped to end: a hang
// fails the test, it does not stall it.
const mcpEndWait = 20 * time.Second

// newMCPTestServer is the server of leaguectl mcp with the default
// config, its calls ending with the test.
func newMCPTestServer(t *testing.T) *mcp.Server {
	t.Helper()
	tools := &mcpTools{ro: &rootOptions{stdout: io.Discard, stderr: io.Discard}, cfg: config.Default()}
	return newMCPServer(t.Context(), tools, slog.New(slog.DiscardHandler))
}

func newMCPTestClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "leaguectl-test", Version: "1.0.0"}, nil)
}

// memSession connects a client to srv over the SDK's in-memory
// transports.
func memSession(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := newMCPTestClient().Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

// httpSession connects a client to the Streamable HTTP endpoint.
func httpSession(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	cs, err := newMCPTestClient().Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// endsWithin waits for done to say how the command ended, and fails the
// test if it did not end, or ended with an error.
func endsWithin(t *testing.T, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(mcpEndWait):
		t.Errorf("%s did not end", what)
	}
}

// stdioSession runs `leaguectl mcp` in this process on pipes, as an
// assistant runs it on its stdin and stdout, and connects a client to it.
// Closing the client ends the command, which must end with exit 0.
func stdioSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	cs, _ := stdioCommand(t)
	return cs
}

// stdioCommand is stdioSession, and what stops the command as SIGINT
// does: it must end with exit 0 all the same.
func stdioCommand(t *testing.T) (*mcp.ClientSession, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	root := newRootCmd(outW, io.Discard)
	root.SetIn(inR)
	root.SetArgs([]string{"mcp"})
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		_ = outW.Close()
		done <- err
	}()
	cs, err := newMCPTestClient().Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		_ = inW.Close()
		endsWithin(t, "leaguectl mcp", done)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close() // the command reads the end of its stdin
		endsWithin(t, "leaguectl mcp", done)
		cancel()
	})
	return cs, cancel
}

// TestMCPStdioInterrupted: leaguectl mcp on stdio ends with exit 0 on
// SIGINT, its client still connected and a call of a long league on its
// way (TestMCPCancel shows such a call ended; here it may not have come
// in yet), and ends the client's session.
func TestMCPStdioInterrupted(t *testing.T) {
	is := is.New(t)
	cs, interrupt := stdioCommand(t)
	returned := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "simulate",
			Arguments: map[string]any{"players": 6, "seed": 1, "faults": []string{"P02=timeout"}}})
		returned <- res
	}()
	interrupt()
	select {
	case res := <-returned:
		is.True(res == nil || res.IsError) // the league did not finish
	case <-time.After(mcpEndWait):
		t.Fatal("the call went on")
	}
	_ = cs.Wait() // the command ends the session (endsWithin: exit 0)
}

// serveMCPCmd runs `leaguectl mcp --http 127.0.0.1:0` in this process and
// returns the endpoint it prints; it is stopped, as by SIGINT, and must
// end with exit 0, when the test ends.
func serveMCPCmd(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Run(ctx, []string{"mcp", "--http", "127.0.0.1:0"}, pw, io.Discard)
		_ = pw.Close()
		done <- err
	}()
	t.Cleanup(func() { cancel(); endsWithin(t, "leaguectl mcp --http", done) })
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("leaguectl mcp --http did not start: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return strings.TrimSpace(line)
}

// mcpConnection is one way of reaching leaguectl's MCP server.
type mcpConnection struct {
	name    string
	connect func(t *testing.T) *mcp.ClientSession
}

// mcpConnections are every way: the SDK's in-memory transports, and the
// command itself, over Streamable HTTP and over stdio.
func mcpConnections() []mcpConnection {
	return []mcpConnection{
		{"in-memory", func(t *testing.T) *mcp.ClientSession { return memSession(t, newMCPTestServer(t)) }},
		{"http", func(t *testing.T) *mcp.ClientSession { return httpSession(t, serveMCPCmd(t)) }},
		{"stdio", stdioSession},
	}
}

// callTool calls the tool name with args, failing the test on a protocol
// error (a tool's error is the result's).
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// resultText is the text of a result's one text content.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d contents, want one", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// structured decodes a successful result's structured content as T, and
// checks that its text content is the same JSON.
func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(t, res))
	}
	b, err := stdjson.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content: %v\n%s", err, b)
	}
	var fromText, fromStructured any
	if err := json.Unmarshal([]byte(resultText(t, res)), &fromText); err != nil {
		t.Fatalf("text content is not JSON: %v", err)
	}
	_ = json.Unmarshal(b, &fromStructured)
	is.New(t).Equal(fromText, fromStructured) // the text is the structured content
	return v
}

// toolError is the message of a tool's error result, failing the test if
// the call succeeded.
func toolError(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("the call succeeded: %s", resultText(t, res))
	}
	return resultText(t, res)
}

// commandJSON runs leaguectl with args and decodes what it prints as T.
func commandJSON[T any](t *testing.T, args ...string) T {
	t.Helper()
	var out, errb bytes.Buffer
	if err := Run(t.Context(), args, &out, &errb); err != nil {
		t.Fatalf("leaguectl %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	var v T
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("leaguectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return v
}

// sameLeague: two results of simulate are the same league.
func sameLeague(t *testing.T, got, want simulateResult) {
	t.Helper()
	is := is.New(t)
	is.True(len(want.FinalStandings) > 0)
	is.Equal(got.FinalStandings, want.FinalStandings) // the standings
	is.Equal(got.Champion, want.Champion)
	is.Equal(got.TotalRounds, want.TotalRounds)
	is.Equal(got.TotalMatches, want.TotalMatches)
	is.Equal(got.LeagueID, want.LeagueID)
	is.Equal(got.Seed, want.Seed)
	is.True(got.Stats != nil) // stats, as --output json has them
	is.Equal(got.Stats.Matches, want.Stats.Matches)
}

// TestMCPServer: over every transport, the server initializes, lists its
// five tools with object schemas whose every input is described, and
// simulate plays the league `leaguectl simulate` plays with the same
// options.
func TestMCPServer(t *testing.T) {
	want := commandJSON[simulateResult](t, "simulate", "--players", "4", "--seed", "1", "--output", "json")
	for _, c := range mcpConnections() {
		t.Run(c.name, func(t *testing.T) {
			cs := c.connect(t)
			t.Run("initialize", func(t *testing.T) {
				is := is.New(t)
				init := cs.InitializeResult()
				is.Equal(init.ServerInfo.Name, "leaguectl")
				is.True(init.Capabilities.Tools != nil) // tools are offered
				is.True(init.Instructions != "")
			})
			t.Run("tools/list", func(t *testing.T) {
				is := is.New(t)
				res, err := cs.ListTools(t.Context(), nil)
				is.NoErr(err)
				var names []string
				for _, tool := range res.Tools {
					names = append(names, tool.Name)
					is.True(tool.Description != "") // says what it does
					in, ok := tool.InputSchema.(map[string]any)
					is.True(ok)
					is.Equal(in["type"], "object") // input schema
					props, _ := in["properties"].(map[string]any)
					is.True(len(props) > 0)
					for _, p := range props {
						d, _ := p.(map[string]any)["description"].(string)
						is.True(d != "") // every input is described
					}
					out, ok := tool.OutputSchema.(map[string]any)
					is.True(ok)
					is.Equal(out["type"], "object") // output schema
				}
				slices.Sort(names)
				is.Equal(names, []string{"check", "next_match", "schedule", "simulate", "standings"})
			})
			t.Run("simulate", func(t *testing.T) {
				res := callTool(t, cs, "simulate", map[string]any{"players": 4, "seed": 1})
				sameLeague(t, structured[simulateResult](t, res), want)
			})
		})
	}
}

// TestMCPSimulate: simulate takes simulate's options as the command does,
// strategies as a list or comma-separated, and refuses what the command
// refuses, as a tool error that says why.
func TestMCPSimulate(t *testing.T) {
	cs := memSession(t, newMCPTestServer(t))
	t.Run("options", func(t *testing.T) {
		want := commandJSON[simulateResult](t, "simulate", "--players", "5", "--seed", "7", "--strategy", "adaptive,winstay",
			"--referees", "2", "--max-concurrent-matches", "1", "--transport", "http", "--fault", "P02=decline", "--output", "json")
		for _, strategies := range [][]string{{"adaptive,winstay"}, {"adaptive", "winstay"}} {
			res := callTool(t, cs, "simulate", map[string]any{"players": 5, "seed": 7, "strategies": strategies,
				"referees": 2, "max_concurrent_matches": 1, "transport": "http", "faults": []string{"P02=decline"}})
			sameLeague(t, structured[simulateResult](t, res), want)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		is := is.New(t)
		got := structured[simulateResult](t, callTool(t, cs, "simulate", nil))
		is.Equal(len(got.FinalStandings), 4) // --players 4
		is.True(got.Seed <= maxExactSeed)    // a random seed, which JSON keeps
		again := commandJSON[simulateResult](t, "simulate", "--seed", fmt.Sprint(got.Seed), "--output", "json")
		sameLeague(t, got, again) // the seed it returns replays it
	})
	for _, c := range []struct {
		args map[string]any
		msg  string
	}{
		{map[string]any{"players": 1}, "--players must be at least 2, got 1"},
		{map[string]any{"players": maxSimulatedPlayers + 1}, fmt.Sprintf("--players must be at most %d", maxSimulatedPlayers)},
		{map[string]any{"players": "four"}, `validating "arguments"`},
		{map[string]any{"referees": 0}, "--referees must be at least 1, got 0"},
		{map[string]any{"strategies": []string{"nope"}}, `"nope"`},
		{map[string]any{"strategies": []string{}}, "--strategy needs at least one strategy"},
		{map[string]any{"transport": "tcp"}, "transport"},
		{map[string]any{"faults": []string{"P09=timeout"}}, `"P09" is not a player of this league`},
		{map[string]any{"seed": -1}, "seed"},
		{map[string]any{"seed": uint64(maxExactSeed + 2)}, "seed"}, // would be read rounded
		{map[string]any{"exec": []string{"P01=sh"}}, `"exec"`},     // no programs from an assistant
	} {
		t.Run(fmt.Sprint(c.args), func(t *testing.T) {
			is := is.New(t)
			msg := toolError(t, callTool(t, cs, "simulate", c.args))
			is.True(strings.Contains(msg, c.msg)) // says what is wrong
		})
	}
}

// mcpLeague serves over loopback HTTP a manager, whose admin token is
// the-admin, of a started league of four players (P001…) and a referee,
// and returns its endpoint. Nothing is played: its schedule is PENDING.
func mcpLeague(t *testing.T) string {
	t.Helper()
	net := transporttest.HTTP()
	mgr := league.New(league.Options{LeagueID: config.Default().LeagueID, AdminToken: "the-admin"}, net.Client(5*time.Second),
		slog.New(slog.DiscardHandler))
	ep := net.Serve(t, "league_manager", mgr.Handler())
	c := net.Client(5 * time.Second)
	env := func(mt protocol.MessageType, sender string) protocol.Envelope {
		return protocol.Envelope{Protocol: protocol.Version, MessageType: mt, Sender: sender,
			Timestamp: "2025-01-15T10:30:00Z", ConversationID: "conv-register"}
	}
	ref := &protocol.RefereeRegisterRequest{Envelope: env(protocol.TypeRefereeRegisterRequest, "referee:REF01"),
		RefereeMeta: &protocol.RefereeMeta{DisplayName: "Referee", Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd},
			ContactEndpoint: "http://127.0.0.1:1/referee", MaxConcurrentMatches: 1}}
	if err := c.Call(t.Context(), ep, protocol.MethodRegisterReferee, ref, nil); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("P%03d", i)
		p := &protocol.LeagueRegisterRequest{Envelope: env(protocol.TypeLeagueRegisterRequest, "player:"+id),
			PlayerMeta: &protocol.PlayerMeta{DisplayName: "Player " + id, Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd},
				ContactEndpoint: "http://127.0.0.1:1/" + id}}
		if err := c.Call(t.Context(), ep, protocol.MethodRegisterPlayer, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := mgr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return ep
}

// queryData is the data of what `leaguectl query … --output json` prints.
func queryData[T any](t *testing.T, args ...string) T {
	t.Helper()
	resp := commandJSON[struct {
		Data jsontext.Value `json:"data"`
	}](t, append(append([]string{"query"}, args...), "--output", "json")...)
	var v T
	if err := json.Unmarshal(resp.Data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMCPQueries: standings, schedule and next_match ask a real manager
// what `leaguectl query` asks it, and return the data it prints; the
// manager's refusals and bad inputs are tool errors.
func TestMCPQueries(t *testing.T) {
	ep := mcpLeague(t)
	cs := memSession(t, newMCPTestServer(t))
	admin := []string{"--manager", ep, "--admin-token", "the-admin"}
	call := func(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		args["manager"] = ep
		if _, ok := args["admin_token"]; !ok {
			args["admin_token"] = "the-admin"
		}
		return callTool(t, cs, tool, args)
	}

	t.Run("standings", func(t *testing.T) {
		is := is.New(t)
		got := structured[standingsData](t, call(t, "standings", map[string]any{}))
		is.Equal(got, queryData[standingsData](t, append([]string{"standings"}, admin...)...))
		is.Equal(got.RoundID, 0)        // before the first round
		is.Equal(len(got.Standings), 4) // every player
	})
	t.Run("schedule", func(t *testing.T) {
		is := is.New(t)
		got := structured[league.ScheduleData](t, call(t, "schedule", map[string]any{}))
		is.Equal(got, queryData[league.ScheduleData](t, append([]string{"schedule"}, admin...)...))
		is.Equal(len(got.Rounds), 3) // every round
		for i, r := range got.Rounds {
			is.Equal(r.RoundID, i+1)
			is.Equal(len(r.Matches), 2)
			is.Equal(r.Matches[0].Status, "PENDING")
		}
	})
	t.Run("a round of the schedule", func(t *testing.T) {
		is := is.New(t)
		got := structured[league.ScheduleData](t, call(t, "schedule", map[string]any{"round": 2}))
		is.Equal(got, queryData[league.ScheduleData](t, append([]string{"schedule", "--round", "2"}, admin...)...))
		is.Equal(len(got.Rounds), 1)
		is.Equal(got.Rounds[0].RoundID, 2)
	})
	t.Run("a player's schedule", func(t *testing.T) {
		is := is.New(t)
		got := structured[league.ScheduleData](t, call(t, "schedule", map[string]any{"player": "P002"}))
		n := 0
		for _, r := range got.Rounds {
			for _, m := range r.Matches {
				is.True(m.PlayerAID == "P002" || m.PlayerBID == "P002") // only P002's
				n++
			}
		}
		is.Equal(n, 3) // one a round
	})
	t.Run("next_match", func(t *testing.T) {
		is := is.New(t)
		got := structured[nextMatchData](t, call(t, "next_match", map[string]any{"player": "P001"}))
		is.Equal(got, queryData[nextMatchData](t, append([]string{"next-match", "--player", "P001"}, admin...)...))
		is.True(got.NextMatch != nil)
		is.Equal(got.NextMatch.RoundID, 1)
		is.Equal(got.State, league.StateRunning)
	})
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		msg  string
	}{
		{"no admin token", "standings", map[string]any{"admin_token": ""}, "E003"},
		{"wrong admin token", "standings", map[string]any{"admin_token": "guess"}, "E012"},
		{"unknown player", "next_match", map[string]any{"player": "P009"}, "E004"},
		{"no player", "next_match", map[string]any{}, "player"},
		{"no round 9", "schedule", map[string]any{"round": 9}, "E002"},
		{"negative round", "schedule", map[string]any{"round": -1}, "--round must be 1 or more, got -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			msg := toolError(t, call(t, c.tool, c.args))
			is.True(strings.Contains(msg, c.msg)) // says why
		})
	}
	t.Run("not a manager URL", func(t *testing.T) {
		is := is.New(t)
		msg := toolError(t, callTool(t, cs, "standings", map[string]any{"manager": "ftp://127.0.0.1/mcp"}))
		is.True(strings.Contains(msg, "must be an http:// or https:// URL"))
	})
	t.Run("nobody there", func(t *testing.T) {
		is := is.New(t)
		msg := toolError(t, callTool(t, cs, "standings", map[string]any{"manager": transporttest.DeadEndpoint(t)}))
		is.True(strings.Contains(msg, "unreachable"))
	})
}

// mcpPlayer serves a player on a loopback port until the test ends.
func mcpPlayer(t *testing.T, fault player.Fault) string {
	t.Helper()
	p := player.New(player.Options{RequestedID: "P01", Fault: fault}, nil, nil)
	l, err := httprpc.Serve("127.0.0.1:0", p.Handler(), httprpc.ServerConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = l.Shutdown(ctx)
	})
	return l.Endpoint()
}

// TestMCPCheck: check grades a player as `leaguectl check --output json`
// does; failed checks are the report's, and an agent that cannot be
// reached, or a bad input, a tool error.
func TestMCPCheck(t *testing.T) {
	cs := memSession(t, newMCPTestServer(t))
	names := func(r checkJSON) (out []string) {
		for _, c := range r.Checks {
			out = append(out, fmt.Sprintf("%s %s %t %t", c.Name, c.Rule, c.Passed, c.BreaksLeague))
		}
		return out
	}
	for _, c := range []struct {
		name   string
		fault  player.Fault
		failed bool
	}{
		{"a good player", player.Fault{}, false},
		{"a player that answers nonsense", player.Fault{Kind: player.FaultInvalid}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			ep := mcpPlayer(t, c.fault)
			got := structured[checkJSON](t, callTool(t, cs, "check", map[string]any{"role": "player", "url": ep}))
			var want checkJSON
			var out bytes.Buffer
			_ = Run(t.Context(), []string{"check", "player", ep, "--output", "json"}, &out, io.Discard) // exit 1 on a failure
			is.NoErr(json.Unmarshal(out.Bytes(), &want))
			is.Equal(got.Role, "player")
			is.Equal(got.Target, ep)
			is.Equal(got.Passed, want.Passed)
			is.Equal(got.Failed, want.Failed)
			is.Equal(got.Breaking, want.Breaking)
			is.Equal(names(got), names(want)) // the same checks, the same grades
			is.Equal(got.Failed > 0, c.failed)
		})
	}
	for _, c := range []struct {
		name string
		args map[string]any
		msg  string
	}{
		{"nobody there", map[string]any{"role": "player", "url": transporttest.DeadEndpoint(t)}, "cannot be reached"},
		{"no such role", map[string]any{"role": "spectator", "url": "http://127.0.0.1:1/mcp"}, "role"},
		{"not a URL", map[string]any{"role": "player", "url": "127.0.0.1:8101"}, "URL must be an http:// or https:// URL"},
		{"not a duration", map[string]any{"role": "player", "url": "http://127.0.0.1:1/mcp", "timeout": "soon"},
			`timeout must be a duration such as 30s, got "soon"`},
		{"not an id", map[string]any{"role": "player", "url": "http://127.0.0.1:1/mcp", "as": []string{"referee=a b"}}, "--as"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			msg := toolError(t, callTool(t, cs, "check", c.args))
			is.True(strings.Contains(msg, c.msg)) // says why
		})
	}
}

// watchCalls tells of each tools/call srv starts, and gives the result it
// ends with.
func watchCalls(srv *mcp.Server) (started <-chan struct{}, ended <-chan mcp.Result) {
	s, e := make(chan struct{}, 1), make(chan mcp.Result, 1)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			s <- struct{}{}
			res, err := next(ctx, method, req)
			e <- res
			return res, err
		}
	})
	return s, e
}

// TestMCPCancel: a league that would take far longer than the test ends
// as soon as its call is cancelled: by the client, by the command's end
// (SIGINT), or over HTTP by the client's hanging up. The call ends with
// an error.
func TestMCPCancel(t *testing.T) {
	// Every match of P02 waits out the join timeout and its retries.
	slow := map[string]any{"players": 6, "seed": 1, "faults": []string{"P02=timeout"}}
	for _, c := range []struct {
		name        string
		http        bool
		commandEnds bool // the server's context ends, not the call's
	}{
		{name: "client cancels"},
		{name: "command ends", commandEnds: true},
		{name: "client hangs up", http: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			srvCtx, cancelServer := context.WithCancel(t.Context())
			defer cancelServer()
			tools := &mcpTools{ro: &rootOptions{stdout: io.Discard, stderr: io.Discard}, cfg: config.Default()}
			srv := newMCPServer(srvCtx, tools, slog.New(slog.DiscardHandler))
			started, ended := watchCalls(srv)
			var cs *mcp.ClientSession
			if c.http {
				ts := httptest.NewServer(mcpHTTPHandler(srv, slog.New(slog.DiscardHandler)))
				t.Cleanup(ts.Close)
				cs = httpSession(t, ts.URL+httprpc.Path)
			} else {
				cs = memSession(t, srv)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			returned := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "simulate", Arguments: slow})
				returned <- err
			}()
			<-started
			if c.commandEnds {
				cancelServer()
			} else {
				cancel()
			}
			select {
			case res := <-ended:
				r, ok := res.(*mcp.CallToolResult)
				is.True(ok)
				is.True(r.IsError)                                              // the league did not finish
				is.True(strings.Contains(resultText(t, r), "context canceled")) // it was cancelled
			case <-time.After(mcpEndWait):
				t.Fatal("the call went on")
			}
			select {
			case <-returned:
			case <-time.After(mcpEndWait):
				t.Fatal("the client's call did not return")
			}
		})
	}
}

// TestMCPHTTP: leaguectl mcp --http serves GET /health beside /mcp, and
// refuses what is not a POST of JSON, a body over its limit, and a page
// of another site.
func TestMCPHTTP(t *testing.T) {
	endpoint := serveMCPCmd(t)
	base := strings.TrimSuffix(endpoint, httprpc.Path)
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},` +
		`"clientInfo":{"name":"curl","version":"1"}}}`
	// What the SDK panicked on (guardCalls): one call must not end them all.
	nullArguments := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"simulate","arguments":null}}`
	for _, c := range []struct {
		name, method, url, body string
		header                  map[string]string
		status                  int
		answer                  string // in the body, when set
	}{
		{"health", http.MethodGet, base + httprpc.HealthPath, "", nil, http.StatusOK, `{"status":"ok"}`},
		{"initialize", http.MethodPost, endpoint, initialize, nil, http.StatusOK, `"serverInfo":{"name":"leaguectl"`},
		{"arguments null", http.MethodPost, endpoint, nullArguments, nil, http.StatusOK, `"final_standings":[`},
		{"arguments null again", http.MethodPost, endpoint, nullArguments, nil, http.StatusOK, `"final_standings":[`},
		{"a GET", http.MethodGet, endpoint, "", nil, http.StatusMethodNotAllowed, ""},
		{"not JSON", http.MethodPost, endpoint, initialize, map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType, ""},
		{"too big", http.MethodPost, endpoint, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` +
			strings.Repeat("x", httprpc.DefaultMaxBodyBytes) + `"}}`, nil, http.StatusRequestEntityTooLarge, ""},
		{"another site", http.MethodPost, endpoint, initialize, map[string]string{"Sec-Fetch-Site": "cross-site",
			"Origin": "https://evil.example"}, http.StatusForbidden, ""},
		{"another host name", http.MethodPost, endpoint, initialize, map[string]string{"Host": "evil.example"}, http.StatusForbidden, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequestWithContext(t.Context(), c.method, c.url, strings.NewReader(c.body))
			is.NoErr(err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			if h, ok := c.header["Host"]; ok {
				req.Host = h // DNS rebinding: a name that led to loopback
			}
			resp, err := hc.Do(req)
			is.NoErr(err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			is.NoErr(err)
			is.Equal(resp.StatusCode, c.status)
			is.True(strings.Contains(string(body), c.answer)) // the answer
			is.True(!strings.Contains(string(body), `"isError":true`))
		})
	}
}
