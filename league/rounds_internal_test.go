package league

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// roundEndManager is a manager of n players and one referee of capacity
// 10, halfway through its league: what a round's end works on.
func roundEndManager(tb testing.TB, n int) *Manager {
	tb.Helper()
	m := New(Options{LeagueID: "bench"}, nil, slog.New(slog.DiscardHandler))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("P%03d", i+1)
		a := &agent{id: ids[i], name: "Player " + ids[i], role: protocol.RolePlayer, token: "tok-" + ids[i]}
		m.agents[a.id] = a
		m.players = append(m.players, a)
		m.table.add(a.id, a.name)
	}
	ref := &agent{id: "REF01", role: protocol.RoleReferee, endpoint: "http://127.0.0.1:9001/mcp", capacity: 10}
	m.agents[ref.id] = ref
	m.referees = append(m.referees, ref)
	m.buildRoundsLocked(Schedule(ids))
	rng := rand.New(rand.NewPCG(1, 2))
	statuses := [][2]string{{win, loss}, {loss, win}, {draw, draw}}
	for _, ms := range m.rounds[:len(m.rounds)/2] {
		for _, mt := range ms {
			s := statuses[rng.IntN(len(statuses))]
			m.table.apply(&outcome{A: mt.A, B: mt.B, StatusA: s[0], StatusB: s[1]})
		}
	}
	return m
}

// BenchmarkRoundEnd is the work between a round's last result and its
// broadcasts, which one goroutine does while the round's matches are over
// and the next round's have not begun: the standings, the next round's
// announcement and its recipients in match order.
func BenchmarkRoundEnd(b *testing.B) {
	for _, n := range []int{16, 200} {
		m := roundEndManager(b, n)
		r := len(m.rounds) / 2
		b.Run(fmt.Sprintf("standings/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.mu.Lock()
				_ = m.standingsAfterLocked(r)
				m.mu.Unlock()
			}
		})
		b.Run(fmt.Sprintf("announcement/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = m.announcement(r + 1)
			}
		})
		b.Run(fmt.Sprintf("order/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = m.inMatchOrder(r + 1)
			}
		})
	}
}

// Every player is told once a round: those of the round's first match
// first, and so on, then those who sit the round out; call after call.
func TestInMatchOrder(t *testing.T) {
	is := is.New(t)
	m := roundEndManager(t, 7) // an odd number: one player sits out each round
	for range 2 {
		for r := 1; r <= len(m.rounds); r++ {
			var want []string
			seen := map[string]bool{}
			for _, mt := range m.rounds[r-1] {
				for _, id := range []string{mt.A, mt.B} {
					if !seen[id] {
						seen[id] = true
						want = append(want, id)
					}
				}
			}
			for _, a := range m.players {
				if !seen[a.id] {
					want = append(want, a.id)
				}
			}
			var got []string
			for _, a := range m.inMatchOrder(r) {
				got = append(got, a.id)
			}
			is.Equal(len(got), 7)
			is.Equal(got, want)
		}
	}
}

// The announced referees are their slots interleaved, match after match.
func TestAnnouncedReferees(t *testing.T) {
	is := is.New(t)
	m := roundEndManager(t, 12)
	m.referees = append(m.referees, &agent{id: "REF02", role: protocol.RoleReferee, endpoint: "http://127.0.0.1:9002/mcp", capacity: 2})
	ann := m.announcement(1).msg.(*protocol.RoundAnnouncement)
	const r1, r2 = "http://127.0.0.1:9001/mcp", "http://127.0.0.1:9002/mcp"
	var got []string
	for _, mt := range ann.Matches {
		got = append(got, mt.RefereeEndpoint)
	}
	// REF01 has 10 slots and REF02 2: REF01, REF02, REF01, REF02, then
	// REF01's other 8, and round again.
	is.Equal(got, []string{r1, r2, r1, r2, r1, r1})
}
