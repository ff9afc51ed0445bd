package httprpc_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

const mib = 1 << 20

// slowBody starts, from the address from, a POST /mcp whose head
// declares a body of declared bytes, of which it sends sent: the server
// holds the body, reading, until finish sends the rest.
func slowBody(t *testing.T, from, addr string, declared, sent int) *capConn {
	t.Helper()
	c := dialFrom(t, from, addr)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // bounds the test only
	head := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", declared)
	if _, err := io.WriteString(c, head+strings.Repeat(" ", sent)); err != nil {
		t.Fatalf("from %s: %v", from, err)
	}
	return c
}

// finish sends the rest of a slowBody, a ping at its end, and checks
// that it is answered 200.
func (c *capConn) finish(t *testing.T, declared, sent int) {
	t.Helper()
	if _, err := io.WriteString(c, strings.Repeat(" ", declared-sent-len(capPing))+capPing); err != nil {
		t.Fatal(err)
	}
	if resp, body := c.answer(t); resp.StatusCode != http.StatusOK {
		t.Fatalf("a body finished was answered %d %s", resp.StatusCode, body)
	}
}

// ping sends a whole ping on c.
func (c *capConn) ping(t *testing.T) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, post(capPing)); err != nil {
		t.Fatal(err)
	}
}

// answer reads the response to the request sent on c.
func (c *capConn) answer(t *testing.T) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// heldReaches waits until the server's bodies hold want bytes: it
// reserves a body's bytes as soon as it reads its head, and nothing
// tells the client when that is.
func heldReaches(t *testing.T, l *httprpc.Listener, want int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); l.BodyBytes().Held != want; {
		if time.Now().After(deadline) {
			t.Fatalf("bodies hold %d bytes, want %d", l.BodyBytes().Held, want)
		}
		<-time.After(time.Millisecond)
	}
}

// refusedForBytes checks that resp is the answer to a body over the
// bytes in flight: 503, Retry-After, and a JSON-RPC error E016,
// retryable, whose context names the bound it met.
func refusedForBytes(t *testing.T, resp *http.Response, body []byte, scope string, limit int64) {
	t.Helper()
	is := is.New(t)
	is.Equal(resp.StatusCode, http.StatusServiceUnavailable) // over the bytes in flight
	is.Equal(resp.Header.Get("Retry-After"), "1")
	is.Equal(resp.Header.Get("Content-Type"), "application/json")
	var reply struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				ErrorCode string         `json:"error_code"`
				Retryable bool           `json:"retryable"`
				Context   map[string]any `json:"context"`
			} `json:"data"`
		} `json:"error"`
	}
	is.NoErr(json.Unmarshal(body, &reply))
	is.Equal(reply.JSONRPC, "2.0")
	is.Equal(reply.ID, nil)            // the body was never read
	is.Equal(reply.Error.Code, -32016) // E016's JSON-RPC code
	is.Equal(reply.Error.Data.ErrorCode, "E016")
	is.True(reply.Error.Data.Retryable)
	is.Equal(reply.Error.Data.Context, map[string]any{"scope": scope, "limit_bytes": float64(limit),
		"limit": fmt.Sprint(limit, " bytes of request bodies at once"), "retry_after_sec": 1.0, "retry_after_ms": 1000.0})
}

// TestBodyBytesInFlight: the bytes of bodies a server reads at once are
// bounded server-wide and per address, counted from a body's head (its
// declared length) to its answer: a body over either bound is answered
// 503 with E016, retryable, before any of it is read; a small one leaves
// its connection open, and once room is given back the same request is
// served. (Without the bound, each connection held up to 1 MiB.)
func TestBodyBytesInFlight(t *testing.T) {
	is := is.New(t)
	l, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{MaxBodyBytesInFlight: 4 * mib,
		MaxBodyBytesInFlightPerAddress: 2 * mib, LimitLoopback: true})
	const sent = 600_000

	a1 := slowBody(t, "127.0.0.2", addr, mib, sent)
	heldReaches(t, l, mib)
	a2 := slowBody(t, "127.0.0.2", addr, mib, sent)
	heldReaches(t, l, 2*mib)
	again := dialFrom(t, "127.0.0.2", addr)
	again.ping(t)
	resp, body := again.answer(t)
	refusedForBytes(t, resp, body, "address", 2*mib) // 127.0.0.2's share is held
	is.True(!resp.Close)                             // the connection stays

	b1 := slowBody(t, "127.0.0.3", addr, mib, sent)
	heldReaches(t, l, 3*mib)
	b2 := slowBody(t, "127.0.0.3", addr, mib, sent)
	heldReaches(t, l, 4*mib)
	c := dialFrom(t, "127.0.0.4", addr)
	c.ping(t)
	resp, body = c.answer(t)
	refusedForBytes(t, resp, body, "server", 4*mib) // the server is full
	// A chunked body, whose length nobody knows, is refused at its first
	// bytes, and its connection closed: the rest of it is never read.
	chunked := dialFrom(t, "127.0.0.4", addr)
	_ = chunked.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := io.WriteString(chunked, "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(capPing), capPing))
	is.NoErr(err)
	resp, body = chunked.answer(t)
	refusedForBytes(t, resp, body, "server", 4*mib)
	is.True(resp.Close) // Connection: close

	is.Equal(l.BodyBytes(), httprpc.BodyBytes{Held: 4 * mib, Peak: 4 * mib, PeakPerAddress: 2 * mib}) // never more

	a1.finish(t, mib, sent)
	heldReaches(t, l, 3*mib)
	again.ping(t) // on the connection kept
	resp, _ = again.answer(t)
	is.Equal(resp.StatusCode, http.StatusOK) // served, now that there is room
	for _, c := range []*capConn{a2, b1, b2} {
		c.finish(t, mib, sent)
	}
	heldReaches(t, l, 0) // every byte given back
	is.Equal(l.BodyBytes().Peak, int64(4*mib))
}

