package league

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

const (
	win  = protocol.ResultWin
	loss = protocol.ResultLoss
	draw = protocol.ResultDraw
	tl   = protocol.ResultTechnicalLoss
)

// res is the outcome of one match as apply sees it.
func res(a, b, statusA, statusB string) *outcome {
	return &outcome{MatchID: a + "-" + b, A: a, B: b, StatusA: statusA, StatusB: statusB}
}

func tableOf(s Scoring, ids []string, results ...*outcome) *table {
	t := newTable(s)
	for _, id := range ids {
		t.add(id, "Player "+id[1:])
	}
	for _, o := range results {
		t.apply(o)
	}
	return t
}

func row(rank int, id string, w, d, l, techLosses, pts int) protocol.StandingRow {
	return protocol.StandingRow{Rank: rank, PlayerID: id, DisplayName: "Player " + id[1:],
		Played: w + d + l, Wins: w, Draws: d, Losses: l, TechnicalLosses: techLosses, Points: pts}
}

func TestTableApply(t *testing.T) {
	is := is.New(t)
	tb := tableOf(DefaultScoring(), []string{"P01", "P02", "P03", "P04"},
		res("P01", "P02", win, loss),
		res("P03", "P04", draw, draw),
		res("P01", "P03", tl, win),
		res("P02", "P04", tl, tl),
	)
	is.Equal(tb.ranked(), []protocol.StandingRow{
		row(1, "P03", 1, 1, 0, 0, 4),
		row(2, "P01", 1, 0, 1, 1, 3),
		row(3, "P04", 0, 1, 1, 1, 1),
		row(4, "P02", 0, 0, 2, 1, 0),
	}) // played = W+D+L, technical losses inside losses

	// A result naming a player the table does not know counts for the other.
	tb.apply(res("P01", "P99", win, loss))
	got := tb.ranked()
	is.Equal(len(got), 4)                          // no row for P99
	is.Equal(got[0], row(1, "P01", 2, 0, 1, 1, 6)) // P01 counted

	// Adding a player twice keeps its record.
	tb.add("P01", "Other")
	is.Equal(tb.ranked()[0], row(1, "P01", 2, 0, 1, 1, 6)) // record kept
}

func TestTableScoring(t *testing.T) {
	is := is.New(t)
	is.Equal(DefaultScoring(), Scoring{Win: 3, Draw: 1, Loss: 0}) // the spec's 3/1/0

	tb := tableOf(Scoring{Win: 2, Draw: 1, Loss: 0}, []string{"P01", "P02", "P03"},
		res("P01", "P02", win, loss),
		res("P02", "P03", draw, draw),
		res("P03", "P01", win, tl),
	)
	is.Equal(tb.ranked(), []protocol.StandingRow{
		row(1, "P03", 1, 1, 0, 0, 3),
		row(2, "P01", 1, 0, 1, 1, 2),
		row(3, "P02", 0, 1, 1, 0, 1),
	}) // 2/1/0

	tb = tableOf(Scoring{Win: 5, Draw: 2, Loss: 1}, []string{"P01", "P02"},
		res("P01", "P02", win, tl), res("P02", "P01", draw, draw))
	is.Equal(tb.ranked(), []protocol.StandingRow{
		row(1, "P01", 1, 1, 0, 0, 7),
		row(2, "P02", 0, 1, 1, 1, 3),
	}) // 5/2/1: a technical loss is worth Loss
}

