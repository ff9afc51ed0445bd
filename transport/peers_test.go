package transport_test

// Broken peers, and messages handed over in process, against the
// transport.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// TestBatchServedOnceWhenItsReplyIsUnreadable: a peer takes a batch,
// serves every call of it, and answers with an array one of whose
// responses cannot be read (here {"jsonrpc":"2.0","id":2}, what a
// JavaScript server sends for a handler that returned undefined:
// JSON.stringify drops the result member). The batch was served: no call
// is sent again, one by one.
func TestBatchServedOnceWhenItsReplyIsUnreadable(t *testing.T) {
	var mu sync.Mutex
	delivered := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		type req struct {
			Method string         `json:"method"`
			ID     jsontext.Value `json:"id"`
		}
		var reqs []req
		if bytes.HasPrefix(body, []byte("[")) {
			_ = json.Unmarshal(body, &reqs)
		} else {
			var one req
			_ = json.Unmarshal(body, &one)
			reqs = []req{one}
		}
		var out [][]byte
		mu.Lock()
		for i, q := range reqs {
			delivered[q.Method]++
			if i == 1 {
				out = append(out, []byte(`{"jsonrpc":"2.0","id":`+string(q.ID)+`}`))
				continue
			}
			out = append(out, []byte(`{"jsonrpc":"2.0","result":{"status":"ACK"},"id":`+string(q.ID)+`}`))
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if len(reqs) == 1 {
			_, _ = w.Write(out[0])
			return
		}
		_, _ = w.Write(append(append([]byte("["), bytes.Join(out, []byte(","))...), ']'))
	}))
	t.Cleanup(srv.Close)
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	t.Cleanup(hc.CloseIdleConnections)
	c := transport.NewClient(hc, callTimeout)

	calls := []*transport.Call{
		{Method: protocol.MethodUpdateStandings, Params: map[string]any{"n": 1}},
		{Method: protocol.MethodNotifyRoundCompleted, Params: map[string]any{"n": 2}},
		{Method: protocol.MethodNotifyRound, Params: map[string]any{"n": 3}},
	}
	c.Batch(transport.NoRetry(context.Background()), srv.URL+"/mcp", calls...)
	mu.Lock()
	defer mu.Unlock()
	for _, call := range calls {
		if n := delivered[call.Method]; n != 1 {
			t.Errorf("%s delivered %d times (outcome: %v)", call.Method, n, call.Err)
		}
	}
}

// TestTypedBusValidatesAsTheCodec: a message handed over in process is
// judged as after a decode. A registration whose display_name is not
// UTF-8 is refused on every network that encodes it (the codec cannot
// carry it; a stranger's bytes with it are a parse error), and on the
// typed bus too, where the manager would otherwise keep a name it cannot
// send to anyone over HTTP.
func TestTypedBusValidatesAsTheCodec(t *testing.T) {
	mux := transport.NewMux(nil)
	mux.HandleFunc(string(protocol.TypeLeagueRegisterRequest), func(ctx context.Context, r *transport.Request) (any, error) {
		return map[string]string{"status": "ACCEPTED"}, nil
	})
	msg := func() *protocol.LeagueRegisterRequest {
		return &protocol.LeagueRegisterRequest{
			Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueRegisterRequest,
				Sender: "player:P01", Timestamp: "2025-01-15T10:30:00Z", ConversationID: "c1"},
			PlayerMeta: &protocol.PlayerMeta{DisplayName: "Bad \xff name", Version: "1", GameTypes: []string{"even_odd"},
				ContactEndpoint: "http://127.0.0.1:9/mcp"},
		}
	}
	// In process: the message value as it is.
	typed := &transport.Call{Method: protocol.MethodRegisterPlayer, Params: msg()}
	ctx := context.Background()
	if err := transport.ServeCalls(ctx, mux, "mem://lm", transport.Peer{Network: "mem", Addr: "mem"}, typed); err != nil {
		t.Fatal(err)
	}
	// Over a network: the same call as bytes (what a stranger can send;
	// our own encoder refuses to produce them).
	body := []byte(`{"jsonrpc":"2.0","method":"` + protocol.MethodRegisterPlayer + `","params":{"protocol":"league.v2",` +
		`"message_type":"LEAGUE_REGISTER_REQUEST","sender":"player:P01","timestamp":"2025-01-15T10:30:00Z",` +
		`"conversation_id":"c1","player_meta":{"display_name":"Bad ` + "\xff" + ` name","version":"1",` +
		`"game_types":["even_odd"],"contact_endpoint":"http://127.0.0.1:9/mcp"}},"id":1}`)
	reply := transport.ServeJSON(ctx, mux, body, transport.Peer{Network: "http", Addr: "127.0.0.1:1"})
	resp, err := protocol.DecodeResponse(reply)
	if err != nil {
		t.Fatal(err)
	}
	_, encErr := protocol.Marshal(msg())
	onWire := resp.Error == nil
	onBus := typed.Err == nil
	if onWire != onBus {
		t.Errorf("typed bus accepted=%v (err %v); decoded from bytes accepted=%v (%s); the codec encodes it: %v",
			onBus, typed.Err, onWire, reply, encErr)
	}
}

// TestDeclaredTypeDecidesFromBytes: params.message_type decides the type
// a request is served as, in process and from bytes alike: a GAME_ERROR
// sent by the method choose_parity, with a field CHOOSE_PARITY_CALL types
// differently (context: an object of its own there, any object in
// GAME_ERROR), is served as GAME_ERROR either way.
func TestDeclaredTypeDecidesFromBytes(t *testing.T) {
	mux := transport.NewMux(nil)
	served := 0
	mux.HandleFunc(string(protocol.TypeGameError), func(ctx context.Context, r *transport.Request) (any, error) {
		served++
		return map[string]string{"status": "ACK"}, nil
	})
	mux.HandleFunc(string(protocol.TypeChooseParityCall), func(ctx context.Context, r *transport.Request) (any, error) {
		return nil, protocol.Errorf(protocol.ErrInternal, "not this one")
	})
	ge := &protocol.GameError{
		Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeGameError,
			Sender: "referee:R1", Timestamp: "2025-01-15T10:30:00Z", ConversationID: "c1"},
		MatchID: "M1", ErrorCode: protocol.ErrTimeout, Context: map[string]any{"opponent_id": 5},
	}
	ctx := context.Background()
	typed := &transport.Call{Method: protocol.MethodChooseParity, Params: ge}
	if err := transport.ServeCalls(ctx, mux, "mem://p", transport.Peer{Network: "mem", Addr: "mem"}, typed); err != nil {
		t.Fatal(err)
	}
	params, err := protocol.Marshal(ge)
	if err != nil {
		t.Fatal(err)
	}
	wire := func(method string) string {
		body := protocol.AppendRequest(nil, jsontext.Value("1"), method, params)
		return string(transport.ServeJSON(ctx, mux, body, transport.Peer{Network: "http", Addr: "127.0.0.1:1"}))
	}
	viaParity, viaType := wire(protocol.MethodChooseParity), wire(string(protocol.TypeGameError))
	t.Logf("typed bus, method choose_parity: err=%v\nbytes, method choose_parity: %s\nbytes, method GAME_ERROR: %s",
		typed.Err, viaParity, viaType)
	if (typed.Err == nil) != !bytes.Contains([]byte(viaParity), []byte(`"error"`)) {
		t.Errorf("the same GAME_ERROR sent by choose_parity is served in process (err %v) but not from bytes: %s", typed.Err, viaParity)
	}
}
