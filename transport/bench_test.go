package transport_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/leaguectl/leaguectl/internal/cputime"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// BenchmarkCall measures one parity call and its reply: encode the request,
// move it over the network, decode and validate it, run the handler, encode
// the reply, move it back and decode it.
func BenchmarkCall(b *testing.B) {
	call := &protocol.ChooseParityCall{
		Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeChooseParityCall,
			Sender: "referee:REF01", Timestamp: fixedTime, ConversationID: "conv-r1m1", LeagueID: "league_2025_even_odd",
			AuthToken: "0123456789abcdef0123456789abcdef"},
		MatchID: "R1M1", PlayerID: "P01", GameType: protocol.GameEvenOdd,
		Context:  &protocol.ParityContext{OpponentID: "P02", RoundID: 1},
		Deadline: "2025-01-15T10:31:00Z",
	}
	for _, c := range []struct {
		name string
		nw   *transporttest.Net
	}{{"mem", transporttest.Mem()}, {"mem-inline", transporttest.MemInline()}, {"http", transporttest.HTTP()}} {
		b.Run(c.name, func(b *testing.B) { benchCall(b, c.nw, call, 1) })
	}
	// 64 callers at once, as in a league: what a call costs when the cores
	// are kept busy, rather than woken for each call.
	b.Run("http-64", func(b *testing.B) { benchCall(b, transporttest.HTTP(), call, 64) })
}

func benchCall(b *testing.B, nw *transporttest.Net, call *protocol.ChooseParityCall, callers int) {
	{
		l, err := nw.Listen("bench", newTestMux())
		if err != nil {
			b.Fatal(err)
		}
		defer func() { nw.CloseIdle(); _ = l.Shutdown(context.Background()) }()
		c := transport.NewClient(nw, 5*time.Second)
		ctx := context.Background()
		ep := l.Endpoint()
		b.ReportAllocs()
		cpu := cputime.Process()
		if callers == 1 {
			for b.Loop() {
				var resp protocol.ChooseParityResponse
				if err := c.Call(ctx, ep, protocol.MethodChooseParity, call, &resp); err != nil {
					b.Fatal(err)
				}
			}
		} else {
			b.SetParallelism((callers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					var resp protocol.ChooseParityResponse
					if err := c.Call(ctx, ep, protocol.MethodChooseParity, call, &resp); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		// CPU time is steadier than wall time on a shared machine, and
		// counts what the hand-overs between goroutines cost on every core.
		b.ReportMetric(float64((cputime.Process()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