func TestTableTieBreaks(t *testing.T) {
	tests := []struct {
		name    string
		ids     []string
		results []*outcome
		want    []protocol.StandingRow
	}{{
		name:    "points",
		ids:     []string{"P01", "P02"},
		results: []*outcome{res("P01", "P02", loss, win)},
		want:    []protocol.StandingRow{row(1, "P02", 1, 0, 0, 0, 3), row(2, "P01", 0, 0, 1, 0, 0)},
	}, {
		// P01 and P02 have 3 points each; P02 won a match, P01 drew three.
		name: "wins before id",
		ids:  []string{"P01", "P02", "P03", "P04", "P05"},
		results: []*outcome{
			res("P01", "P03", draw, draw), res("P01", "P04", draw, draw), res("P01", "P05", draw, draw),
			res("P02", "P03", win, loss),
		},
		want: []protocol.StandingRow{
			row(1, "P02", 1, 0, 0, 0, 3),
			row(2, "P01", 0, 3, 0, 0, 3),
			row(3, "P03", 0, 1, 1, 0, 1),
			row(4, "P04", 0, 1, 0, 0, 1),
			row(5, "P05", 0, 1, 0, 0, 1),
		},
	}, {
		// P01 and P02: 3 points, one win each; P01 beat P02, but P01 has a
		// technical loss: fewer technical losses come before head to head.
		name: "technical losses before head to head",
		ids:  []string{"P01", "P02", "P03", "P04"},
		results: []*outcome{
			res("P01", "P02", win, loss), res("P01", "P03", tl, tl), res("P02", "P04", win, loss),
		},
		want: []protocol.StandingRow{
			row(1, "P02", 1, 0, 1, 0, 3),
			row(2, "P01", 1, 0, 1, 1, 3),
			row(3, "P04", 0, 0, 1, 0, 0),
			row(4, "P03", 0, 0, 1, 1, 0),
		},
	}, {
		// P01 and P02 tied on points, wins and technical losses; P02 beat P01.
		name: "head to head of two",
		ids:  []string{"P01", "P02", "P03", "P04"},
		results: []*outcome{
			res("P02", "P01", win, loss), res("P01", "P03", win, loss),
			res("P02", "P04", loss, win), res("P03", "P04", draw, draw),
		},
		want: []protocol.StandingRow{
			row(1, "P04", 1, 1, 0, 0, 4),
			row(2, "P02", 1, 0, 1, 0, 3),
			row(3, "P01", 1, 0, 1, 0, 3),
			row(4, "P03", 0, 1, 1, 0, 1),
		},
	}, {
		// A full round robin of five: P01, P02 and P03 end on 5 points and
		// one win each. Among the three, P03 took 4 points, P02 2 and P01 1;
		// counted over all their matches they took 5 each, so only the head
		// to head among the still tied separates them, against id order.
		name: "head to head among three tied",
		ids:  []string{"P01", "P02", "P03", "P04", "P05"},
		results: []*outcome{
			res("P01", "P02", draw, draw), res("P03", "P01", win, loss), res("P02", "P03", draw, draw),
			res("P01", "P04", win, loss), res("P01", "P05", draw, draw),
			res("P02", "P05", win, loss), res("P04", "P02", win, loss),
			res("P03", "P04", draw, draw), res("P05", "P03", win, loss),
			res("P05", "P04", win, loss),
		},
		want: []protocol.StandingRow{
			row(1, "P05", 2, 1, 1, 0, 7),
			row(2, "P03", 1, 2, 1, 0, 5),
			row(3, "P02", 1, 2, 1, 0, 5),
			row(4, "P01", 1, 2, 1, 0, 5),
			row(5, "P04", 1, 1, 2, 0, 4),
		},
	}, {
		// Everything equal, head to head too (they drew): player id.
		name: "player id",
		ids:  []string{"P04", "P03", "P02", "P01"},
		results: []*outcome{
			res("P04", "P03", draw, draw), res("P02", "P04", win, loss),
			res("P01", "P03", win, loss), res("P02", "P01", draw, draw),
		},
		want: []protocol.StandingRow{
			row(1, "P01", 1, 1, 0, 0, 4),
			row(2, "P02", 1, 1, 0, 0, 4),
			row(3, "P03", 0, 1, 1, 0, 1),
			row(4, "P04", 0, 1, 1, 0, 1),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(tableOf(DefaultScoring(), tt.ids, tt.results...).ranked(), tt.want) // ranking
			// The order results arrive in does not matter.
			rev := make([]*outcome, len(tt.results))
			for i, o := range tt.results {
				rev[len(rev)-1-i] = o
			}
			ids := make([]string, len(tt.ids))
			for i, id := range tt.ids {
				ids[len(ids)-1-i] = id
			}
			is.Equal(tableOf(DefaultScoring(), ids, rev...).ranked(), tt.want) // ranking of the reversed order
		})
	}
}

