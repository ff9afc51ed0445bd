package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

var update = flag.Bool("update", false, "rewrite testdata/jsonrpc/vectors.txt with the current replies")

const fixedTime = "2025-01-15T10:30:00Z"

// callTimeout is the default timeout of clients whose calls are answered
// at once: it only bounds the test, far past what they take on a loaded
// machine.
const callTimeout = 10 * time.Second

// testMux serves a player-like agent plus the methods of the examples of
// the JSON-RPC 2.0 specification, so the spec's own vectors can be played.
type testMux struct {
	*transport.Mux
	release chan struct{} // closes to let a blocked parity call answer
	mu      sync.Mutex
	notes   []string // notifications received
}

func newTestMux() *testMux {
	tm := &testMux{Mux: transport.NewMux(nil), release: make(chan struct{})}
	m := tm.Mux
	m.HandleFunc(string(protocol.TypeGameInvitation), func(ctx context.Context, r *transport.Request) (any, error) {
		inv := r.Msg.(*protocol.GameInvitation)
		yes := true
		return &protocol.GameJoinAck{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeGameJoinAck,
				Sender: "player:P01", Timestamp: fixedTime, ConversationID: inv.ConversationID},
			MatchID: inv.MatchID, PlayerID: "P01", ArrivalTimestamp: fixedTime, Accept: &yes,
		}, nil
	})
	m.HandleFunc(protocol.MethodChooseParity, func(ctx context.Context, r *transport.Request) (any, error) {
		call := r.Msg.(*protocol.ChooseParityCall)
		if call.MatchID == "BLOCK" {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-tm.release:
			}
		}
		return &protocol.ChooseParityResponse{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeChooseParityResponse,
				Sender: "player:P01", Timestamp: fixedTime, ConversationID: call.ConversationID},
			MatchID: call.MatchID, PlayerID: call.PlayerID, ParityChoice: protocol.Even,
		}, nil
	})
	ack := func(ctx context.Context, r *transport.Request) (any, error) {
		return &protocol.Ack{Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: r.Type,
			Sender: "player:P01", Timestamp: fixedTime, ConversationID: r.Env.ConversationID}, Status: "ACK"}, nil
	}
	m.HandleFunc(string(protocol.TypeGameOver), ack)
	m.HandleFunc(string(protocol.TypeRoundAnnouncement), ack)
	m.HandleFunc(protocol.MethodPing, func(ctx context.Context, r *transport.Request) (any, error) {
		return map[string]string{"status": "ok"}, nil
	})
	m.HandleFunc("fail", func(ctx context.Context, r *transport.Request) (any, error) {
		return nil, protocol.Errorf(protocol.ErrAuthTokenInvalid, "token does not match sender")
	})
	m.HandleFunc("boom", func(ctx context.Context, r *transport.Request) (any, error) {
		panic("handler bug")
	})
	// The JSON-RPC 2.0 specification's example methods.
	m.HandleFunc("subtract", func(ctx context.Context, r *transport.Request) (any, error) {
		var a, b float64
		if r.Params.Kind() == '[' {
			var p []float64
			if json.Unmarshal(r.Params, &p) != nil || len(p) != 2 {
				return nil, protocol.NewRPCError(protocol.CodeInvalidParams, "Invalid params")
			}
			a, b = p[0], p[1]
		} else {
			var p struct{ Minuend, Subtrahend float64 }
			if json.Unmarshal(r.Params, &p, json.MatchCaseInsensitiveNames(true)) != nil {
				return nil, protocol.NewRPCError(protocol.CodeInvalidParams, "Invalid params")
			}
			a, b = p.Minuend, p.Subtrahend
		}
		return a - b, nil
	})
	m.HandleFunc("sum", func(ctx context.Context, r *transport.Request) (any, error) {
		var p []float64
		if json.Unmarshal(r.Params, &p) != nil {
			return nil, protocol.NewRPCError(protocol.CodeInvalidParams, "Invalid params")
		}
		s := 0.0
		for _, x := range p {
			s += x
		}
		return s, nil
	})
	m.HandleFunc("get_data", func(ctx context.Context, r *transport.Request) (any, error) {
		return []any{"hello", 5}, nil
	})
	note := func(ctx context.Context, r *transport.Request) (any, error) {
		tm.mu.Lock()
		tm.notes = append(tm.notes, r.Method)
		tm.mu.Unlock()
		return nil, nil
	}
	m.HandleFunc("update", note)
	m.HandleFunc("notify_hello", note)
	m.HandleFunc("notify_sum", note)
	return tm
}