// TestBodyFloodFromOneAddress: issue 35's flood, connections from one
// address each declaring 1 MiB and sending 600 KB, against the default
// bounds: the server takes one address's share of them while they are
// pending, and answers every other one 503 at once, where it used to read
// them all (800 of them took a manager from 87 MB to 946 MB).
func TestBodyFloodFromOneAddress(t *testing.T) {
	is := is.New(t)
	l, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{LimitLoopback: true})
	const sent, conns = 600_000, 40
	admitted := 0
	var pending []*capConn
	for i := range conns {
		if i < httprpc.DefaultMaxBodyBytesInFlightPerAddress/mib {
			pending = append(pending, slowBody(t, "127.0.0.2", addr, mib, sent))
			admitted++
			heldReaches(t, l, int64(admitted*mib))
			continue
		}
		c := slowBody(t, "127.0.0.2", addr, mib, 0) // the head is enough to be refused
		resp, body := c.answer(t)
		refusedForBytes(t, resp, body, "address", httprpc.DefaultMaxBodyBytesInFlightPerAddress)
		is.True(resp.Close) // a body of 1 MiB unread: the connection ends
	}
	share := int64(httprpc.DefaultMaxBodyBytesInFlightPerAddress)
	is.Equal(l.BodyBytes().Held, share)           // one address's share admitted, and no more while they are pending
	is.Equal(l.BodyBytes().PeakPerAddress, share) // at any time
	// Another address has the room left (the server's 64 MiB).
	other := slowBody(t, "127.0.0.3", addr, mib, sent)
	heldReaches(t, l, share+mib)
	for _, c := range append(pending, other) {
		c.finish(t, mib, sent)
	}
	heldReaches(t, l, 0)
}

// TestBodyBytesChunked: a chunked body is reserved as it comes, so it
// is refused when its bytes reach the bound, not before, and never holds
// more than the bound.
func TestBodyBytesChunked(t *testing.T) {
	is := is.New(t)
	l, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{MaxBodyBytesInFlightPerAddress: mib + mib/2, LimitLoopback: true})
	held := slowBody(t, "127.0.0.2", addr, mib, 1000)
	heldReaches(t, l, mib)

	// Within the room left: served.
	c := dialFrom(t, "127.0.0.2", addr)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	small := strings.Repeat(" ", 300_000) + capPing
	_, err := io.WriteString(c, fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(small), small))
	is.NoErr(err)
	resp, _ := c.answer(t)
	is.Equal(resp.StatusCode, http.StatusOK)
	heldReaches(t, l, mib)

	// Past it: refused as it comes, once half a MiB has come.
	big := strings.Repeat(" ", 700_000) + capPing
	c = dialFrom(t, "127.0.0.2", addr)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { // the server stops reading it: the client's write may never end
		_, _ = io.WriteString(c, fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(big), big))
	}()
	resp, body := c.answer(t)
	refusedForBytes(t, resp, body, "address", mib+mib/2)
	is.True(resp.Close)
	is.Equal(l.BodyBytes().PeakPerAddress, int64(mib+mib/2)) // up to the bound, and no more
	held.finish(t, mib, 1000)
	heldReaches(t, l, 0)
}

