package league_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

const (
	win  = protocol.ResultWin
	loss = protocol.ResultLoss
	draw = protocol.ResultDraw
	tl   = protocol.ResultTechnicalLoss
)

var eloPerNat = 400 / math.Ln10

func sig(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// games is a wins of A over B, and b of B over A.
func games(a, b int) []league.Game {
	var out []league.Game
	for range a {
		out = append(out, league.Game{A: "P01", B: "P02", StatusA: win, StatusB: loss})
	}
	for range b {
		out = append(out, league.Game{A: "P01", B: "P02", StatusA: loss, StatusB: win})
	}
	return out
}

// twoPlayers is the rating of the winner of a games of a+b, worked out
// apart from the package: by symmetry the ratings are x and −x, where the
// winner's gradient a − (a+b)·σ(2x) + ½ − σ(x) is 0 (its score against
// the other and its virtual draw against the mean); and the error of
// (r₁ − r₂)/2 from the 2×2 information [[w+u, −w], [−w, w+u]], w =
// (a+b)·p(1−p), u = σ(x)σ(−x): 1/(2(2w+u)).
func twoPlayers(a, b int) (elo, eloErr float64) {
	lo, hi := -10.0, 10.0
	for range 200 {
		x := (lo + hi) / 2
		if float64(a)+0.5-float64(a+b)*sig(2*x)-sig(x) > 0 {
			lo = x
		} else {
			hi = x
		}
	}
	x := (lo + hi) / 2
	p := sig(2 * x)
	w := float64(a+b) * p * (1 - p)
	u := sig(x) * sig(-x)
	return x * eloPerNat, 1.959963984540054 * math.Sqrt(1/(2*(2*w+u))) * eloPerNat
}

func TestRatings(t *testing.T) {
	t.Run("two players 3-1", func(t *testing.T) {
		is := is.New(t)
		got := league.Ratings([]string{"P01", "P02"}, games(3, 1))
		elo, eloErr := twoPlayers(3, 1)
		is.True(math.Abs(got[0].Elo-elo) < 1e-6)         // P01's rating
		is.True(math.Abs(got[1].Elo+elo) < 1e-6)         // P02's rating
		is.True(math.Abs(got[0].EloError-eloErr) < 1e-6) // P01's error
		is.True(math.Abs(got[1].EloError-eloErr) < 1e-6) // P02's error
		// Without the prior the difference is 400·log10(3) = 190.8; the
		// prior's virtual draws pull it in, by a few tens over 4 games.
		diff := got[0].Elo - got[1].Elo
		is.True(diff > 150 && diff < 190.85) // shrunk towards 0, not far
		t.Logf("3-1: %+.1f ± %.1f", got[0].Elo, got[0].EloError)
	})
	t.Run("the prior fades with games", func(t *testing.T) {
		is := is.New(t)
		got := league.Ratings([]string{"P01", "P02"}, games(300, 100))
		diff := got[0].Elo - got[1].Elo
		is.True(math.Abs(diff-400*math.Log10(3)) < 1) // 30-10 a hundred times over: the likelihood's 190.8
	})
	t.Run("symmetric results rate everyone 0", func(t *testing.T) {
		is := is.New(t)
		players := []string{"P01", "P02", "P03", "P04"}
		var gs []league.Game
		for i := range players {
			for j := i + 1; j < len(players); j++ {
				gs = append(gs, league.Game{A: players[i], B: players[j], StatusA: draw, StatusB: draw})
			}
		}
		// And a cycle: P01 > P02 > P03 > P04 > P01, each once.
		for i := range players {
			gs = append(gs, league.Game{A: players[i], B: players[(i+1)%4], StatusA: win, StatusB: loss})
		}
		for _, r := range league.Ratings(players, gs) {
			is.True(math.Abs(r.Elo) < 1e-9) // every rating 0
			is.True(r.EloError > 0)         // and uncertain
		}
	})
	t.Run("an unbeaten player is finite", func(t *testing.T) {
		is := is.New(t)
		got := league.Ratings([]string{"P01", "P02"}, games(10, 0))
		elo, _ := twoPlayers(10, 0)
		is.True(!math.IsInf(got[0].Elo, 0) && !math.IsNaN(got[0].Elo)) // finite
		is.True(math.Abs(got[0].Elo-elo) < 1e-6)                       // as worked out
		is.True(got[0].Elo > 200 && got[1].Elo < -200)                 // and clearly apart
	})
	t.Run("the error shrinks with games", func(t *testing.T) {
		is := is.New(t)
		few := league.Ratings([]string{"P01", "P02"}, games(3, 1))
		many := league.Ratings([]string{"P01", "P02"}, games(30, 10))
		more := league.Ratings([]string{"P01", "P02"}, games(300, 100))
		is.True(many[0].EloError < few[0].EloError)  // 40 games
		is.True(more[0].EloError < many[0].EloError) // 400 games
		// About 1/√games: ten times the games, about a third of the error.
		is.True(math.Abs(more[0].EloError/many[0].EloError-1/math.Sqrt(10)) < 0.02)
	})
	t.Run("technical losses", func(t *testing.T) {
		is := is.New(t)
		ps := []string{"P01", "P02"}
		asWin := league.Ratings(ps, []league.Game{{A: "P01", B: "P02", StatusA: win, StatusB: tl}})
		plain := league.Ratings(ps, []league.Game{{A: "P01", B: "P02", StatusA: win, StatusB: loss}})
		is.Equal(asWin, plain) // a technical loss is a loss, and a win to the other
		both := league.Ratings(ps, []league.Game{{A: "P01", B: "P02", StatusA: tl, StatusB: tl}})
		none := league.Ratings(ps, nil)
		is.Equal(both, none)       // both lost: nothing is known
		is.Equal(both[0].Elo, 0.0) // both at the mean
	})
	t.Run("the order of the games does not matter", func(t *testing.T) {
		is := is.New(t)
		players, gs := randomLeague(12, 3, 7)
		want := league.Ratings(players, gs)
		rng := rand.New(rand.NewPCG(1, 2))
		rng.Shuffle(len(gs), func(i, j int) { gs[i], gs[j] = gs[j], gs[i] })
		is.Equal(league.Ratings(players, gs), want) // to the last bit
	})
	t.Run("mean 0", func(t *testing.T) {
		is := is.New(t)
		players, gs := randomLeague(30, 1, 3)
		sum := 0.0
		for _, r := range league.Ratings(players, gs) {
			sum += r.Elo
		}
		is.True(math.Abs(sum) < 1e-6) // anchored at the mean
	})
}

// randomLeague is a round robin of n players played games times, of
// random results with the strongest players more likely to win.
func randomLeague(n, times int, seed uint64) ([]string, []league.Game) {
	rng := rand.New(rand.NewPCG(seed, 0))
	players := make([]string, n)
	for i := range players {
		players[i] = fmt.Sprintf("P%02d", i+1)
	}
	var gs []league.Game
	for range times {
		for i := range n {
			for j := i + 1; j < n; j++ {
				p := sig(float64(j-i) / float64(n))
				switch u := rng.Float64(); {
				case u < 0.1:
					gs = append(gs, league.Game{A: players[i], B: players[j], StatusA: draw, StatusB: draw})
				case u < 0.1+0.9*p:
					gs = append(gs, league.Game{A: players[i], B: players[j], StatusA: win, StatusB: loss})
				default:
					gs = append(gs, league.Game{A: players[i], B: players[j], StatusA: loss, StatusB: win})
				}
			}
		}
	}
	return players, gs
}

func FuzzRatings(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 2, 1, 2, 3, 2})
	f.Add([]byte{0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		const n = 6
		players := []string{"P01", "P02", "P03", "P04", "P05", "P06"}
		statuses := [][2]string{{win, loss}, {loss, win}, {draw, draw}, {tl, win}, {win, tl}, {tl, tl}, {loss, tl}}
		var gs []league.Game
		for i := 0; i+2 < len(data); i += 3 {
			s := statuses[int(data[i+2])%len(statuses)]
			gs = append(gs, league.Game{A: players[int(data[i])%n], B: players[int(data[i+1])%n], StatusA: s[0], StatusB: s[1]})
		}
		rs := league.Ratings(players, gs)
		sum := 0.0
		for _, r := range rs {
			if math.IsNaN(r.Elo) || math.IsInf(r.Elo, 0) || math.IsNaN(r.EloError) || math.IsInf(r.EloError, 0) || r.EloError <= 0 {
				t.Fatalf("rating %+v of %v", r, gs)
			}
			sum += r.Elo
		}
		if math.Abs(sum) > 1e-6 {
			t.Fatalf("mean %g, not 0", sum/n)
		}
	})
}