// vector is one request body and the exact reply it must get ("" for none).
type vector struct {
	name, request, reply string
}

const vectorsFile = "../testdata/jsonrpc/vectors.txt"

func readVectors(t *testing.T) []vector {
	t.Helper()
	f, err := os.Open(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "//"):
		case strings.HasPrefix(line, "# "):
			out = append(out, vector{name: strings.TrimPrefix(line, "# ")})
		case strings.HasPrefix(line, "> "):
			out[len(out)-1].request = strings.TrimPrefix(line, "> ")
		case strings.HasPrefix(line, "<"):
			out[len(out)-1].reply = strings.TrimPrefix(strings.TrimPrefix(line, "<"), " ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeVectors(t *testing.T, vs []vector) {
	t.Helper()
	var b strings.Builder
	b.WriteString("// JSON-RPC vectors: '#' names a case, '>' is the request body, '<' the exact reply (empty: none).\n")
	b.WriteString("// Played over both networks by transport/network_test.go; regenerate replies with -update and review the diff.\n\n")
	for _, v := range vs {
		if v.request != "" {
			fmt.Fprintf(&b, "# %s\n> %s\n< %s\n\n", v.name, v.request, v.reply)
		}
	}
	if err := os.WriteFile(vectorsFile, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVectors plays every vector over both networks and compares the reply
// byte for byte.
func TestVectors(t *testing.T) {
	vs := readVectors(t)
	if len(vs) < 59 {
		t.Fatalf("only %d vectors", len(vs))
	}
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		ep := nw.Serve(t, "vectors", newTestMux())
		for i, v := range vs {
			got, err := nw.Post(context.Background(), ep, []byte(v.request))
			if err != nil {
				t.Fatalf("%s: %v", v.name, err)
			}
			if *update && nw.Name == "mem" {
				vs[i].reply = string(got)
				continue
			}
			if string(got) != v.reply {
				t.Errorf("%s:\nrequest %s\ngot     %s\nwant    %s", v.name, v.request, got, v.reply)
			}
		}
		if *update && nw.Name == "mem" {
			writeVectors(t, vs)
		}
	})
}

func TestCall(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		ep := nw.Serve(t, "p1", newTestMux())
		c := transport.NewClient(nw, callTimeout)
		inv := &protocol.GameInvitation{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeGameInvitation,
				Sender: "referee:REF01", Timestamp: fixedTime, ConversationID: "conv-r1m1"},
			RoundID: 1, MatchID: "R1M1", GameType: protocol.GameEvenOdd, RoleInMatch: protocol.PlayerA, OpponentID: "P02",
		}
		for _, method := range []string{"handle_game_invitation", "GAME_INVITATION", "receive_game_invitation"} {
			var ack protocol.GameJoinAck
			is.NoErr(c.Call(context.Background(), ep, method, inv, &ack))
			is.True(ack.Accepted())
			is.Equal(ack.MatchID, "R1M1")
			is.Equal(ack.ConversationID, "conv-r1m1") // conversation echoed
		}
		// Through MCP tools/call the reply comes back as content text and
		// the client unwraps it.
		var ack protocol.GameJoinAck
		is.NoErr(c.Call(context.Background(), ep, "tools/call",
			map[string]any{"name": "receive_game_invitation", "arguments": inv}, &ack))
		is.Equal(ack.MatchID, "R1M1")
		// A raw reply can be asked for.
		var raw jsontext.Value
		is.NoErr(c.Call(context.Background(), ep, "ping", nil, &raw))
		is.Equal(string(raw), `{"status":"ok"}`)
	})
}

