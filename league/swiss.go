package league

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/leaguectl/leaguectl/internal/rng"
)

// ErrSwissUnpairable is PairSwiss's error when no pairing of the round
// lets every pair meet at most once: possible only after more than half
// of N−1 rounds, and made rare there by looking ahead (docs/formats.md).
var ErrSwissUnpairable = errors.New("no swiss pairing without a repeat is left")

// swissBudget bounds the pairings PairSwiss tries for one round, and each
// look-ahead, so that a round is paired in bounded time whatever the
// results: past it, the best pairing found so far stands.
const swissBudget = 200_000

// swissLooks bounds the pairings of a round whose later rounds PairSwiss
// looks ahead to: past it, the first pairing found stands.
const swissLooks = 64

// SwissRound is what PairSwiss pairs a round from.
type SwissRound struct {
	// Seed is the league seed: it orders the players of equal score.
	Seed uint64
	// Players are every player of the league, in id order.
	Players []string
	// Points are each player's points in the standings so far.
	Points map[string]int
	// Played are the swiss rounds paired before, first to last: one
	// Pairing a pair (the first game of a pairing played several times).
	Played [][]Pairing
	// Rounds is the number of swiss rounds the league will play: a round
	// is paired so that the rounds after it can be paired too.
	Rounds int
}

// PairSwiss pairs the next swiss round, number len(in.Played)+1: the
// players ranked by points, ties in an order drawn once from the seed
// (so round 1 is paired from the seed alone), and paired top-down within
// score groups, Dutch-like: the top half of a group against its bottom
// half in order, the odd one out floating down to the next group. A pair
// that met before is never paired again: the search backtracks to the
// next best choice. With an odd count, one player sits out (a bye, no
// match and no points): the lowest ranked who has not sat out yet.
//
// The round's pairings are in board order (top first), numbered as round
// len(in.Played)+1, with roles given to whoever was PLAYER_A less often.
// PairSwiss is a pure function of in.
func PairSwiss(in SwissRound) ([]Pairing, error) {
	n := len(in.Players)
	round := len(in.Played) + 1
	if n < 2 {
		return nil, nil
	}
	s := newSwissState(in)
	var best []int
	guaranteed := in.Rounds <= s.size/2 || round >= in.Rounds
	budget := swissBudget
	var found []int
	looks := swissLooks
	s.search(&budget, func(mate []int) bool {
		if best == nil {
			best = slices.Clone(mate)
		}
		if guaranteed || looks == 0 {
			found = best
			return true
		}
		looks--
		// Beyond half of the rounds a pairing can leave a later round
		// with none: take one only if the rounds after it can be paired.
		if s.completable(mate, in.Rounds-round) {
			found = slices.Clone(mate)
			return true
		}
		return false
	})
	if found == nil {
		found = best
	}
	if found == nil {
		return nil, fmt.Errorf("swiss round %d of %d players: %w", round, n, ErrSwissUnpairable)
	}
	return s.pairings(round, found), nil
}

// swissState is a round's pairing problem over vertex numbers: the
// players in rank order, and with an odd count a last vertex that stands
// for the bye, which "meets" whoever sits out.
type swissState struct {
	ids   []string // by vertex; "" for the bye
	size  int      // vertices: even
	bye   int      // the bye's vertex, or -1
	group []int    // score group by vertex, 0 the top
	met   [][]bool // met[u][v]: u and v met (or u sat out, v the bye)
	roles []int    // times PLAYER_A less times PLAYER_B
	rank  []int    // by vertex: its place in the seed's order, for roles
}

func newSwissState(in SwissRound) *swissState {
	n := len(in.Players)
	// The seed's order of the players, drawn once for the league: it
	// breaks ties of points in every round.
	perm := rng.New(in.Seed, "swiss", "order").Perm(n)
	ids := slices.Clone(in.Players)
	place := make(map[string]int, n)
	for i, id := range in.Players {
		place[id] = perm[i]
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(in.Points[b], in.Points[a]); c != 0 {
			return c
		}
		return cmp.Compare(place[a], place[b])
	})
	s := &swissState{ids: ids, size: n, bye: -1}
	if n%2 == 1 {
		s.ids = append(s.ids, "")
		s.size, s.bye = n+1, n
	}
	vertex := make(map[string]int, s.size)
	for v, id := range s.ids {
		vertex[id] = v
	}
	s.group = make([]int, s.size)
	s.rank = make([]int, s.size)
	for v := 1; v < n; v++ {
		s.group[v] = s.group[v-1]
		if in.Points[s.ids[v]] != in.Points[s.ids[v-1]] {
			s.group[v]++
		}
	}
	if s.bye >= 0 {
		s.group[s.bye] = s.group[n-1] + 1
	}
	for v, id := range s.ids {
		s.rank[v] = place[id]
	}
	s.met = make([][]bool, s.size)
	for v := range s.met {
		s.met[v] = make([]bool, s.size)
	}
	s.roles = make([]int, s.size)
	for _, r := range in.Played {
		seen := make([]bool, s.size)
		for _, p := range r {
			a, b := vertex[p.A], vertex[p.B]
			s.met[a][b], s.met[b][a] = true, true
			seen[a], seen[b] = true, true
			s.roles[a]++
			s.roles[b]--
		}
		if s.bye >= 0 {
			for v := range n {
				if !seen[v] {
					s.met[v][s.bye], s.met[s.bye][v] = true, true
				}
			}
		}
	}
	return s
}

