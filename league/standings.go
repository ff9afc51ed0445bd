package league

import (
	"cmp"
	"slices"
	"strings"

	"github.com/leaguectl/leaguectl/protocol"
)

// Scoring is the points of a win, a draw and a loss.
type Scoring struct{ Win, Draw, Loss int }

// DefaultScoring is the spec's 3/1/0.
func DefaultScoring() Scoring { return Scoring{Win: 3, Draw: 1, Loss: 0} }

// record is one player's line of the table, kept up to date result by
// result so that a ranking never replays the league.
type record struct {
	id, name                        string
	idx                             int // its place in table.order
	wins, draws, losses, tl, points int
	// h2h is the points this player took from each opponent, by the
	// opponent's idx, for the head-to-head tie-break: N² numbers over a
	// league, not N² map entries.
	h2h []int32
}

// addH2H adds pts taken from the opponent at idx.
func (r *record) addH2H(idx, pts int) {
	if idx >= len(r.h2h) {
		r.h2h = append(r.h2h, make([]int32, idx+1-len(r.h2h))...)
	}
	r.h2h[idx] += int32(pts)
}

// h2hOf is the points taken from the opponent at idx.
func (r *record) h2hOf(idx int) int {
	if idx < len(r.h2h) {
		return int(r.h2h[idx])
	}
	return 0
}

func (r *record) played() int { return r.wins + r.draws + r.losses }

// table is the standings.
type table struct {
	scoring Scoring
	rows    map[string]*record
	n       int // records so far: the next idx
	// order is every record, in the order of the last ranking and then
	// as added.
	order []*record
}

// h2hTie is a record of a group tied before head to head, and the points
// it took from the others of the group.
type h2hTie struct {
	r   *record
	h2h int
}

func newTable(s Scoring) *table { return &table{scoring: s, rows: map[string]*record{}} }

func (t *table) add(id, name string) {
	if _, ok := t.rows[id]; !ok {
		r := &record{id: id, name: name, idx: t.n}
		t.rows[id] = r
		t.order = append(t.order, r)
		t.n++
	}
}

// apply counts one result: a technical loss is a loss, counted again in
// technical losses.
func (t *table) apply(o *outcome) {
	for _, side := range [2]struct {
		id, opp, status string
	}{{o.A, o.B, o.StatusA}, {o.B, o.A, o.StatusB}} {
		r := t.rows[side.id]
		if r == nil {
			continue
		}
		pts := t.scoring.Loss
		switch side.status {
		case protocol.ResultWin:
			r.wins++
			pts = t.scoring.Win
		case protocol.ResultDraw:
			r.draws++
			pts = t.scoring.Draw
		case protocol.ResultTechnicalLoss:
			r.losses++
			r.tl++
		default:
			r.losses++
		}
		r.points += pts
		if opp := t.rows[side.opp]; opp != nil {
			r.addH2H(opp.idx, pts)
		}
	}
}

// ranked returns the table in rank order. The order is total and does not
// depend on the order results arrived in: points, then wins, then fewer
// technical losses, then the points taken in the matches among the players
// still tied, then player id.
//
// The records are sorted where the last ranking left them: a round moves
// few players far, and the sort (pattern-defeating quicksort) is nearly
// linear on an order that is nearly right. The order sorted from does not
// change the result, the comparison being total.
func (t *table) ranked() []protocol.StandingRow {
	recs := t.order
	slices.SortFunc(recs, func(a, b *record) int {
		if c := cmp.Compare(b.points, a.points); c != 0 {
			return c
		}
		if c := cmp.Compare(b.wins, a.wins); c != 0 {
			return c
		}
		if c := cmp.Compare(a.tl, b.tl); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	// Head to head within each group tied on points, wins and technical
	// losses: the points each took from the others of the group.
	var tied []h2hTie
	for lo := 0; lo < len(recs); {
		hi := lo + 1
		for hi < len(recs) && recs[hi].points == recs[lo].points && recs[hi].wins == recs[lo].wins && recs[hi].tl == recs[lo].tl {
			hi++
		}
		if hi-lo > 1 {
			group := recs[lo:hi]
			tied = tied[:0]
			for _, a := range group {
				h := 0
				for _, b := range group {
					h += a.h2hOf(b.idx)
				}
				tied = append(tied, h2hTie{a, h})
			}
			slices.SortFunc(tied, func(a, b h2hTie) int {
				if c := cmp.Compare(b.h2h, a.h2h); c != 0 {
					return c
				}
				return strings.Compare(a.r.id, b.r.id)
			})
			for i, x := range tied {
				group[i] = x.r
			}
		}
		lo = hi
	}
	out := make([]protocol.StandingRow, len(recs))
	for i, r := range recs {
		out[i] = protocol.StandingRow{
			Rank: i + 1, PlayerID: r.id, DisplayName: r.name,
			Played: r.played(), Wins: r.wins, Draws: r.draws, Losses: r.losses,
			TechnicalLosses: r.tl, Points: r.points,
		}
	}
	return out
}
