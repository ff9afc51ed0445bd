package httprpc

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leaguectl/leaguectl/internal/cputime"
)

// BenchmarkLoopbackFloor is what loopback TCP alone costs on this machine:
// 64 connections (a 64-player league's calls in flight) each send 400
// bytes, a message's size, and read 400 back, with no HTTP, JSON or agent
// at either end. An HTTP league cannot cost less per message than this;
// exch/s divided by 14 (a match's messages) bounds its matches/s.
func BenchmarkLoopbackFloor(b *testing.B) {
	const conns, size = 64, 400
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var served sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	served.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			served.Go(func() {
				buf := make([]byte, size)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			})
		}
	})
	defer func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		served.Wait()
	}()
	clients := make([]net.Conn, conns)
	for i := range clients {
		if clients[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			b.Fatal(err)
		}
		defer clients[i].Close()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	cpu := cputime.Process()
	b.ResetTimer()
	for _, c := range clients {
		wg.Go(func() {
			buf := make([]byte, size)
			for next.Add(1) <= int64(b.N) {
				if _, err := c.Write(buf); err != nil {
					b.Error(err)
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "exch/s")
}
