package httprpc_test

// Hostile peers answering our client's calls.

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// rawPeer serves answer to every request on a free loopback port, and
// returns its /mcp endpoint; every connection is closed when the test ends.
func rawPeer(t *testing.T, answer func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = br.Discard(int(req.ContentLength))
				answer(c)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + httprpc.Path
}

// TestHostilePeerSwitchingProtocols: a peer answers a call with "101
// Switching Protocols" and then says nothing more. net/http hands the raw
// connection over as the body, which the request's context no longer
// governs; the call still ends at once, as a bad response, rather than
// waiting for as long as the peer likes (a referee's match, a manager's
// broadcast goroutine would wait with it).
func TestHostilePeerSwitchingProtocols(t *testing.T) {
	ep := rawPeer(t, func(c net.Conn) {
		_, _ = c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: league\r\n\r\n"))
		// ... and nothing more, until the test ends.
	})
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	defer hc.CloseIdleConnections()
	// A deadline far past the test's bound: the call must end by itself.
	const deadline = time.Minute
	c := transport.NewClient(hc, deadline, transport.WithBreaker(transport.Breaker{}))

	done := make(chan error, 1)
	start := time.Now()
	go func() {
		var reply jsontext.Value
		done <- c.Call(context.Background(), ep, "ping", nil, &reply)
	}()
	select {
	case err := <-done:
		e, ok := errors.AsType[*transport.Error](err)
		if !ok || e.Kind != transport.KindBadResponse {
			t.Fatalf("call ended after %v with %v, not a bad response", time.Since(start).Round(time.Millisecond), err)
		}
	case <-time.After(hostileBound):
		t.Fatalf("a call with a %v deadline still waits after %v for a peer that answered 101 Switching Protocols",
			deadline, time.Since(start).Round(time.Millisecond))
	}
}