func TestTableEmpty(t *testing.T) {
	is := is.New(t)
	is.Equal(newTable(DefaultScoring()).ranked(), []protocol.StandingRow{}) // no players, no rows
	is.Equal(tableOf(DefaultScoring(), []string{"P02", "P01"}).ranked(), []protocol.StandingRow{
		row(1, "P01", 0, 0, 0, 0, 0), row(2, "P02", 0, 0, 0, 0, 0),
	}) // before any result: by id
}

func strp(s string) *string { return &s }
func intp(n int) *int       { return &n }

func TestOutcomeOf(t *testing.T) {
	const a, b = "P01", "P02"
	score := map[string]any{a: 3, b: 0}
	tlOf := func(ids ...string) *protocol.ResultDetails {
		d := &protocol.ResultDetails{}
		for _, id := range ids {
			d.TechnicalLosses = append(d.TechnicalLosses, protocol.TechnicalLoss{PlayerID: id, ErrorCode: protocol.ErrTimeout, Reason: "no answer"})
		}
		return d
	}
	tests := []struct {
		name             string
		result           protocol.MatchResult
		statusA, statusB string
		winner           string
	}{
		{"statuses, A wins", protocol.MatchResult{Winner: strp(a), Score: score, PlayerAStatus: win, PlayerBStatus: loss}, win, loss, a},
		{"statuses, B wins", protocol.MatchResult{Winner: strp(b), PlayerAStatus: loss, PlayerBStatus: win}, loss, win, b},
		{"statuses without winner", protocol.MatchResult{PlayerAStatus: loss, PlayerBStatus: win}, loss, win, b},
		{"statuses, draw", protocol.MatchResult{Winner: nil, PlayerAStatus: draw, PlayerBStatus: draw}, draw, draw, ""},
		{"statuses, draw, winner DRAW", protocol.MatchResult{Winner: strp("DRAW"), PlayerAStatus: draw, PlayerBStatus: draw}, draw, draw, ""},
		{"statuses, B technical loss", protocol.MatchResult{Winner: strp(a), MatchStatus: tl, PlayerAStatus: win, PlayerBStatus: tl, Details: tlOf(b)}, win, tl, a},
		{"statuses, both technical losses", protocol.MatchResult{MatchStatus: tl, PlayerAStatus: tl, PlayerBStatus: tl, Details: tlOf(a, b)}, tl, tl, ""},
		{"statuses, both lost", protocol.MatchResult{PlayerAStatus: loss, PlayerBStatus: loss}, loss, loss, ""},
		{"winner only: A (dialect-b)", protocol.MatchResult{Winner: strp(a), Score: score}, win, loss, a},
		{"winner only: B (dialect-b)", protocol.MatchResult{Winner: strp(b), Score: map[string]any{a: 0, b: 3}, Details: &protocol.ResultDetails{Outcome: "PLAYER_B_WIN"}}, loss, win, b},
		{"winner and a technical loss listed", protocol.MatchResult{Winner: strp(a), Details: tlOf(b)}, win, tl, a},
		{"winner B and A's technical loss listed", protocol.MatchResult{Winner: strp(b), Details: tlOf(a)}, tl, win, b},
		{"technical loss of A listed, no winner", protocol.MatchResult{Details: tlOf(a)}, tl, win, b},
		{"technical loss of B listed, no winner", protocol.MatchResult{Details: tlOf(b)}, win, tl, a},
		{"technical losses of both listed", protocol.MatchResult{Details: tlOf(a, b)}, tl, tl, ""},
		{"match_status TECHNICAL_LOSS only", protocol.MatchResult{MatchStatus: tl}, tl, tl, ""},
		{"winner null, score only: draw", protocol.MatchResult{Score: map[string]any{a: 1, b: 1}}, draw, draw, ""},
		{"winner DRAW", protocol.MatchResult{Winner: strp("DRAW")}, draw, draw, ""},
		{"winner draw", protocol.MatchResult{Winner: strp("draw")}, draw, draw, ""},
		{"winner empty", protocol.MatchResult{Winner: strp("")}, draw, draw, ""},
		{"one status missing: worked out from the winner", protocol.MatchResult{Winner: strp(b), PlayerAStatus: loss}, loss, win, b},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			r := tt.result
			o, err := outcomeOf(&protocol.MatchResultReport{RoundID: 1, MatchID: "R1M1", Result: &r}, a, b)
			is.NoErr(err)
			is.Equal(o.MatchID, "R1M1")
			is.Equal(o.A, a)
			is.Equal(o.B, b)
			is.Equal(o.StatusA, tt.statusA) // status of A
			is.Equal(o.StatusB, tt.statusB) // status of B
			is.Equal(o.Winner, tt.winner)   // winner
		})
	}
}

