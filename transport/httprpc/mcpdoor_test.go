package httprpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// parityMux serves what a player serves to MCP's tools/list: the parity
// call, answered even, refusing a wrong token with E012, and a tool of
// its own that reports the peer it was called from.
func parityMux() *transport.Mux {
	m := transport.NewMux(nil)
	m.HandleFunc(string(protocol.TypeChooseParityCall), func(_ context.Context, r *transport.Request) (any, error) {
		c := r.Msg.(*protocol.ChooseParityCall)
		if c.AuthToken != "tok" {
			return nil, protocol.Errorf(protocol.ErrAuthTokenInvalid, "not the ticket")
		}
		return &protocol.ChooseParityResponse{Envelope: protocol.Envelope{Protocol: protocol.Version,
			MessageType: protocol.TypeChooseParityResponse, Sender: "player:P01", ConversationID: c.ConversationID},
			MatchID: c.MatchID, PlayerID: c.PlayerID, ParityChoice: protocol.Even}, nil
	})
	m.HandleFunc("whoami", func(_ context.Context, r *transport.Request) (any, error) {
		return map[string]any{"network": r.Peer.Network, "loopback": r.Peer.Loopback, "mcp": r.MCP}, nil
	})
	return m
}

func serveMCP(t *testing.T, cfg httprpc.ServerConfig) *httprpc.Listener {
	t.Helper()
	l, err := httprpc.Serve("127.0.0.1:0", parityMux(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func connect(t *testing.T, ctx context.Context, endpoint string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var parityArgs = map[string]any{"protocol": "league.v2", "message_type": "CHOOSE_PARITY_CALL", "sender": "referee:REF01",
	"timestamp": "2026-01-01T00:00:00Z", "conversation_id": "c1", "auth_token": "tok",
	"match_id": "R1M1", "player_id": "P01", "game_type": "even_odd", "deadline": "2026-01-01T00:00:30Z",
	"context": map[string]any{"opponent_id": "P02", "round_id": 1}}

// TestMCPDoor: an SDK client initializes a session at /mcp, lists the
// served methods as tools (league messages by their tool names) with
// object input schemas that take any other property, and calls them:
// the reply's bytes are the text content and the structured content, a
// league error is the JSON-RPC error of the plain path, and the handler
// sees the call as MCP from its real peer.
func TestMCPDoor(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	l := serveMCP(t, httprpc.ServerConfig{})
	s := connect(t, ctx, l.Endpoint())

	is.Equal(s.InitializeResult().ServerInfo.Name, "leaguectl")
	list, err := s.ListTools(ctx, nil)
	is.NoErr(err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		schema, _ := json.Marshal(tl.InputSchema)
		is.True(strings.HasPrefix(string(schema), `{"type":"object"`) || strings.Contains(string(schema), `"type":"object"`))
		is.True(strings.Contains(string(schema), `"additionalProperties":true`) || strings.Contains(string(schema), `"additionalProperties":{}`))
		is.True(tl.Description != "")
	}
	is.Equal(names, []string{protocol.MethodChooseParity, "whoami"})

	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: protocol.MethodChooseParity, Arguments: parityArgs})
	is.NoErr(err)
	is.True(!res.IsError)
	text := res.Content[0].(*mcp.TextContent).Text
	is.True(strings.Contains(text, `"parity_choice":"even"`))
	var fromText any
	is.NoErr(json.Unmarshal([]byte(text), &fromText))
	is.Equal(res.StructuredContent, fromText) // the same reply, twice

	// The plain reply to the same params, over the plain path.
	plain, err := httprpc.NewClient(httprpc.ClientConfig{}).Post(ctx, l.Endpoint(),
		must(json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "choose_parity", "params": parityArgs})))
	is.NoErr(err)
	is.True(strings.Contains(string(plain), `"result":`+text))

	bad := map[string]any{}
	for k, v := range parityArgs {
		bad[k] = v
	}
	bad["auth_token"] = "stranger"
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: protocol.MethodChooseParity, Arguments: bad})
	var we *jsonrpc.Error
	is.True(errors.As(err, &we))
	is.Equal(we.Code, int64(-32001))
	is.True(strings.Contains(string(we.Data), `"error_code":"E012"`))

	who, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	is.NoErr(err)
	is.Equal(who.Content[0].(*mcp.TextContent).Text, `{"loopback":true,"mcp":true,"network":"http"}`)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestMCPDoorLeavesPlainPath: sessionless tools/call, ping and batches
