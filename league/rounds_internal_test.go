package league

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// registeredManager is a manager of n players and one referee of
// capacity 10, registered and not started, and the players' ids.
func registeredManager(n int) (*Manager, []string) {
	m := New(Options{LeagueID: "bench"}, nil, slog.New(slog.DiscardHandler))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("P%03d", i+1)
		a := &agent{id: ids[i], name: "Player " + ids[i], role: protocol.RolePlayer}
		a.setToken("tok-" + ids[i])
		m.agents[a.id] = a
		m.players = append(m.players, a)
		m.table.add(a.id, a.name)
	}
	ref := &agent{id: "REF01", role: protocol.RoleReferee, endpoint: "http://127.0.0.1:9001/mcp", capacity: 10}
	m.agents[ref.id] = ref
	m.referees = append(m.referees, ref)
	return m, ids
}

// roundEndManager is registeredManager's manager of n players halfway
// through its league: what a round's end works on.
func roundEndManager(tb testing.TB, n int) *Manager {
	tb.Helper()
	m, ids := registeredManager(n)
	if err := m.buildRoundsLocked(Schedule(ids)); err != nil {
		tb.Fatal(err)
	}
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

// BenchmarkStart is the start of a league: its schedule made and its
// matches set up, by one goroutine under the manager's lock while every
// registered agent waits.
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{200, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				m, _ := registeredManager(n)
				b.StartTimer()
				m.mu.Lock()
				err := m.startLocked(context.Background())
				m.mu.Unlock()
				if err != nil || m.total != n*(n-1)/2 {
					b.Fatal(err, m.total)
				}
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

// holdingCaller holds the calls to the endpoints of hold until their
// channel is closed (or the call's deadline), and reports every call that
// went through on told.
type holdingCaller struct {
	hold map[string]chan struct{}
	told chan string

	mu     sync.Mutex
	ctxs   []context.Context   // of every call
	byWhom map[string][]string // the methods each endpoint was called with, in order
}

func (c *holdingCaller) Call(ctx context.Context, endpoint, method string, params, reply any) error {
	c.mu.Lock()
	c.ctxs = append(c.ctxs, ctx)
	c.mu.Unlock()
	if h := c.hold[endpoint]; h != nil {
		select {
		case <-h:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	c.byWhom[endpoint] = append(c.byWhom[endpoint], method)
	c.mu.Unlock()
	c.told <- endpoint
	return nil
}

// A broadcast whose first recipients hold their calls still tells the
// others while they hold: each of its workers starts the next, and each
// holds up one recipient only. Every recipient has every message in the
// end, and with fewer recipients than workers too.
func TestBroadcastPastSlowRecipients(t *testing.T) {
	for _, tc := range []struct{ n, held, workers int }{{40, 12, 64}, {40, 12, 13}, {5, 2, 64}, {1, 0, 64}, {0, 0, 64}} {
		t.Run(fmt.Sprintf("%d recipients %d held %d workers", tc.n, tc.held, tc.workers), func(t *testing.T) {
			is := is.New(t)
			c := &holdingCaller{hold: map[string]chan struct{}{}, told: make(chan string, 2*tc.n), byWhom: map[string][]string{}}
			m := New(Options{LeagueID: "slow", BroadcastConcurrency: tc.workers, CallTimeout: time.Minute}, c, slog.New(slog.DiscardHandler))
			release := make(chan struct{})
			var to []*agent
			for i := range tc.n {
				a := &agent{id: fmt.Sprintf("P%02d", i+1), role: protocol.RolePlayer, endpoint: fmt.Sprintf("mem://P%02d", i+1)}
				if i < tc.held {
					c.hold[a.endpoint] = release
				}
				to = append(to, a)
			}
			var thens atomic.Int64
			steps := []step{
				{method: protocol.MethodNotifyRoundCompleted, msg: &protocol.RoundCompleted{Envelope: m.envelope(protocol.TypeRoundCompleted, "conv-1", ""), RoundID: 1}},
				{method: protocol.MethodUpdateStandings, msg: &protocol.LeagueStandingsUpdate{Envelope: m.envelope(protocol.TypeLeagueStandingsUpdate, "conv-2", ""), RoundID: 1},
					then: func() { thens.Add(1) }},
			}
			told := m.tell(t.Context(), to, steps)
			// A broadcast held up by its first recipients would never get
			// there: the guard fails the test rather than hang it.
			guard, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			got := map[string]int{}
			for range 2 * (tc.n - tc.held) { // every message to every recipient not held, while the held ones hold
				select {
				case e := <-c.told:
					got[e]++
				case <-guard.Done():
					t.Fatalf("%d recipients told while %d held", len(got), tc.held)
				}
			}
			for i, a := range to {
				if i < tc.held {
					is.Equal(got[a.endpoint], 0) // held
					continue
				}
				is.Equal(got[a.endpoint], 2)     // told both messages
				is.True(told.heard(guard, a.id)) // and heard, at once
			}
			close(release)
			told.wait()
			is.Equal(thens.Load(), int64(1)) // the last step's then, once everyone had it
			close(c.told)
			for e := range c.told {
				got[e]++
			}
			for _, a := range to {
				is.Equal(got[a.endpoint], 2)                                                                                  // in the end, everyone had both
				is.Equal(c.byWhom[a.endpoint], []string{protocol.MethodNotifyRoundCompleted, protocol.MethodUpdateStandings}) // in order
			}
			for _, ctx := range c.ctxs {
				is.True(ctx.Err() != nil) // every call's deadline stopped once everyone had everything
			}
		})
	}
}
