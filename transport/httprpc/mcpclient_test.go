package httprpc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/matryer/is"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// mcpAgent is an agent that speaks only MCP, built with the SDK as other
// people build theirs: its tools behind mcp.NewStreamableHTTPHandler,
// nothing else at /mcp.
type mcpAgent struct {
	url  string
	stop func() // closes the server and every connection to it
	// inits counts initialize requests; plain counts POSTs that are no
	// initialize and carry no session (our plain calls, refused).
	inits, plain atomic.Int64
	// contentTypes are the content types of the answers to tool calls.
	mu           sync.Mutex
	called       []string // "tool sender", in the order served
	session      string   // the last Mcp-Session-Id a request carried
	contentTypes []string
}

// serveMCPAgent starts an MCP-only agent on a free loopback port.
// jsonResponse answers each call with application/json; without it, the
// SDK's default, with a text/event-stream.
func serveMCPAgent(t *testing.T, jsonResponse bool) *mcpAgent {
	t.Helper()
	return serveMCPAgentWith(t, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
}

func serveMCPAgentWith(t *testing.T, opts *mcp.StreamableHTTPOptions) *mcpAgent {
	t.Helper()
	a := &mcpAgent{}
	server := mcp.NewServer(&mcp.Implementation{Name: "mcp-only-agent", Version: "1"}, nil)
	object := &jsonschema.Schema{Type: "object"}
	reply := func(v any) (*mcp.CallToolResult, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	}
	type args struct {
		Sender         string `json:"sender"`
		ConversationID string `json:"conversation_id"`
		Size           int    `json:"size"`
	}
	argsOf := func(req *mcp.CallToolRequest) args {
		var x args
		_ = json.Unmarshal(req.Params.Arguments, &x)
		a.mu.Lock()
		a.called = append(a.called, req.Params.Name+" "+x.Sender)
		a.mu.Unlock()
		return x
	}
	server.AddTool(&mcp.Tool{Name: "register_player", InputSchema: object},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			x := argsOf(req)
			return reply(map[string]any{"message_type": "LEAGUE_REGISTER_RESPONSE", "status": "ACCEPTED",
				"player_id": "P07", "conversation_id": x.ConversationID})
		})
	server.AddTool(&mcp.Tool{Name: "choose_parity", InputSchema: object},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			x := argsOf(req)
			return reply(map[string]any{"message_type": "CHOOSE_PARITY_RESPONSE", "parity_choice": "even",
				"player_id": x.Sender})
		})
	server.AddTool(&mcp.Tool{Name: "report_match_result", InputSchema: object},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			argsOf(req)
			return nil, &jsonrpc.Error{Code: -32001, Message: "AUTH_TOKEN_INVALID: token does not match sender",
				Data: []byte(`{"error_code":"E012","error_description":"AUTH_TOKEN_INVALID"}`)}
		})
	// dialect-b's name of handle_game_invitation.
	server.AddTool(&mcp.Tool{Name: "receive_game_invitation", InputSchema: object},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			x := argsOf(req)
			return reply(map[string]any{"message_type": "GAME_JOIN_ACK", "accept": true, "player_id": x.Sender})
		})
	server.AddTool(&mcp.Tool{Name: "big", InputSchema: object},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			x := argsOf(req)
			return reply(map[string]any{"blob": strings.Repeat("x", x.Size)})
		})
	release := make(chan struct{})
	server.AddTool(&mcp.Tool{Name: "stall", InputSchema: object},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			argsOf(req)
			select {
			case <-ctx.Done():
			case <-release:
			}
			return reply(map[string]any{"status": "late"})
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		sid := r.Header.Get("Mcp-Session-Id")
		switch {
		case m.Method == "initialize":
			a.inits.Add(1)
		case r.Method == http.MethodPost && sid == "":
			a.plain.Add(1)
		}
		if sid != "" {
			a.mu.Lock()
			a.session = sid
			a.mu.Unlock()
		}
		if m.Method == "tools/call" {
			w = &sniffer{ResponseWriter: w, a: a}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before srv.Close: a stalled tool must end
	a.url = srv.URL + "/mcp"
	a.stop = func() {
		once.Do(func() { close(release) })
		srv.Close()
	}
	return a
}

// sniffer notes the content type of an answer, and flushes as the
// writer it wraps does, for a stream.
type sniffer struct {
	http.ResponseWriter
	a    *mcpAgent
	seen bool
}

func (s *sniffer) WriteHeader(code int) {
	if !s.seen {
		s.seen = true
		s.a.mu.Lock()
		s.a.contentTypes = append(s.a.contentTypes, s.Header().Get("Content-Type"))
		s.a.mu.Unlock()
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sniffer) Write(b []byte) (int, error) {
	if !s.seen {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func (s *sniffer) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (a *mcpAgent) calledTools() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.called...)
}

// endSession ends the agent's session as a restart or an idle timeout
// would: the next request that carries it is answered 404.
func (a *mcpAgent) endSession(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	sid := a.session
	a.mu.Unlock()
	if sid == "" {
		t.Fatal("no session to end")
	}
	req, err := http.NewRequest(http.MethodDelete, a.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := (&http.Transport{DisableKeepAlives: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE of the session: HTTP %d", resp.StatusCode)
	}
}

// mcpCaller is the Client our agents call with, over a new HTTP client.
func mcpCaller(t *testing.T, cfg httprpc.ClientConfig, timeout time.Duration) *transport.Client {
	t.Helper()
	hc := httprpc.NewClient(cfg)
	t.Cleanup(func() { _ = hc.Close() })
	return transport.NewClient(hc, timeout)
}

type regReply struct {
	MessageType    string `json:"message_type"`
	Status         string `json:"status"`
	PlayerID       string `json:"player_id"`
	ConversationID string `json:"conversation_id"`
}

type parityReply struct {
	ParityChoice string `json:"parity_choice"`
	PlayerID     string `json:"player_id"`
}

func registerMCP(ctx context.Context, c *transport.Client, ep, conv string) (regReply, error) {
	var r regReply
	err := c.Call(ctx, ep, "register_player", map[string]any{"sender": "player:P07", "conversation_id": conv}, &r)
	return r, err
}

func TestMCPOnlyAgent(t *testing.T) {
	ctx := context.Background()

	t.Run("a call succeeds and decodes", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		r, err := registerMCP(ctx, c, a.url, "conv-1")
		is.NoErr(err) // the exchange that found MCP is itself answered
		is.Equal(r, regReply{MessageType: "LEAGUE_REGISTER_RESPONSE", Status: "ACCEPTED", PlayerID: "P07", ConversationID: "conv-1"})
		is.Equal(a.inits.Load(), int64(1))
		is.Equal(a.calledTools(), []string{"register_player player:P07"}) // arguments are the params
	})

	t.Run("one session for many calls", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		for i := range 20 {
			r, err := registerMCP(ctx, c, a.url, fmt.Sprint("conv-", i))
			is.NoErr(err)
			is.Equal(r.ConversationID, fmt.Sprint("conv-", i))
		}
		is.Equal(a.inits.Load(), int64(1)) // initialized once
		is.Equal(a.plain.Load(), int64(1)) // only the first call went plain
	})

	t.Run("concurrent calls share the session", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		const n = 24
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				var r parityReply
				err := c.Call(ctx, a.url, "choose_parity", map[string]any{"sender": fmt.Sprint("P", i)}, &r)
				if err == nil && r.PlayerID != fmt.Sprint("P", i) {
					err = fmt.Errorf("reply for %s to P%d", r.PlayerID, i)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			is.NoErr(err)
		}
		is.Equal(a.inits.Load(), int64(1)) // one session, whichever call found MCP first
		is.Equal(len(a.calledTools()), n)
	})

	t.Run("a league error keeps its codes", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		err := c.Call(ctx, a.url, "report_match_result", map[string]any{"sender": "referee:REF01"}, nil)
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok) // a transport.Error
		is.Equal(e.Kind, transport.KindRemote)
		is.Equal(e.RPC.Code, -32001)                                 // the JSON-RPC code as sent
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid) // E012 from data.error_code
		is.Equal(e.Method, "report_match_result")
		is.Equal(a.inits.Load(), int64(1))
	})

	t.Run("a session the agent ended is opened again", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		_, err := registerMCP(ctx, c, a.url, "before")
		is.NoErr(err)
		a.endSession(t)
		r, err := registerMCP(ctx, c, a.url, "after")
		is.NoErr(err) // made again on a new session
		is.Equal(r.ConversationID, "after")
		is.Equal(a.inits.Load(), int64(2))
		_, err = registerMCP(ctx, c, a.url, "later")
		is.NoErr(err)
		is.Equal(a.inits.Load(), int64(2)) // and the new one is kept
	})

	t.Run("a batch is answered in order", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		var r1, r3 parityReply
		calls := []*transport.Call{
			{Method: "choose_parity", Params: map[string]any{"sender": "P01"}, Reply: &r1},
			{Method: "report_match_result", Params: map[string]any{"sender": "P02"}},
			{Method: "choose_parity", Params: map[string]any{"sender": "P03"}, Reply: &r3},
		}
		c.Batch(ctx, a.url, calls...)
		is.NoErr(calls[0].Err)
		is.Equal(protocol.CodeOf(calls[1].Err), protocol.ErrAuthTokenInvalid) // its own outcome
		is.NoErr(calls[2].Err)
		is.Equal(r1.PlayerID, "P01")
		is.Equal(r3.PlayerID, "P03")
		is.Equal(a.calledTools(), []string{"choose_parity P01", "report_match_result P02", "choose_parity P03"})
		is.Equal(a.inits.Load(), int64(1))
	})

	t.Run("an unknown tool name is asked for by dialect-b's", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		var r struct {
			Accept bool `json:"accept"`
		}
		err := c.Call(ctx, a.url, "handle_game_invitation", map[string]any{"sender": "P01"}, &r)
		is.NoErr(err) // "unknown tool" read as -32601, as a plain agent's would be
		is.True(r.Accept)
		is.Equal(a.inits.Load(), int64(1))
	})

	t.Run("a timeout is a timeout, and the session is kept", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		_, err := registerMCP(ctx, c, a.url, "first")
		is.NoErr(err)
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		err = c.Call(short, a.url, "stall", map[string]any{"sender": "P01"}, nil)
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok) // a transport.Error
		is.Equal(e.Kind, transport.KindTimeout)
		is.Equal(protocol.CodeOf(err), protocol.ErrTimeout)
		_, err = registerMCP(ctx, c, a.url, "after")
		is.NoErr(err)
		is.Equal(a.inits.Load(), int64(1))
	})

	t.Run("the response limit holds", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{MaxResponseBytes: 4096}, 5*time.Second)
		_, err := registerMCP(ctx, c, a.url, "first")
		is.NoErr(err)
		err = c.Call(ctx, a.url, "big", map[string]any{"size": 64 << 10}, nil)
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok) // a transport.Error
		is.Equal(e.Kind, transport.KindBadResponse)
		is.True(strings.Contains(err.Error(), "larger than 4096 bytes"))
		_, err = registerMCP(ctx, c, a.url, "after")
		is.NoErr(err) // the next call goes on, on a new session if it had to
	})

	t.Run("a sessionless server", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgentWith(t, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		for _, conv := range []string{"s-1", "s-2", "s-3"} {
			r, err := registerMCP(ctx, c, a.url, conv)
			is.NoErr(err)
			is.Equal(r.ConversationID, conv)
		}
		is.Equal(a.inits.Load(), int64(1)) // initialized once, though the server keeps nothing
	})

	t.Run("an agent gone is unreachable", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, true)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		_, err := registerMCP(ctx, c, a.url, "first")
		is.NoErr(err)
		a.stop()
		_, err = registerMCP(ctx, c, a.url, "after")
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok) // a transport.Error
		is.Equal(e.Kind, transport.KindUnreachable)
		is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // E016, retryable
		is.True(transport.IsRetryable(err))
	})

	t.Run("an SSE reply is read", func(t *testing.T) {
		is := is.New(t)
		a := serveMCPAgent(t, false)
		c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
		for _, conv := range []string{"sse-1", "sse-2"} {
			r, err := registerMCP(ctx, c, a.url, conv)
			is.NoErr(err)
			is.Equal(r.ConversationID, conv)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		is.Equal(a.contentTypes, []string{"text/event-stream", "text/event-stream"}) // streams, not JSON
		is.Equal(a.inits.Load(), int64(1))
	})
}

