package httprpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer is a misbehaving HTTP/1.1 server on a raw listener: the path
// of each request picks what it does. It answers with the request's id as
// the result, so a response read by the wrong exchange is seen.
type rawServer struct {
	ln    net.Listener
	open  atomic.Int32 // connections not yet closed by the server
	total atomic.Int32
	wg    sync.WaitGroup
}

func newRawServer(t *testing.T) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.open.Add(1)
			s.total.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer s.open.Add(-1)
				defer c.Close()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawServer) url(mode string) string { return "http://" + s.ln.Addr().String() + "/" + mode }

func reply(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","result":%d,"id":1}`, id) }

func withLength(status, body string) string {
	return fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
}

func (s *rawServer) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		mode := strings.TrimPrefix(req.URL.Path, "/")
		if mode == "early" || mode == "204len" { // answers before reading the body, which it never reads
			io.WriteString(c, withLength("413 Too Large", "{}"))
			time.Sleep(20 * time.Millisecond)
			return
		}
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		var msg struct{ ID int }
		_ = json.Unmarshal(b, &msg)
		r := reply(msg.ID)
		bogus := reply(-1)
		switch mode {
		case "ok":
			io.WriteString(c, withLength("200 OK", r))
		case "chunked":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
			io.WriteString(c, fmt.Sprintf("%x;ext=1\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n", len(r), r))
		case "interim":
			io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"+withLength("200 OK", r))
		case "extra": // a second, unasked response right behind the first
			io.WriteString(c, withLength("200 OK", r)+withLength("200 OK", bogus))
		case "extra-split": // the same, in a second write a moment later
			io.WriteString(c, withLength("200 OK", r))
			time.Sleep(time.Millisecond)
			io.WriteString(c, withLength("200 OK", bogus))
		case "crlf": // a stray CRLF after the body
			io.WriteString(c, withLength("200 OK", r)+"\r\n")
		case "close":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: "+fmt.Sprint(len(r))+"\r\n\r\n"+r)
			return
		case "http10":
			io.WriteString(c, "HTTP/1.0 200 OK\r\n\r\n"+r)
			return
		case "204len": // a 204 with a body it should not have
			io.WriteString(c, "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello")
		case "slow":
			time.Sleep(150 * time.Millisecond)
			io.WriteString(c, withLength("200 OK", r))
		case "hang":
			// reads on, never answers
		case "drop":
			return
		case "rst":
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			return
		case "huge":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n")
		case "headers": // headers without end
			io.WriteString(c, "HTTP/1.1 200 OK\r\n")
			for i := 0; i < 2000; i++ {
				if _, err := io.WriteString(c, "X-A: "+strings.Repeat("a", 1000)+"\r\n"); err != nil {
					return
				}
			}
		case "interim-flood":
			for i := 0; i < 100; i++ {
				if _, err := io.WriteString(c, "HTTP/1.1 103 Early Hints\r\n\r\n"); err != nil {
					return
				}
			}
		default:
			io.WriteString(c, withLength("404 Not Found", "no"))
		}
	}
}

func goroutinesSettle(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines: %d before, %d after\n%s", baseline, runtime.NumGoroutine(), buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestClientAgainstMisbehavingServer: concurrent calls, some cancelled at
// random moments, against a server that misbehaves in every way the modes
// list. A call that succeeds gets its own answer; afterwards no
// connection or goroutine is left over.
func TestClientAgainstMisbehavingServer(t *testing.T) {
	good := []string{"ok", "chunked", "interim", "close", "http10"}
	bad := []string{"slow", "hang", "drop", "rst", "huge", "headers", "interim-flood", "early", "204len"}
	// A server that writes a response nobody asked for can have it read
	// as the answer to the next request on the connection: net/http's
	// client reads the bytes an idle connection receives only when it
	// next looks at it, and a request may be sent on it first. The answer
	// is then another of that server's answers, never another server's,
	// and never a broken one.
	unsolicited := []string{"extra", "extra-split", "crlf"}
	t.Run("own answers", func(t *testing.T) {
		misbehave(t, slices.Concat(good, bad), func(id int, got string) bool { return got == reply(id) })
	})
	t.Run("unsolicited responses", func(t *testing.T) {
		// net/http logs such a response through the log package.
		out := log.Writer()
		log.SetOutput(io.Discard)
		t.Cleanup(func() { log.SetOutput(out) })
		anyReply := regexp.MustCompile(`^\{"jsonrpc":"2.0","result":-?[0-9]+,"id":1\}$`)
		misbehave(t, slices.Concat(unsolicited, good, bad), func(_ int, got string) bool { return anyReply.MatchString(got) })
	})
}

// misbehave makes the calls of TestClientAgainstMisbehavingServer, each
// to one of modes, and checks each answer with ok.
func misbehave(t *testing.T, modes []string, ok func(id int, got string) bool) {
	srv := newRawServer(t)
	baseline := runtime.NumGoroutine()
	client := NewClient(ClientConfig{MaxResponseBytes: 1 << 20, MaxIdleConnsPerHost: 4})
	var ids atomic.Int64
	var okCalls, failed atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 150 {
				mode := modes[rand.IntN(len(modes))]
				id := int(ids.Add(1))
				pad := ""
				if rand.IntN(4) == 0 {
					pad = strings.Repeat("p", 5000)
				}
				body := fmt.Sprintf(`{"id":%d,"pad":%q}`, id, pad)
				ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
				if rand.IntN(3) == 0 {
					time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
				}
				got, err := client.Post(ctx, srv.url(mode), []byte(body))
				cancel()
				if err != nil {
					failed.Add(1)
					continue
				}
				okCalls.Add(1)
				if !ok(id, string(got)) {
					t.Errorf("mode %s: call %d got %s", mode, id, got)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("ok %d, failed %d, server connections %d", okCalls.Load(), failed.Load(), srv.total.Load())
	// Polling: nothing tells when the server has seen a connection's end.
	// A dial that a cancelled call started may still land in the pool, and
	// is closed by the next look.
	deadline := time.Now().Add(5 * time.Second)
	for client.CloseIdleConnections(); srv.open.Load() != 0; client.CloseIdleConnections() {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open after CloseIdleConnections", srv.open.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	goroutinesSettle(t, baseline)
}
