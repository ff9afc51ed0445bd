package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// BenchmarkLeague plays whole leagues in one process, with the full codec
// and validation on every message; it reports matches per second and
// messages per match.
func BenchmarkLeague(b *testing.B) {
	for _, c := range []struct {
		net     string
		players int
	}{{"mem", 16}, {"mem", 64}, {"mem", 200}, {"http", 64}} {
		b.Run(fmt.Sprintf("%s/%d", c.net, c.players), func(b *testing.B) {
			cfg := config.Default()
			strategies := strategiesOfB(b, "random")
			var matches int
			start := time.Now()
			for b.Loop() {
				n := transporttest.Mem()
				if c.net == "http" {
					n = transporttest.HTTP()
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				lc, err := runLocalLeague(ctx, n, newAgentClient(n, cfg, slog.New(slog.DiscardHandler)),
					leagueSpec{cfg: cfg, seed: 1, players: c.players, referees: 1, maxConcurrent: 10, strategies: strategies},
					slog.New(slog.DiscardHandler))
				cancel()
				n.CloseIdle()
				if err != nil {
					b.Fatal(err)
				}
				matches += lc.TotalMatches
			}
			b.ReportMetric(float64(matches)/time.Since(start).Seconds(), "matches/s")
		})
	}
}