// TestPlainAgentGetsNoMCP: an agent that speaks plain league.v2 is never
// sent an initialize, even when its errors come with HTTP 400 and speak
// of sessions.
func TestPlainAgentGetsNoMCP(t *testing.T) {
	is := is.New(t)
	var inits, mcpish atomic.Int64
	mux := transport.NewMux(nil)
	mux.HandleFunc("ping", func(context.Context, *transport.Request) (any, error) {
		return map[string]string{"status": "ok"}, nil
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"initialize"`)) {
			inits.Add(1)
		}
		if r.Header.Get("Mcp-Session-Id") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			mcpish.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		if bytes.Contains(body, []byte(`"refuse"`)) {
			// A league error on a 400, whose words could be MCP's.
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"AUTH_TOKEN_INVALID: session id unknown, Accept text/event-stream",`+
				`"data":{"error_code":"E012"}},"id":1}`)
			return
		}
		_, _ = w.Write(transport.ServeJSON(r.Context(), mux, body, transport.Peer{Network: "http"}))
	}))
	defer srv.Close()
	c := mcpCaller(t, httprpc.ClientConfig{}, 5*time.Second)
	for range 3 {
		var r map[string]string
		is.NoErr(c.Call(context.Background(), srv.URL+"/mcp", "ping", nil, &r))
		is.Equal(r["status"], "ok")
	}
	err := c.Call(context.Background(), srv.URL+"/mcp", "refuse", nil, nil)
	is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid) // the league error, as it came
	is.Equal(inits.Load(), int64(0))                             // never an initialize
	is.Equal(mcpish.Load(), int64(0))                            // nor anything else of MCP
}