func TestCallErrors(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		tm := newTestMux()
		ep := nw.Serve(t, "p1", tm)
		c := transport.NewClient(nw, 5*time.Second)
		ctx := context.Background()

		t.Run("remote league error", func(t *testing.T) {
			is := is.New(t)
			err := c.Call(ctx, ep, "fail", map[string]any{"protocol": "league.v2"}, nil)
			e, ok := errors.AsType[*transport.Error](err)
			is.True(ok)
			is.Equal(e.Kind, transport.KindRemote)
			is.Equal(e.RPC.Code, -32001)
			is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid)
			is.True(!transport.IsRetryable(err)) // E012 is final
		})
		t.Run("validation error", func(t *testing.T) {
			is := is.New(t)
			err := c.Call(ctx, ep, "choose_parity", map[string]any{"protocol": "league.v1", "sender": "referee:REF01",
				"match_id": "R1M1", "player_id": "P01"}, nil)
			is.Equal(protocol.CodeOf(err), protocol.ErrProtocolMismatch)
		})
		t.Run("panic", func(t *testing.T) {
			is := is.New(t)
			err := c.Call(ctx, ep, "boom", nil, nil)
			is.Equal(protocol.CodeOf(err), protocol.ErrInternal)
			is.True(transport.IsRetryable(err))         // E015 may be retried
			is.NoErr(c.Call(ctx, ep, "ping", nil, nil)) // the server goes on
		})
		t.Run("deadline", func(t *testing.T) {
			is := is.New(t)
			dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			err := c.Call(dctx, ep, "choose_parity", map[string]any{"protocol": "league.v2", "sender": "referee:REF01",
				"match_id": "BLOCK", "player_id": "P01"}, nil)
			e, ok := errors.AsType[*transport.Error](err)
			is.True(ok)
			is.Equal(e.Kind, transport.KindTimeout)
			is.Equal(protocol.CodeOf(err), protocol.ErrTimeout)
			is.True(transport.IsRetryable(err))
		})
		t.Run("caller cancels", func(t *testing.T) {
			is := is.New(t)
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			err := c.Call(cctx, ep, "ping", nil, nil)
			is.True(errors.Is(err, context.Canceled)) // not blamed on the peer
		})
		t.Run("reply of the wrong shape", func(t *testing.T) {
			is := is.New(t)
			var ack protocol.GameJoinAck
			err := c.Call(ctx, ep, "get_data", nil, &ack) // an array, not an object
			e, ok := errors.AsType[*transport.Error](err)
			is.True(ok)
			is.Equal(e.Kind, transport.KindBadResponse)
			is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat)
		})
		t.Run("unknown method", func(t *testing.T) {
			is := is.New(t)
			err := c.Call(ctx, ep, "no_such_tool", nil, nil)
			e, _ := errors.AsType[*transport.Error](err)
			is.Equal(e.RPC.Code, protocol.CodeMethodNotFound)
			is.Equal(protocol.CodeOf(err), protocol.ErrInvalidEndpoint)
		})
	})
}

func TestUnreachable(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		// Its port held once it is closed: no other test's server answers
		// there meanwhile.
		l := nw.ListenStoppable(t, "gone", newTestMux())
		ep := l.Endpoint()
		is.NoErr(l.Close())
		c := transport.NewClient(nw, callTimeout)
		err := c.Call(context.Background(), ep, "ping", nil, nil)
		e, ok := errors.AsType[*transport.Error](err)
		is.True(ok)
		is.Equal(e.Kind, transport.KindUnreachable)
		is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable)
		is.True(transport.IsRetryable(err))

		bad := "mem:/x"
		if nw.Name == "http" {
			bad = "http//127.0.0.1/mcp"
		}
		err = c.Call(context.Background(), bad, "ping", nil, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrInvalidEndpoint)
		is.True(!transport.IsRetryable(err))
	})
}

func TestConcurrentCalls(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		ep := nw.Serve(t, "p1", newTestMux())
		c := transport.NewClient(nw, 5*time.Second)
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for i := range 200 {
			wg.Go(func() {
				var resp protocol.ChooseParityResponse
				match := fmt.Sprintf("R1M%d", i)
				err := c.Call(context.Background(), ep, "choose_parity", &protocol.ChooseParityCall{
					Envelope: protocol.Envelope{Protocol: protocol.Version, Sender: "referee:REF01", ConversationID: match},
					MatchID:  match, PlayerID: "P01"}, &resp)
				if err == nil && (resp.MatchID != match || resp.ConversationID != match) {
					err = fmt.Errorf("reply for %s/%s to a call for %s", resp.MatchID, resp.ConversationID, match)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			is.NoErr(err) // no reply mixed up
		}
	})
}

// TestEncodedParamsUntouched: the Client encodes params into buffers it
// uses again from call to call; params given already encoded are the
// caller's, never one of them.
func TestEncodedParamsUntouched(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		ep := nw.Serve(t, "p1", newTestMux())
		c := transport.NewClient(nw, 5*time.Second)
		encoded := jsontext.Value(`{"protocol":"league.v2","sender":"referee:REF01","conversation_id":"R1M0","match_id":"R1M0","player_id":"P01"}`)
		want := string(encoded)
		for i := range 20 {
			var resp protocol.ChooseParityResponse
			is.NoErr(c.Call(context.Background(), ep, "choose_parity", encoded, &resp))
			is.Equal(resp.MatchID, "R1M0")
			match := fmt.Sprintf("R1M%d", i+1)
			is.NoErr(c.Call(context.Background(), ep, "choose_parity", &protocol.ChooseParityCall{
				Envelope: protocol.Envelope{Protocol: protocol.Version, Sender: "referee:REF01", ConversationID: match},
				MatchID:  match, PlayerID: "P01"}, &resp))
			is.Equal(resp.MatchID, match)
			is.Equal(string(encoded), want) // not written over
		}
	})
}