// stay on the league path with their exact bytes, and an MCP request
// without the headers MCP asks for is answered a JSON-RPC error, not the
// SDK's plain text.
func TestMCPDoorLeavesPlainPath(t *testing.T) {
	is := is.New(t)
	l := serveMCP(t, httprpc.ServerConfig{})
	post := func(body string, header ...string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, l.Endpoint(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := oneShot(req)
		is.NoErr(err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	is.Equal(status, 200)
	is.Equal(body, `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{\"loopback\":true,\"mcp\":true,\"network\":\"http\"}"}]},"id":7}`)
	status, body = post(`[{"jsonrpc":"2.0","id":1,"method":"whoami"},{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}]`)
	is.Equal(status, 200)
	is.True(strings.HasPrefix(body, `[{"jsonrpc":"2.0","result":{"loopback":true,"mcp":false`)) // a batch is the league's
	is.True(strings.Contains(body, `{"jsonrpc":"2.0","error":{"code":-32601`))

	status, body = post(initialize("2024-11-05"))
	is.Equal(status, http.StatusBadRequest) // no Accept of event streams
	is.Equal(body, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"MCP: Accept must contain both 'application/json' and 'text/event-stream'"},"id":null}`)
	status, body = post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream", "Mcp-Session-Id", "nope")
	is.Equal(status, http.StatusNotFound)
	is.Equal(body, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"MCP: session not found"},"id":null}`)
}

// TestMCPDoorProtocolVersions: initialize negotiates 2024-11-05, the
// revision the league's documents name, and each later one the SDK
// speaks with sessions.
func TestMCPDoorProtocolVersions(t *testing.T) {
	is := is.New(t)
	l := serveMCP(t, httprpc.ServerConfig{})
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		status, header, body := mcpPost(t, t.Context(), l.Endpoint(), "", initialize(v))
		is.Equal(status, 200)
		is.True(header.Get("Mcp-Session-Id") != "")
		is.True(strings.Contains(body, `"protocolVersion":"`+v+`"`))
	}
}

// TestMCPSessionsPerAddress: one address opens at most
// MaxSessionsPerAddress sessions (loopback held to it by LimitLoopback);
// one more is refused E014 as a JSON-RPC error, and a closed session
// makes room again.
func TestMCPSessionsPerAddress(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	l := serveMCP(t, httprpc.ServerConfig{LimitLoopback: true, MCP: httprpc.MCPConfig{MaxSessionsPerAddress: 2}})
	first := connect(t, ctx, l.Endpoint())
	connect(t, ctx, l.Endpoint())
	status, _, body := mcpPost(t, t.Context(), l.Endpoint(), "", initialize("2025-06-18"))
	is.Equal(status, http.StatusTooManyRequests)
	is.Equal(body, `{"jsonrpc":"2.0","error":{"code":-32014,"message":"RATE_LIMIT_EXCEEDED: 2 MCP sessions are open from this address, its most: close one (DELETE /mcp), or try again later","data":{"error_code":"E014","error_description":"RATE_LIMIT_EXCEEDED","retryable":true}},"id":null}`)
	is.NoErr(first.Close()) // DELETE /mcp
	connect(t, ctx, l.Endpoint())
}

// TestMCPDNSRebinding: a request to a loopback listener whose Host is
// not a loopback name is refused (a page in a browser cannot reach a
// local agent through a name it controls), unless BehindProxy says a
// proxy on this host forwards to us.
func TestMCPDNSRebinding(t *testing.T) {
	is := is.New(t)
	for _, behind := range []bool{false, true} {
		l := serveMCP(t, httprpc.ServerConfig{MCP: httprpc.MCPConfig{BehindProxy: behind}})
		req, _ := http.NewRequest(http.MethodPost, l.Endpoint(), strings.NewReader(initialize("2025-06-18")))
		req.Host = "evil.example:80"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := oneShot(req)
		is.NoErr(err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if behind {
			is.Equal(resp.StatusCode, 200)
			continue
		}
		is.Equal(resp.StatusCode, http.StatusForbidden)
		is.Equal(string(b), `{"jsonrpc":"2.0","error":{"code":-32600,"message":"MCP: Forbidden: invalid Host header \"evil.example:80\""},"id":null}`)
	}
}

// oneShot sends req on a connection of its own, closed after it.
func oneShot(req *http.Request) (*http.Response, error) {
	return (&http.Transport{DisableKeepAlives: true}).RoundTrip(req)
}

// initialize is an MCP initialize request of revision v.
func initialize(v string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v +
		`","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
}

// session opens an MCP session at endpoint with raw requests, and returns
// its id.
func session(t *testing.T, endpoint string) string {
	t.Helper()
	status, header, _ := mcpPost(t, t.Context(), endpoint, "", initialize("2025-03-26"))
	id := header.Get("Mcp-Session-Id")
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session %q", status, id)
	}
	mcpPost(t, t.Context(), endpoint, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

// mcpPost POSTs body to endpoint as an MCP client does, in session when
// one is given.
func mcpPost(t *testing.T, ctx context.Context, endpoint, session, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := oneShot(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestMCPBatchRefused: a batch through the MCP door, in a session, is
// refused whole, none of its calls made: it would be as many calls at
// once as it holds, with a reply of any size, where the plain path takes
// at most 100 one after the other within 4 MiB.
func TestMCPBatchRefused(t *testing.T) {
	is := is.New(t)
	l := serveMCP(t, httprpc.ServerConfig{})
	id := session(t, l.Endpoint())
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	batch := "[" + strings.Join([]string{fmt.Sprintf(call, 1), fmt.Sprintf(call, 2)}, ",") + "]"
	status, _, body := mcpPost(t, t.Context(), l.Endpoint(), id, batch)
	is.Equal(status, http.StatusBadRequest)
	is.Equal(body, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"MCP: a batch is not taken through MCP: send one request a POST"},"id":null}`)
	status, _, body = mcpPost(t, t.Context(), l.Endpoint(), id, fmt.Sprintf(call, 3))
	is.Equal(status, http.StatusOK) // one request a POST is served
	is.True(strings.Contains(body, `\"mcp\":true`))
}

