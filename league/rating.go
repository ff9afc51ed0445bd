package league

import (
	"cmp"
	"math"
	"slices"

	"github.com/leaguectl/leaguectl/protocol"
)

// Game is one counted result as the ratings and the crosstable read it:
// the two players and the status of each (WIN, LOSS, DRAW or
// TECHNICAL_LOSS).
type Game struct {
	A, B             string
	StatusA, StatusB string
}

// Rating is a player's Elo rating, anchored so that the players' mean is
// 0, and EloError the half-width of its 95% interval. docs/ratings.md
// says how they are computed and how to read them.
type Rating struct {
	Elo      float64 `json:"elo"`
	EloError float64 `json:"elo_error"`
}

// Standing is a standings row of leaguectl's own outputs (the table,
// --output json, query answers, the MCP tools): the spec's row and the
// player's rating. The protocol's messages to agents carry the spec's row
// alone, so that no agent reads fields the spec does not have.
type Standing struct {
	protocol.StandingRow
	Rating
}

// RateStandings is rows with each player's rating over games, rounded to
// a tenth of a point: the last digits of a maximum found by iteration are
// noise, and would differ between machines.
func RateStandings(rows []protocol.StandingRow, games []Game) []Standing {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.PlayerID
	}
	rs := Ratings(ids, games)
	out := make([]Standing, len(rows))
	for i, r := range rows {
		out[i] = Standing{StandingRow: r, Rating: Rating{Elo: round1(rs[i].Elo), EloError: round1(rs[i].EloError)}}
	}
	return out
}

func round1(x float64) float64 {
	r := math.Round(x*10) / 10
	if r == 0 {
		return 0 // not -0, which JSON would print as such
	}
	return r
}

// eloScale turns a rating on the logistic scale (the log of a player's
// strength) into Elo points: a difference of 400 is odds of 10 to 1.
const eloScale = 400 / math.Ln10

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// priorGames is the weight of the prior: each player has drawn that many
// virtual games against a virtual player rated at the mean. One is enough
// to keep an unbeaten or winless player finite (the likelihood alone has
// its maximum at infinity) while moving a player with tens of games by
// only a few points.
const priorGames = 1.0

// ratingTolerance is the largest change of any rating, on the logistic
// scale, at which the iterations stop: 4e-8 Elo points, far below the
// tenth of a point shown.
const ratingTolerance = 1e-9

// maxRatingSweeps bounds the iterations. Each sweep costs one pass over
// the pairs that met; a round robin converges in tens of sweeps, a league
// of very unequal players in a few hundred.
const maxRatingSweeps = 5000

// exactErrorPlayers is the most players whose error bars come from the
// inverse of the whole information matrix, an O(players³) factorisation
// (about 0.2 s at 1000 players, see BenchmarkRatings). Above it each
// player's variance is taken from its own information alone, scaled as
// the exact answer is for a round robin; docs/ratings.md.
const exactErrorPlayers = 1200

// pairing is what two players' games say: n games between players i < j,
// of which i scored s (a draw counting a half).
type pairing struct {
	i, j int32
	n, s float64
}

// edge is a pairing from one player's side.
type edge struct {
	opp  int32
	n, s float64
}

// Ratings is each player's rating over games, in the order of players:
// the maximum of the likelihood of a Bradley–Terry model, in which player
// i beats j with probability 1/(1+10^((Rj−Ri)/400)), with a draw counting
// half a win to each, and with the prior of priorGames virtual draws of
// each player against a player rated at the mean; then shifted so that the
// mean is 0. A technical loss is a loss to the one who has it and a win to
// its opponent; a match both players lost says nothing of who is stronger
// and is left out, as are games of a player not in players. The same
// players and games give the same ratings, in whatever order the games
// come.
func Ratings(players []string, games []Game) []Rating {
	n := len(players)
	out := make([]Rating, n)
	if n == 0 {
		return out
	}
	idx := make(map[string]int32, n)
	for i, p := range players {
		if _, dup := idx[p]; !dup {
			idx[p] = int32(i)
		}
	}
	pairs := pairingsOf(idx, games)
	adj := adjacency(n, pairs)
	r := solveRatings(adj)
	info := information(n, pairs, r)
	variance := anchoredVariance(info, adj, r)
	mean := 0.0
	for _, x := range r {
		mean += x
	}
	mean /= float64(n)
	for i := range out {
		out[i] = Rating{Elo: (r[i] - mean) * eloScale, EloError: z95 * math.Sqrt(max(variance[i], 0)) * eloScale}
	}
	return out
}

// scoreOf is what a game says: A's score (1, ½ or 0), and whether it
// says anything.
func scoreOf(g Game) (float64, bool) {
	lost := func(s string) bool { return s == protocol.ResultLoss || s == protocol.ResultTechnicalLoss }
	switch {
	case g.StatusA == protocol.ResultWin && lost(g.StatusB):
		return 1, true
	case lost(g.StatusA) && g.StatusB == protocol.ResultWin:
		return 0, true
	case g.StatusA == protocol.ResultDraw && g.StatusB == protocol.ResultDraw:
		return 0.5, true
	}
	return 0, false // both lost, or not counted
}

