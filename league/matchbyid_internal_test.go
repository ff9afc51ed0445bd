package league

import (
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestMatchByID: every match of a schedule is found by its id; an id that
// names no match, or names one in another spelling, finds nothing.
func TestMatchByID(t *testing.T) {
	for _, n := range []int{2, 7, 12} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			is := is.New(t)
			m, ids := registeredManager(n)
			is.NoErr(m.buildRoundsLocked(Schedule(ids)))
			total := 0
			for _, ms := range m.rounds {
				for _, mt := range ms {
					is.True(m.matchByID(mt.MatchID) == mt)
					total++
				}
			}
			is.Equal(m.total, total)
			is.Equal(total, n*(n-1)/2)
			for _, id := range []string{"", "R", "R1", "R1M", "RM1", "M1", "R0M1", "R1M0", "R01M1", "R1M01",
				"R+1M1", "R-1M1", "r1m1", "R1M1 ", " R1M1", "R1M1M1", "R99M1", "R1M99", "R1M1\x00",
				"R99999999999999999999M1", fmt.Sprintf("R%dM1", len(m.rounds)+1)} {
				is.True(m.matchByID(id) == nil) // names no match
			}
		})
	}
}

// TestMatchByIDMisplaced: a schedule whose ids do not name their places
// (matches stored in another order, or named otherwise) finds each match
// by its id.
func TestMatchByIDMisplaced(t *testing.T) {
	is := is.New(t)
	m, ids := registeredManager(6)
	rounds := Schedule(ids)
	rounds[1][0], rounds[1][2] = rounds[1][2], rounds[1][0] // stored in another order
	rounds[2][1].MatchID = "match-7"                        // named otherwise
	rounds[3][0].MatchID = "R1M3"                           // names a place another match holds
	rounds[0][2].MatchID = "R1M9"
	is.NoErr(m.buildRoundsLocked(rounds))
	for _, ms := range m.rounds {
		for _, mt := range ms {
			is.True(m.matchByID(mt.MatchID) == mt)
		}
	}
	is.True(m.matchByID("R2M2") == m.rounds[1][1]) // still at its place
	is.True(m.matchByID("R4M1") == nil)            // renamed: its old name finds nothing
}

// TestMatchByIDDuplicate: a schedule that names two matches alike (a
// store of another making could hold one) is refused, whichever places
// the two hold, rather than one of them never being found.
func TestMatchByIDDuplicate(t *testing.T) {
	for name, rename := range map[string]func(rounds [][]Pairing){
		"one at its place": func(rounds [][]Pairing) { rounds[2][1].MatchID = "R1M1" },
		"neither":          func(rounds [][]Pairing) { rounds[2][1].MatchID, rounds[3][0].MatchID = "x", "x" },
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			m, ids := registeredManager(6)
			rounds := Schedule(ids)
			rename(rounds)
			err := m.buildRoundsLocked(rounds)
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), "two matches"))
		})
	}
}

// FuzzMatchByID: whatever a report names, the match found, if any, is
// the one of that id, a scheduled id is always found, and finding does
// not panic.
func FuzzMatchByID(f *testing.F) {
	for _, id := range []string{"R1M1", "R3M2", "R0M0", "R01M1", "R+1M1", "R1M", "", "R9223372036854775807M1", "match-7", "R3M1"} {
		f.Add(id)
	}
	m, ids := registeredManager(8)
	rounds := Schedule(ids)
	rounds[2][1].MatchID = "match-7"
	rounds[2][0], rounds[2][2] = rounds[2][2], rounds[2][0]
	if err := m.buildRoundsLocked(rounds); err != nil {
		f.Fatal(err)
	}
	scheduled := map[string]bool{}
	for _, round := range rounds {
		for _, p := range round {
			scheduled[p.MatchID] = true
		}
	}
	f.Fuzz(func(t *testing.T, id string) {
		mt := m.matchByID(id)
		if mt != nil && mt.MatchID != id {
			t.Fatalf("%q found %q", id, mt.MatchID)
		}
		if mt == nil && scheduled[id] {
			t.Fatalf("%q, scheduled, not found", id)
		}
	})
}