func TestOutcomeOfDetails(t *testing.T) {
	is := is.New(t)
	losses := []protocol.TechnicalLoss{{PlayerID: "P02", ErrorCode: protocol.ErrTimeout, Action: "CHOOSE_PARITY_RESPONSE", Reason: "no answer"}}
	o, err := outcomeOf(&protocol.MatchResultReport{RoundID: 2, MatchID: "R2M1", Result: &protocol.MatchResult{
		Winner: strp("P01"), PlayerAStatus: win, PlayerBStatus: tl,
		Details: &protocol.ResultDetails{DrawnNumber: intp(8), Choices: map[string]string{"P01": "even"},
			Reason: "P02 failed", TechnicalLosses: losses},
	}}, "P01", "P02")
	is.NoErr(err)
	is.Equal(*o, outcome{MatchID: "R2M1", A: "P01", B: "P02", StatusA: win, StatusB: tl, Winner: "P01",
		DrawnNumber: 8, ChoiceA: "even", TechnicalLosses: losses, Reason: "P02 failed"}) // every detail kept
	is.Equal(o.String(), "R2M1 P01 WIN–TECHNICAL_LOSS P02")
}

// TestOutcomeOfKeepsLittleText: what a referee writes in a report is kept
// (and stored) up to 256 bytes a text, one technical loss a player and a
// choice clipped as any echoed text: a report may be a megabyte, and a
// league half a million reports.
func TestOutcomeOfKeepsLittleText(t *testing.T) {
	is := is.New(t)
	long := strings.Repeat("é", 200) // 400 bytes
	o, err := outcomeOf(&protocol.MatchResultReport{RoundID: 2, MatchID: "R2M1", Result: &protocol.MatchResult{
		Winner: strp("P01"), PlayerAStatus: win, PlayerBStatus: tl,
		Details: &protocol.ResultDetails{Choices: map[string]string{"P01": strings.Repeat("x", 100), "P02": "odd"}, Reason: long,
			TechnicalLosses: []protocol.TechnicalLoss{
				{PlayerID: "P02", ErrorCode: protocol.ErrTimeout, Action: long, Reason: long},
				{PlayerID: "P02", ErrorCode: protocol.ErrInvalidMove, Reason: "again"},
			}},
	}}, "P01", "P02")
	is.NoErr(err)
	kept := strings.Repeat("é", 128) + "…" // 256 bytes and the mark
	is.Equal(*o, outcome{MatchID: "R2M1", A: "P01", B: "P02", StatusA: win, StatusB: tl, Winner: "P01",
		ChoiceA: strings.Repeat("x", 64) + "…", ChoiceB: "odd", Reason: kept,
		TechnicalLosses: []protocol.TechnicalLoss{{PlayerID: "P02", ErrorCode: protocol.ErrTimeout, Action: kept, Reason: kept}}})
}