// TestShutdownFinishesInFlight: a graceful shutdown waits for the call in
// flight, which gets its reply; a later call finds nobody.
func TestShutdownFinishesInFlight(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		tm := newTestMux()
		started := make(chan struct{})
		tm.HandleFunc("slow", func(ctx context.Context, r *transport.Request) (any, error) {
			close(started)
			<-tm.release
			return "done", nil
		})
		l := nw.ListenStoppable(t, "p1", tm) // its port held once it is shut down
		c := transport.NewClient(nw, 5*time.Second)
		result := make(chan error, 1)
		var reply string
		go func() { result <- c.Call(context.Background(), l.Endpoint(), "slow", nil, &reply) }()
		<-started
		shut := make(chan error, 1)
		go func() { shut <- l.Shutdown(context.Background()) }()
		select {
		case <-shut:
			t.Fatal("shutdown returned with a call in flight")
		default:
		}
		close(tm.release)
		is.NoErr(<-result)
		is.Equal(reply, "done")
		is.NoErr(<-shut)
		err := c.Call(context.Background(), l.Endpoint(), "ping", nil, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable)
	})
}

func TestSchemes(t *testing.T) {
	is := is.New(t)
	n := transporttest.Mem()
	ep := n.Serve(t, "p1", newTestMux())
	c := transport.NewClient(transport.Schemes{"mem": n}, callTimeout)
	is.NoErr(c.Call(context.Background(), ep, "ping", nil, nil))
	err := c.Call(context.Background(), "gopher://x", "ping", nil, nil)
	is.Equal(protocol.CodeOf(err), protocol.ErrInvalidEndpoint)
}

func TestMuxRegistration(t *testing.T) {
	is := is.New(t)
	m := transport.NewMux(nil)
	m.HandleFunc("notify_round", func(context.Context, *transport.Request) (any, error) { return nil, nil })
	defer func() { is.True(recover() != nil) }() // an alias of a registered type is a duplicate
	m.HandleFunc("ROUND_ANNOUNCEMENT", func(context.Context, *transport.Request) (any, error) { return nil, nil })
}

// TestMuxRoutes: a message type is reached by every name of its own
// (type, tool name, alias) and by no other; a tool by its name; a known
// type without a handler, or an unknown name, is method not found; a tool
// cannot be registered twice; Methods lists exactly what was registered.
func TestMuxRoutes(t *testing.T) {
	is := is.New(t)
	m := transport.NewMux(nil)
	var reached []string
	handler := func(name string) func(context.Context, *transport.Request) (any, error) {
		return func(_ context.Context, r *transport.Request) (any, error) {
			reached = append(reached, name+" "+r.Method+" "+string(r.Type))
			return map[string]string{"status": "ok"}, nil
		}
	}
	m.HandleFunc(protocol.MethodChooseParity, handler("parity"))
	m.HandleFunc("receive_game_over", handler("over"))
	m.HandleFunc("ping", handler("ping"))
	call := &protocol.ChooseParityCall{
		Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeChooseParityCall,
			Sender: "referee:REF01", Timestamp: fixedTime, ConversationID: "conv-r1m1"},
		MatchID: "R1M1", PlayerID: "P01", GameType: protocol.GameEvenOdd, Deadline: "2025-01-15T10:31:00Z",
	}
	params, err := json.Marshal(call)
	is.NoErr(err)
	serve := func(method string, params []byte) string {
		body := `{"jsonrpc":"2.0","method":"` + method + `","params":` + string(params) + `,"id":1}`
		return string(transport.ServeJSON(context.Background(), m, []byte(body), transport.Peer{}))
	}
	ok := `{"jsonrpc":"2.0","result":{"status":"ok"},"id":1}`
	is.Equal(serve("CHOOSE_PARITY_CALL", params), ok)
	is.Equal(serve("choose_parity", params), ok)
	is.Equal(serve("GAME_INVITATION", params), ok) // params.message_type decides
	is.Equal(serve("ping", []byte("{}")), ok)
	for _, method := range []string{"GAME_INVITATION", "handle_game_invitation", "nosuch"} {
		is.Equal(serve(method, []byte("{}")), `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: `+method+
			`","data":{"error_code":"E018","error_description":"INVALID_ENDPOINT","retryable":false}},"id":1}`)
	}
	is.Equal(reached, []string{
		"parity CHOOSE_PARITY_CALL CHOOSE_PARITY_CALL",
		"parity choose_parity CHOOSE_PARITY_CALL",
		"parity GAME_INVITATION CHOOSE_PARITY_CALL",
		"ping ping ",
	})
	types, tools := m.Methods()
	slices.Sort(types)
	is.Equal(types, []protocol.MessageType{protocol.TypeChooseParityCall, protocol.TypeGameOver})
	is.Equal(tools, []string{"ping"})
	for _, method := range []string{"GAME_OVER", "ping", "new_tool"} {
		func() {
			defer func() { is.True(recover() != nil) }() // registered twice, or nil
			if method == "new_tool" {
				m.Handle(method, nil)
			}
			m.HandleFunc(method, handler(method))
		}()
	}
	types, tools = m.Methods()
	is.Equal(len(types)+len(tools), 3) // nothing registered by a panicking call
}