func TestCrosstableOf(t *testing.T) {
	is := is.New(t)
	players := []string{"P01", "P02", "P03"}
	gs := []league.Game{
		{A: "P01", B: "P02", StatusA: win, StatusB: loss},
		{A: "P02", B: "P01", StatusA: draw, StatusB: draw},
		{A: "P01", B: "P03", StatusA: win, StatusB: tl},
		{A: "P02", B: "P03", StatusA: tl, StatusB: tl},
	}
	ct := league.CrosstableOf(players, gs)
	is.Equal(ct, league.Crosstable{
		"P01": {"P02": "1-1-0", "P03": "1-0-0"},
		"P02": {"P01": "0-1-1", "P03": "0-0-1"},
		"P03": {"P01": "0-0-1", "P02": "0-0-1"}, // both lost: a loss in both rows
	})
	is.Equal(league.CrosstableOf([]string{"P03"}, gs), league.Crosstable{"P03": {"P01": "0-0-1", "P02": "0-0-1"}}) // one row
	is.Equal(league.CrosstableOf(players, nil), league.Crosstable{"P01": {}, "P02": {}, "P03": {}})                // before any game
}

// BenchmarkRatings is the ratings of a round robin of 1000 players: 499,500
// results.
func BenchmarkRatings(b *testing.B) {
	for _, n := range []int{100, 1000} {
		players, gs := randomLeague(n, 1, 5)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				league.Ratings(players, gs)
			}
		})
	}
}