func TestOutcomeOfRefusesContradictions(t *testing.T) {
	const a, b = "P01", "P02"
	tests := []struct {
		name   string
		result protocol.MatchResult
	}{
		{"winner is not a player", protocol.MatchResult{Winner: strp("P03")}},
		{"technical loss of a stranger", protocol.MatchResult{Details: &protocol.ResultDetails{
			TechnicalLosses: []protocol.TechnicalLoss{{PlayerID: "P03", ErrorCode: protocol.ErrTimeout}}}}},
		{"two winners", protocol.MatchResult{PlayerAStatus: win, PlayerBStatus: win}},
		{"win and draw", protocol.MatchResult{PlayerAStatus: draw, PlayerBStatus: win}},
		{"draw and loss", protocol.MatchResult{PlayerAStatus: draw, PlayerBStatus: loss}},
		{"winner against the statuses", protocol.MatchResult{Winner: strp(a), PlayerAStatus: loss, PlayerBStatus: win}},
		{"winner of a draw", protocol.MatchResult{Winner: strp(a), PlayerAStatus: draw, PlayerBStatus: draw}},
		{"winner of a double loss", protocol.MatchResult{Winner: strp(b), PlayerAStatus: tl, PlayerBStatus: tl}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			r := tt.result
			_, err := outcomeOf(&protocol.MatchResultReport{RoundID: 1, MatchID: "R1M1", Result: &r}, a, b)
			is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat) // E002
		})
	}
}

// rankedByDefinition ranks t as the rules say, from nothing: sorted on
// points, wins and technical losses, then each tied group on the points
// its players took from one another, then player id.
func rankedByDefinition(t *table) []string {
	var recs []*record
	for _, r := range t.rows {
		recs = append(recs, r)
	}
	key := func(r *record) [3]int { return [3]int{-r.points, -r.wins, r.tl} }
	h2h := func(r *record) int {
		n := 0
		for _, o := range recs {
			if key(o) == key(r) {
				n += r.h2hOf(o.idx)
			}
		}
		return n
	}
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if ka, kb := key(a), key(b); ka != kb {
			return slices.Compare(ka[:], kb[:]) < 0
		}
		if ha, hb := h2h(a), h2h(b); ha != hb {
			return ha > hb
		}
		return a.id < b.id
	})
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.id
	}
	return ids
}

// A table ranked again and again, each time from where the last ranking
// left it, ranks as one ranked from nothing: over whole random leagues,
// technical losses and ties in every rule included.
func TestRankedAfterRanked(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 2 + rng.IntN(11)
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("P%02d", i+1)
		}
		rng.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		tb := tableOf(DefaultScoring(), ids)
		statuses := [][2]string{{win, loss}, {loss, win}, {draw, draw}, {tl, win}, {win, tl}, {tl, tl}}
		for r, round := range Schedule(ids) {
			for _, p := range round {
				s := statuses[rng.IntN(len(statuses))]
				tb.apply(res(p.A, p.B, s[0], s[1]))
			}
			got := tb.ranked()
			want := rankedByDefinition(tb)
			for i, row := range got {
				if row.Rank != i+1 || row.PlayerID != want[i] {
					t.Fatalf("seed %d round %d: rank %d is %s (rank field %d), want %s", seed, r+1, i+1, row.PlayerID, row.Rank, want[i])
				}
			}
			if len(got) != len(want) {
				t.Fatalf("seed %d round %d: %d rows, want %d", seed, r+1, len(got), len(want))
			}
		}
	}
}