func TestRequestSeenByHandler(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, nw *transporttest.Net) {
		is := is.New(t)
		m := transport.NewMux(nil)
		got := make(chan *transport.Request, 1)
		m.HandleFunc(string(protocol.TypeGameOver), func(ctx context.Context, r *transport.Request) (any, error) {
			got <- r
			return map[string]string{"status": "ACK"}, nil
		})
		ep := nw.Serve(t, "p1", m)
		body := `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"receive_game_over","arguments":` +
			`{"match_id":"R1M1","game_result":{"status":"WIN","winner_player_id":"P02","drawn_number":7}}},"id":5}`
		reply, err := nw.Post(context.Background(), ep, []byte(body))
		is.NoErr(err)
		is.Equal(string(reply), `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{\"status\":\"ACK\"}"}]},"id":5}`)
		r := <-got
		is.Equal(r.Method, "receive_game_over")
		is.Equal(r.Type, protocol.TypeGameOver)
		is.True(r.MCP)
		is.True(r.Peer.Loopback) // loopback caller
		is.Equal(r.Peer.Network, map[bool]string{true: "mem", false: "http"}[nw.IsMem()])
		is.Equal(*r.Msg.(*protocol.GameOver).GameResult.WinnerPlayerID, "P02")
		is.True(bytes.Contains(r.Params, []byte(`"drawn_number":7`)))
	})
}

// countingServer counts the requests it serves and passes them on.
type countingServer struct {
	next  transport.Handler
	calls atomic.Int64
}

func (c *countingServer) ServeLeague(ctx context.Context, r *transport.Request) (any, error) {
	c.calls.Add(1)
	return c.next.ServeLeague(ctx, r)
}

// TestDialectNegotiation: an endpoint that serves only tools/call with
// dialect-b's names is found on the first call (three tries) and called
// the right way at once after that; our own endpoints take one try.
func TestDialectNegotiation(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		b := transport.NewMux(nil)
		onlyB := transport.HandlerFunc(func(ctx context.Context, r *transport.Request) (any, error) {
			if !r.MCP || r.Method != "receive_game_invitation" {
				return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
			}
			return map[string]string{"status": "ACK"}, nil
		})
		b.Handle(string(protocol.TypeGameInvitation), onlyB)
		foreign := &countingServer{next: b}
		ours := &countingServer{next: newTestMux()}
		fep, oep := n.Serve(t, "foreign", foreign), n.Serve(t, "ours", ours)
		c := n.Client(callTimeout)
		inv := map[string]any{"protocol": "league.v2", "sender": "referee:REF01", "round_id": 1, "match_id": "R1M1", "opponent_id": "P02"}
		var ack protocol.GameJoinAck
		is.NoErr(c.Call(context.Background(), fep, protocol.MethodHandleGameInvitation, inv, &ack))
		is.True(ack.Accepted())
		is.Equal(foreign.calls.Load(), int64(4)) // by name, by message type, tools/call by name, tools/call by dialect-b's name
		is.NoErr(c.Call(context.Background(), fep, protocol.MethodHandleGameInvitation, inv, &ack))
		is.Equal(foreign.calls.Load(), int64(5)) // remembered
		is.NoErr(c.Call(context.Background(), oep, protocol.MethodHandleGameInvitation, inv, &ack))
		is.Equal(ours.calls.Load(), int64(1)) // ours at once
		err := c.Call(context.Background(), oep, "no_such_method", map[string]any{}, nil)
		is.Equal(protocol.CodeOf(err), protocol.ErrInvalidEndpoint) // a missing method is still reported
	})
}

