package postgres_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/storetest"
)

// BenchmarkSaveResult: results of distinct matches written from many
// goroutines, as referees report them; each a fenced transaction.
func BenchmarkSaveResult(b *testing.B) {
	const matches = 100000
	s := started(b, pgtest.Database(b), storetest.OneRound(matches))
	ctx := testCtx(b)
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			if i > matches {
				b.Error("more results than matches")
				return
			}
			p := league.Pairing{Round: 1, MatchID: fmt.Sprintf("R1M%d", i)}
			if _, err := s.SaveResult(ctx, storetest.Win(p, "REF01", storetest.At(i))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