// pairingsOf sums games by pair of players, in the order of the players'
// indices: sums in a fixed order make the ratings independent of the
// order the games came in, to the last bit.
func pairingsOf(idx map[string]int32, games []Game) []pairing {
	// Up to denseIndexPlayers, a pair's place is found in an n×n array
	// (16 MB at the bound), which is several times faster than a map of
	// half a million pairs.
	const denseIndexPlayers = 2048
	n := len(idx)
	var dense []int32
	if n <= denseIndexPlayers {
		dense = make([]int32, n*n)
	}
	at := map[[2]int32]int{}
	place := func(a, b int32) (int, bool) {
		if dense != nil {
			k := dense[int(a)*n+int(b)]
			return int(k) - 1, k != 0
		}
		k, ok := at[[2]int32{a, b}]
		return k, ok
	}
	setPlace := func(a, b int32, k int) {
		if dense != nil {
			dense[int(a)*n+int(b)] = int32(k + 1)
			return
		}
		at[[2]int32{a, b}] = k
	}
	var pairs []pairing
	for _, g := range games {
		a, okA := idx[g.A]
		b, okB := idx[g.B]
		s, ok := scoreOf(g)
		if !okA || !okB || !ok || a == b {
			continue
		}
		if a > b {
			a, b, s = b, a, 1-s
		}
		k, seen := place(a, b)
		if !seen {
			k = len(pairs)
			setPlace(a, b, k)
			pairs = append(pairs, pairing{i: a, j: b})
		}
		pairs[k].n++
		pairs[k].s += s
	}
	slices.SortFunc(pairs, func(x, y pairing) int {
		if c := cmp.Compare(x.i, y.i); c != 0 {
			return c
		}
		return cmp.Compare(x.j, y.j)
	})
	return pairs
}

// adjacency is each player's pairings from its own side.
func adjacency(n int, pairs []pairing) [][]edge {
	deg := make([]int, n)
	for _, p := range pairs {
		deg[p.i]++
		deg[p.j]++
	}
	all := make([]edge, 2*len(pairs))
	adj := make([][]edge, n)
	off := 0
	for i, d := range deg {
		adj[i] = all[off : off : off+d]
		off += d
	}
	for _, p := range pairs {
		adj[p.i] = append(adj[p.i], edge{opp: p.j, n: p.n, s: p.s})
		adj[p.j] = append(adj[p.j], edge{opp: p.i, n: p.n, s: p.n - p.s})
	}
	return adj
}

// solveRatings is the maximum of the posterior on the logistic scale, by
// the minorise–maximise iteration of Hunter (2004) taken one player at a
// time (Gauss–Seidel): a player's strength becomes its score over the
// sum of its games' weights, 1/(its strength + the opponent's). Each step
// raises the posterior, so it converges from any start; the prior keeps
// every score above 0, so every strength stays finite and positive.
func solveRatings(adj [][]edge) []float64 {
	n := len(adj)
	gamma := make([]float64, n) // strengths: exp of the ratings
	for i := range gamma {
		gamma[i] = 1
	}
	const virtual = 1.0 // the virtual opponent's strength: rating 0
	for range maxRatingSweeps {
		worst := 0.0
		for i, es := range adj {
			score, weight := priorGames/2, priorGames/(gamma[i]+virtual)
			for _, e := range es {
				score += e.s
				weight += e.n / (gamma[i] + gamma[e.opp])
			}
			g := score / weight
			worst = max(worst, math.Abs(math.Log(g/gamma[i])))
			gamma[i] = g
		}
		// The likelihood does not change when every rating moves alike;
		// only the prior does, by a little: one player at a time, the
		// ratings would take thousands of sweeps to drift to where it
		// wants them. A step along that line to its best point (a
		// coordinate step as well, so each sweep still raises the
		// posterior) takes them there at once.
		t := bestShift(gamma, virtual)
		e := math.Exp(t)
		for i := range gamma {
			gamma[i] *= e
		}
		if worst < ratingTolerance && math.Abs(t) < ratingTolerance {
			break
		}
	}
	r := make([]float64, n)
	for i, g := range gamma {
		r[i] = math.Log(g)
	}
	return r
}

// bestShift is the t that, added to every rating, maximises the prior
// (the likelihood is the same for every t): where the players' expected
// score against the virtual player, Σσ(rᵢ+t), is half their number. It
// is found by Newton's method on that sum, increasing in t.
func bestShift(gamma []float64, virtual float64) float64 {
	t := 0.0
	half := float64(len(gamma)) / 2
	for range 50 {
		f, d := -half, 0.0
		for _, g := range gamma {
			p := sigmoid(math.Log(g/virtual) + t)
			f += p
			d += p * (1 - p)
		}
		if d == 0 {
			return t
		}
		step := max(min(f/d, 1), -1) // no leap where the sum is flat
		t -= step
		if math.Abs(step) < 1e-14 {
			break
		}
	}
	return t
}