// search tries the round's pairings in order of preference, calling take
// with each (mate[v] is v's opponent) until it returns true or budget
// runs out.
func (s *swissState) search(budget *int, take func(mate []int) bool) bool {
	mate := make([]int, s.size)
	for v := range mate {
		mate[v] = -1
	}
	if s.bye >= 0 {
		// The bye first: to the lowest ranked who has not had one.
		for v := s.size - 2; v >= 0; v-- {
			if s.met[s.bye][v] {
				continue
			}
			mate[v], mate[s.bye] = s.bye, v
			if s.pairFrom(mate, budget, take) {
				return true
			}
			mate[v], mate[s.bye] = -1, -1
			if *budget <= 0 {
				return false
			}
		}
		return false
	}
	return s.pairFrom(mate, budget, take)
}

// pairFrom pairs the highest unpaired vertex with each of its candidates
// in turn (candidates), and the rest recursively.
func (s *swissState) pairFrom(mate []int, budget *int, take func(mate []int) bool) bool {
	*budget--
	if *budget < 0 {
		return false
	}
	p := slices.Index(mate, -1)
	if p < 0 {
		return take(mate)
	}
	for _, q := range s.candidates(mate, p) {
		mate[p], mate[q] = q, p
		if s.pairFrom(mate, budget, take) {
			return true
		}
		mate[p], mate[q] = -1, -1
		if *budget <= 0 {
			return false
		}
	}
	return false
}

// candidates are p's possible opponents (unpaired, not met), best first:
// of p's own score group, the one half the unpaired group below p (the
// Dutch system's first choice), then those nearest to it, below it
// first; then the players of the groups below, top-down (p floats down).
// p is the highest unpaired player, so no candidate is above it.
func (s *swissState) candidates(mate []int, p int) []int {
	var same []int
	end := p + 1
	for ; end < s.size && s.group[end] == s.group[p]; end++ {
		if mate[end] == -1 {
			same = append(same, end)
		}
	}
	out := make([]int, 0, s.size-p)
	if len(same) > 0 {
		// p and same are the group's unpaired players: p is the first of
		// its top half, and its Dutch opponent the first of the bottom half.
		ideal := (len(same)+1)/2 - 1
		out = append(out, same[ideal])
		for d := 1; len(out) < len(same); d++ {
			if i := ideal + d; i < len(same) {
				out = append(out, same[i])
			}
			if i := ideal - d; i >= 0 {
				out = append(out, same[i])
			}
		}
	}
	for v := end; v < s.size; v++ {
		if mate[v] == -1 {
			out = append(out, v)
		}
	}
	return slices.DeleteFunc(out, func(q int) bool { return s.met[p][q] || q == s.bye })
}

// completable reports whether, once mate is played, rounds more rounds
// can each be paired without a repeat: found one round after another,
// each the first the search finds. A true answer is certain, a false one
// may not be (each round is found greedily, within the budget).
func (s *swissState) completable(mate []int, rounds int) bool {
	met := make([][]bool, s.size)
	for v := range met {
		met[v] = slices.Clone(s.met[v])
		met[v][mate[v]] = true
	}
	t := &swissState{ids: s.ids, size: s.size, bye: -1, group: make([]int, s.size), met: met}
	for range rounds {
		budget := swissBudget / 10
		var next []int
		t.search(&budget, func(m []int) bool { next = slices.Clone(m); return true })
		if next == nil {
			return false
		}
		for v, u := range next {
			met[v][u] = true
		}
	}
	return true
}

// pairings are the pairings of mate as round r, top board first. The
// player who was PLAYER_A less often than PLAYER_B, by more, is PLAYER_A;
// on a tie, the one the
// seed's order puts first in odd rounds, the other in even ones. Two
// players who were both PLAYER_A more often cannot both be balanced: a
// player's roles differ by two at most, as the Dutch system's colours.
func (s *swissState) pairings(r int, mate []int) []Pairing {
	var out []Pairing
	for v := range s.size {
		u := mate[v]
		if u < v || v == s.bye || u == s.bye {
			continue
		}
		a, b := v, u
		switch {
		case s.roles[a] > s.roles[b]:
			a, b = b, a
		case s.roles[a] == s.roles[b] && (s.rank[a] < s.rank[b]) != (r%2 == 1):
			a, b = b, a
		}
		out = append(out, Pairing{A: s.ids[a], B: s.ids[b]})
	}
	return numberRound(r, out)
}
