package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/internal/cputime"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// BenchmarkLeague plays whole leagues in one process, with the full codec
// and validation on every message; it reports matches per second and
// messages per match. 300 players over HTTP are more agents than the HTTP
// client kept idle connections for until the seventeenth session (256):
// the size at which a league's calls began to dial, and the cube of its
// broadcasts' bytes, show there.
func BenchmarkLeague(b *testing.B) {
	for _, c := range []struct {
		net     string
		players int
	}{{"mem", 16}, {"mem", 64}, {"mem", 200}, {"http", 64}, {"http", 300}} {
		b.Run(fmt.Sprintf("%s/%d", c.net, c.players), func(b *testing.B) {
			cfg := config.Default()
			strategies := strategiesOfB(b, "random")
			var matches int
			var sent transport.Stats
			start, cpu := time.Now(), cputime.Process()
			for b.Loop() {
				n := transporttest.Mem()
				if c.net == "http" {
					n = transporttest.HTTP()
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				client := newAgentClient(n, cfg, slog.New(slog.DiscardHandler))
				lc, err := runLocalLeague(ctx, n, client,
					leagueSpec{cfg: cfg, seed: 1, players: c.players, referees: 1, maxConcurrent: 10, strategies: strategies},
					slog.New(slog.DiscardHandler))
				cancel()
				n.CloseIdle()
				if err != nil {
					b.Fatal(err)
				}
				matches += lc.TotalMatches
				sent.Messages += client.Stats().Messages
			}
			b.ReportMetric(float64(matches)/time.Since(start).Seconds(), "matches/s")
			// CPU time is steadier than wall time on a shared machine: the
			// number to compare changes by.
			b.ReportMetric(float64((cputime.Process()-cpu).Microseconds())/float64(matches), "cpu-us/match")
			b.ReportMetric(float64(sent.Messages)/float64(matches), "msgs/match")
		})
	}
}