// TestDialectOtherAnswers: an endpoint that routes on the message type
// alone (dialect-a) is found on the second try; one that serves only
// tools/call and says a tool is unknown as MCP servers do (-32602, or an
// isError result) rather than with -32601 is asked by the next name, not
// given up on.
func TestDialectOtherAnswers(t *testing.T) {
	inv := map[string]any{"protocol": "league.v2", "sender": "referee:REF01", "round_id": 1, "match_id": "R1M1", "opponent_id": "P02"}
	ack := map[string]string{"status": "ACK"}
	for _, c := range []struct {
		name  string
		serve func(r *transport.Request) (any, error) // nil: not known
		tries int64
	}{
		{"message type only", func(r *transport.Request) (any, error) {
			if r.MCP || r.Method != string(protocol.TypeGameInvitation) {
				return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
			}
			return ack, nil
		}, 2},
		{"unknown tool as invalid params", func(r *transport.Request) (any, error) {
			switch {
			case !r.MCP:
				return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
			case r.Method != "receive_game_invitation":
				return nil, protocol.NewRPCError(protocol.CodeInvalidParams, "Unknown tool: "+r.Method)
			}
			return ack, nil
		}, 4},
		{"unknown tool as an isError result", func(r *transport.Request) (any, error) {
			switch {
			case !r.MCP:
				return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
			case r.Method != "receive_game_invitation":
				return nil, protocol.NewRPCError(protocol.CodeInternalError, "Tool "+r.Method+" not found")
			}
			return ack, nil
		}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				m := transport.NewMux(nil)
				m.Handle(string(protocol.TypeGameInvitation), transport.HandlerFunc(func(_ context.Context, r *transport.Request) (any, error) {
					return c.serve(r)
				}))
				foreign := &countingServer{next: m}
				ep := n.Serve(t, "foreign", foreign)
				cl := n.Client(callTimeout)
				var got protocol.GameJoinAck
				is.NoErr(cl.Call(context.Background(), ep, protocol.MethodHandleGameInvitation, inv, &got))
				is.True(got.Accepted())
				is.Equal(foreign.calls.Load(), c.tries) // found
				is.NoErr(cl.Call(context.Background(), ep, protocol.MethodHandleGameInvitation, inv, &got))
				is.Equal(foreign.calls.Load(), c.tries+1) // remembered
			})
		})
	}
	t.Run("a tool's own error is its answer", func(t *testing.T) {
		transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
			is := is.New(t)
			m := transport.NewMux(nil)
			m.Handle(string(protocol.TypeGameInvitation), transport.HandlerFunc(func(_ context.Context, r *transport.Request) (any, error) {
				if !r.MCP {
					return nil, protocol.NewRPCError(protocol.CodeMethodNotFound, "Method not found")
				}
				// What an MCP SDK makes of an exception the tool raised.
				return nil, protocol.NewRPCError(protocol.CodeInternalError, "Error executing tool "+r.Method+": Match R1M1 not found")
			}))
			counted := &countingServer{next: m}
			ep := n.Serve(t, "mcp", counted)
			err := n.Client(callTimeout).Call(context.Background(), ep, protocol.MethodHandleGameInvitation, inv, nil)
			e, ok := errors.AsType[*transport.Error](err)
			is.True(ok)
			is.Equal(e.RPC.Message, "Error executing tool handle_game_invitation: Match R1M1 not found") // the tool's error
			is.Equal(counted.calls.Load(), int64(3))                                                     // not asked again by dialect-b's name
		})
	})
	t.Run("a refusal is not an unknown tool", func(t *testing.T) {
		transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
			is := is.New(t)
			m := transport.NewMux(nil)
			m.Handle(string(protocol.TypeGameInvitation), transport.HandlerFunc(func(context.Context, *transport.Request) (any, error) {
				return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "opponent_id is not a player")
			}))
			counted := &countingServer{next: m}
			ep := n.Serve(t, "refuser", counted)
			err := n.Client(callTimeout).Call(context.Background(), ep, protocol.MethodHandleGameInvitation, inv, nil)
			is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat)
			is.Equal(counted.calls.Load(), int64(1)) // asked once
		})
	})
}