// sigmoid is the probability that a player rated x above its opponent
// wins, on the logistic scale.
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// information is the observed Fisher information at r: the negative
// Hessian of the log posterior, n×n, row-major; nil above
// exactErrorPlayers, when only its diagonal is used (see
// anchoredVariance).
func information(n int, pairs []pairing, r []float64) []float64 {
	if n > exactErrorPlayers {
		return nil
	}
	h := make([]float64, n*n)
	for i := range n {
		p := sigmoid(r[i])
		h[i*n+i] = priorGames * p * (1 - p)
	}
	for _, pr := range pairs {
		i, j := int(pr.i), int(pr.j)
		p := sigmoid(r[i] - r[j])
		w := pr.n * p * (1 - p)
		h[i*n+i] += w
		h[j*n+j] += w
		h[i*n+j] -= w
		h[j*n+i] -= w
	}
	return h
}

// anchoredVariance is the variance of each player's rating less the mean
// of all, on the logistic scale: the diagonal of P·C·P, where C is the
// inverse of the information and P = I − 11ᵀ/n removes what all ratings
// share, which the mean anchor takes away. With info nil, each player's
// variance is 1/(its information)·(1−1/n)², which is exact for a round
// robin of players of equal strength and close for any round robin.
func anchoredVariance(info []float64, adj [][]edge, r []float64) []float64 {
	n := len(adj)
	v := make([]float64, n)
	if info == nil {
		shrink := (1 - 1/float64(n)) * (1 - 1/float64(n))
		for i, es := range adj {
			p := sigmoid(r[i])
			d := priorGames * p * (1 - p)
			for _, e := range es {
				q := sigmoid(r[i] - r[e.opp])
				d += e.n * q * (1 - q)
			}
			v[i] = shrink / d
		}
		return v
	}
	l := info
	if !cholesky(l, n) {
		// The prior makes the information positive definite; a failure
		// is rounding at extreme ratings, and the approximation serves.
		return anchoredVariance(nil, adj, r)
	}
	// C = L⁻ᵀL⁻¹: its diagonal is the squared norms of the columns of
	// L⁻¹, and C·1 two triangular solves.
	inv := invertLower(l, n)
	diag := make([]float64, n)
	for k := range n {
		row := inv[k*n : k*n+k+1]
		for i, x := range row {
			diag[i] += x * x
		}
	}
	c1 := make([]float64, n)
	for i := range c1 {
		c1[i] = 1
	}
	solveLower(l, n, c1)
	solveUpper(l, n, c1)
	total := 0.0
	for _, x := range c1 {
		total += x
	}
	fn := float64(n)
	for i := range v {
		v[i] = diag[i] - 2*c1[i]/fn + total/(fn*fn)
	}
	return v
}

// cholesky factors the symmetric positive definite a (n×n, row-major) in
// place into L with a = L·Lᵀ, L in the lower triangle; false if a is not
// positive definite.
func cholesky(a []float64, n int) bool {
	for j := range n {
		rowJ := a[j*n : j*n+j]
		d := a[j*n+j]
		for _, x := range rowJ {
			d -= x * x
		}
		if d <= 0 || math.IsNaN(d) {
			return false
		}
		d = math.Sqrt(d)
		a[j*n+j] = d
		for i := j + 1; i < n; i++ {
			rowI := a[i*n : i*n+j]
			s := a[i*n+j]
			for k, x := range rowI {
				s -= x * rowJ[k]
			}
			a[i*n+j] = s / d
		}
	}
	return true
}

// invertLower is the inverse of the lower triangle of l, lower
// triangular, row-major.
func invertLower(l []float64, n int) []float64 {
	inv := make([]float64, n*n)
	for i := range n {
		inv[i*n+i] = 1 / l[i*n+i]
		// Row i of L⁻¹: L⁻¹[i][j] = −(Σ_{k=j..i−1} L[i][k]·L⁻¹[k][j]) / L[i][i].
		acc := inv[i*n : i*n+i]
		for k := range i {
			lik := l[i*n+k]
			if lik == 0 {
				continue
			}
			for j, x := range inv[k*n : k*n+k+1] {
				acc[j] += lik * x
			}
		}
		d := -inv[i*n+i]
		for j := range acc {
			acc[j] *= d
		}
	}
	return inv
}

// solveLower solves L·x = b in place.
func solveLower(l []float64, n int, b []float64) {
	for i := range n {
		s := b[i]
		for k, x := range l[i*n : i*n+i] {
			s -= x * b[k]
		}
		b[i] = s / l[i*n+i]
	}
}

// solveUpper solves Lᵀ·x = b in place.
func solveUpper(l []float64, n int, b []float64) {
	for i := n - 1; i >= 0; i-- {
		b[i] /= l[i*n+i]
		for k, x := range l[i*n : i*n+i] {
			b[k] -= x * b[i]
		}
	}
}