// TestMCPCallEndsWithItsRequest: a tool call through the MCP door ends
// when the POST that brought it ends (its client gone), as a plain call
// does, although the SDK runs it under its session's context: a client
// that sends calls that wait and hangs up cannot pile them up.
func TestMCPCallEndsWithItsRequest(t *testing.T) {
	is := is.New(t)
	started, ended := make(chan struct{}), make(chan struct{})
	m := transport.NewMux(nil)
	m.HandleFunc("wait", func(ctx context.Context, _ *transport.Request) (any, error) {
		close(started)
		<-ctx.Done()
		close(ended)
		return nil, ctx.Err()
	})
	l, err := httprpc.Serve("127.0.0.1:0", m, httprpc.ServerConfig{}, nil)
	is.NoErr(err)
	t.Cleanup(func() { _ = l.Close() })
	id := session(t, l.Endpoint())
	ctx, hangUp := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		mcpPost(t, ctx, l.Endpoint(), id, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	}()
	<-started
	hangUp()
	<-done
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the call went on 30 s after its client hung up")
	}
}

// TestMCPEventStreamEndsAtWriteTimeout: a session's GET event stream ends
// at the server's write timeout, as every request does; the client opens
// another.
func TestMCPEventStreamEndsAtWriteTimeout(t *testing.T) {
	is := is.New(t)
	// It bounds the session's setup and the stream's head too, which must
	// be written within it on a loaded machine.
	const writeTimeout = 2 * time.Second
	l := serveMCP(t, httprpc.ServerConfig{WriteTimeout: writeTimeout})
	id := session(t, l.Endpoint())
	req, err := http.NewRequest(http.MethodGet, l.Endpoint(), nil)
	is.NoErr(err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := oneShot(req)
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK)
	is.Equal(resp.Header.Get("Content-Type"), "text/event-stream")
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, resp.Body); ended <- err }()
	select {
	case <-ended: // the stream ended
	case <-time.After(60 * time.Second):
		t.Fatalf("the event stream was open 60 s past a %v write timeout", writeTimeout)
	}
}

// TestWebPagesRefused: a web page in a browser on the agent's host cannot
// call it through either door: not from another site (a form or a
// text/plain fetch needs no CORS preflight), and not from its own origin
// once its name is rebound to 127.0.0.1 (DNS rebinding), since a loopback
// caller passes the operator's checks on a manager without an admin
// token. League clients, which send neither Origin nor Sec-Fetch-Site,
// may name a loopback address by any host name; and BehindProxy lets a
// proxy on this host forward with its public name.
func TestWebPagesRefused(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":1,"method":"whoami"}`
	for _, tc := range []struct {
		name        string
		behind      bool
		host        string
		header      []string
		status      int
		refusalText string
	}{
		{"another site", false, "", []string{"Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"}, 403,
			"a web page of another site may not call this agent"},
		{"another site, no fetch metadata", false, "", []string{"Origin", "http://evil.example"}, 403,
			"a web page of another site may not call this agent"},
		{"rebound name", false, "rebound.evil.example", []string{"Origin", "http://rebound.evil.example", "Sec-Fetch-Site", "same-origin"}, 403,
			`a web page may call this agent at a loopback address only by a loopback name, not \"rebound.evil.example\"`},
		{"page on localhost", false, "localhost", []string{"Origin", "http://localhost", "Sec-Fetch-Site", "same-origin"}, 200, ""},
		{"league client by host name", false, "mybox", nil, 200, ""},
		{"behind a proxy", true, "league.example.org", []string{"Origin", "https://league.example.org", "Sec-Fetch-Site", "same-origin"}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			l := serveMCP(t, httprpc.ServerConfig{MCP: httprpc.MCPConfig{BehindProxy: tc.behind}})
			req, err := http.NewRequest(http.MethodPost, l.Endpoint(), strings.NewReader(call))
			is.NoErr(err)
			req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
			if tc.host != "" {
				req.Host = tc.host
			}
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			resp, err := oneShot(req)
			is.NoErr(err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			is.Equal(resp.StatusCode, tc.status)
			if tc.status == 403 {
				is.Equal(string(b), `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: `+tc.refusalText+`"},"id":null}`)
			}
		})
	}
}
