package league

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/matryer/is"
)

// TestErrorApproximation compares the error bars of a league above
// exactErrorPlayers, from each player's own information, with the exact
// ones, on a round robin of unequal players small enough for both.
func TestErrorApproximation(t *testing.T) {
	is := is.New(t)
	const n = 200
	rng := rand.New(rand.NewPCG(3, 4))
	var pairs []pairing
	for i := range int32(n) {
		for j := i + 1; j < n; j++ {
			games := 2.0
			p := sigmoid(3 * float64(j-i) / n) // up to 3 nats, 520 Elo, apart
			s := 0.0
			for range int(games) {
				if rng.Float64() < p {
					s++
				}
			}
			pairs = append(pairs, pairing{i: i, j: j, n: games, s: s})
		}
	}
	adj := adjacency(n, pairs)
	r := solveRatings(adj)
	exact := anchoredVariance(information(n, pairs, r), adj, r)
	approx := anchoredVariance(nil, adj, r)
	worst := 0.0
	for i := range exact {
		worst = max(worst, math.Abs(math.Sqrt(approx[i]/exact[i])-1))
	}
	t.Logf("worst relative difference of an error bar: %.3f", worst)
	is.True(worst < 0.1) // within 10% of the exact error bar
}