// TestBodyBytesLoopbackExempt: a loopback address is spared its share of
// the bytes in flight by default (a league on one host is its own), and
// held to the server's bound all the same.
func TestBodyBytesLoopbackExempt(t *testing.T) {
	is := is.New(t)
	l, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{MaxBodyBytesInFlight: 3 * mib, MaxBodyBytesInFlightPerAddress: mib})
	var pending []*capConn
	for i := range 3 {
		pending = append(pending, slowBody(t, "127.0.0.1", addr, mib, 1000))
		heldReaches(t, l, int64((i+1)*mib)) // past one address's MiB
	}
	c := dialFrom(t, "127.0.0.1", addr)
	c.ping(t)
	resp, body := c.answer(t)
	refusedForBytes(t, resp, body, "server", 3*mib)
	is.Equal(l.BodyBytes().PeakPerAddress, int64(0)) // counted for no address
	for _, c := range pending {
		c.finish(t, mib, 1000)
	}
	heldReaches(t, l, 0)
}

// TestBodyFloodHeap measures what the flood of TestBodyFloodFromOneAddress
// costs the server's heap: 100 connections from one address, each
// declaring 1 MiB and sending 600 KB at once. The server reads the bodies
// its bound for one address holds and refuses the rest unread, so its heap
// grows by about that bound, never by the 100 bodies (60 MB and more) it
// used to read. The bound below is an upper one: a server slow to read
// only makes the heap grow less.
func TestBodyFloodHeap(t *testing.T) {
	is := is.New(t)
	// The bodies admitted are never finished: the read timeout, which would
	// give their bytes back, must not pass before the test is done with
	// them, however slow it is.
	l, addr := hostileServe(t, pingMux(), httprpc.ServerConfig{LimitLoopback: true, ReadTimeout: time.Hour})
	const conns, sent = 100, 600_000
	payload := []byte(fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		mib, strings.Repeat(" ", sent)))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	written := make(chan struct{}, conns)
	for range conns {
		c := dialFrom(t, "127.0.0.2", addr)
		_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second)) // a refused body is never read: bounds the test only
		go func() {
			_, _ = c.Write(payload) // refused ones fail, or fill the socket's buffers
			written <- struct{}{}
		}()
	}
	for range conns {
		<-written
	}
	// The server has taken its share once it holds it (the rest it
	// refuses): the bodies admitted are read from then on, and the
	// polling gives them time to be.
	heldReaches(t, l, httprpc.DefaultMaxBodyBytesInFlightPerAddress)
	// What the server holds of bodies is at most one address's share;
	// the bodies it reads take about their bytes, in chunks that grow, so
	// twice that, and room for the connections' own buffers.
	const most = 2*httprpc.DefaultMaxBodyBytesInFlightPerAddress + 8*mib
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		runtime.ReadMemStats(&ms)
		if grew := int64(ms.HeapAlloc) - int64(before); grew > most {
			t.Fatalf("%d bodies of %d bytes from one address took %d MiB of the server's heap, more than %d", conns, sent, grew>>20, most>>20)
		}
		<-time.After(10 * time.Millisecond)
	}
	is.Equal(l.BodyBytes().PeakPerAddress, int64(httprpc.DefaultMaxBodyBytesInFlightPerAddress))
}

// TestBodyBytesHeldNoLongerThanWriteTimeout: a body's bytes in flight are
// held until its handler answers, and a handler that waits (a batch of a
// hundred long polls, as get_league_result is) is ended at the write
// timeout, past which its answer could not be written anyway: so bodies
// that fill the server's bound, with nothing more sent, keep everyone
// else out no longer than that.
func TestBodyBytesHeldNoLongerThanWriteTimeout(t *testing.T) {
	is := is.New(t)
	m := pingMux()
	m.HandleFunc("wait", func(ctx context.Context, _ *transport.Request) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	// From the first batch's head to the write timeout, the second batch
	// must be read and the ping refused: long against a stall.
	l, addr := hostileServe(t, m, httprpc.ServerConfig{WriteTimeout: 3 * time.Second,
		MaxBodyBytesInFlight: 2 * mib, MaxBodyBytesInFlightPerAddress: mib})
	var b strings.Builder
	b.WriteString("[")
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"wait","id":%d}`, i)
	}
	b.WriteString("]")
	batch := b.String() + strings.Repeat(" ", mib-b.Len())
	for _, from := range []string{"127.0.0.2", "127.0.0.3"} {
		c := dialFrom(t, from, addr) // kept open, its answer never read
		_, err := io.WriteString(c, fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", mib, batch))
		is.NoErr(err)
	}
	heldReaches(t, l, 2*mib)
	c := dialFrom(t, "127.0.0.4", addr)
	c.ping(t)
	resp, body := c.answer(t)
	refusedForBytes(t, resp, body, "server", 2*mib) // full
	heldReaches(t, l, 0)                            // the write timeout ended the batches
	c = dialFrom(t, "127.0.0.4", addr)
	c.ping(t)
	resp, _ = c.answer(t)
	is.Equal(resp.StatusCode, http.StatusOK)
}
