package league

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// scheduleFake is a store that records how a schedule is written to it,
// and what the manager shows while it is: the manager's lock must be free
// and the league starting, without a schedule, during every write.
type scheduleFake struct {
	Store // nil: no other write is made in these tests
	m     *Manager

	mu        sync.Mutex
	deadline  time.Time   // of the context of BeginSchedule
	deadlines []time.Time // of each write's context
	batches   []int
	rows      []ScheduleRow
	ended     int
	failures  []string
	// failAt makes the SaveMatches of that batch (1-based) fail.
	failAt int
}

func (f *scheduleFake) fail(what string) {
	f.failures = append(f.failures, what)
}

// during checks what the manager shows while the store writes.
func (f *scheduleFake) during(ctx context.Context, what string) {
	f.deadlines = append(f.deadlines, deadlineOf(ctx))
	if !f.m.mu.TryLock() {
		f.fail(what + ": the manager's lock is held during the write")
		return
	}
	defer f.m.mu.Unlock()
	if f.m.state != StateStarting {
		f.fail(what + ": the league is " + f.m.state + ", not STARTING")
	}
	if len(f.m.rounds) != 0 || f.m.total != 0 {
		f.fail(what + ": the schedule is shown before it is stored")
	}
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

func (f *scheduleFake) BeginSchedule(ctx context.Context, startedAt time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deadline = deadlineOf(ctx)
	f.during(ctx, "BeginSchedule")
	return nil
}

func (f *scheduleFake) SaveMatches(ctx context.Context, rows []ScheduleRow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, len(rows))
	f.during(ctx, "SaveMatches")
	if len(f.batches) == f.failAt {
		return errors.New("disk I/O error (simulated)")
	}
	f.rows = append(f.rows, rows...)
	return nil
}

func (f *scheduleFake) EndSchedule(ctx context.Context, total int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.during(ctx, "EndSchedule")
	f.ended = total
	return nil
}

// wholeFake is a store that is not a ScheduleWriter.
type wholeFake struct {
	Store
	deadline time.Time
	rounds   int
}

func (w *wholeFake) SaveSchedule(ctx context.Context, _ time.Time, rounds [][]Pairing) error {
	w.deadline, w.rounds = deadlineOf(ctx), len(rounds)
	return nil
}

// spans reports whether deadline is d after a moment between from and
// to: that of a context made then, however long the machine took.
func spans(deadline time.Time, d time.Duration, from, to time.Time) bool {
	return !deadline.Before(from.Add(d)) && !deadline.After(to.Add(d))
}

// TestScheduleWrittenInBatches starts a league of 1000 players on a store
// fake: its 499,500 matches are written in transactions of at most
// ScheduleBatch, in order, without the manager's lock and under a
// deadline that grows with them (a fixed 10 s failed such a start under
// load), and the league is shown started only once all are stored.
func TestScheduleWrittenInBatches(t *testing.T) {
	is := is.New(t)
	m, ids := registeredManager(1000)
	f := &scheduleFake{m: m}
	m.opts.Store = f
	before := time.Now()
	m.mu.Lock()
	err := m.startLocked(context.Background())
	m.mu.Unlock()
	after := time.Now()
	is.NoErr(err)

	const total = 1000 * 999 / 2
	is.Equal(f.failures, nil) // the lock free, the league STARTING and no schedule shown, at every write
	is.Equal(len(f.batches), (total+ScheduleBatch-1)/ScheduleBatch)
	for i, n := range f.batches {
		is.True(n <= ScheduleBatch) // a batch is bounded
		is.True(n > 0)
		if i < len(f.batches)-1 {
			is.Equal(n, ScheduleBatch) // and full but the last
		}
	}
	is.Equal(f.ended, total)
	slices.Sort(ids)
	want := Schedule(ids)
	k := 0
	for _, round := range want {
		for i, p := range round {
			if f.rows[k] != (ScheduleRow{Pairing: p, Position: i}) {
				t.Fatalf("row %d is %+v, want %+v at %d", k, f.rows[k], p, i)
			}
			k++
		}
	}
	is.Equal(k, len(f.rows)) // every match once, in order

	// One deadline for the whole write, of its size: beyond the 10 s of
	// one write.
	is.True(ScheduleTimeout(total) > 50*time.Second)
	is.True(spans(f.deadline, ScheduleTimeout(total), before, after))
	for _, d := range f.deadlines {
		is.Equal(d, f.deadlines[0]) // shared by every write of the schedule
	}
	is.Equal(m.state, StateRunning) // running once stored
	is.Equal(m.total, total)
	select {
	case <-m.started:
	default:
		t.Fatal("the league has not started")
	}
}

// TestScheduleTimeoutScales: a schedule's deadline is the one of a write
// and a margin for each match, whichever way the store writes it.
func TestScheduleTimeoutScales(t *testing.T) {
	is := is.New(t)
	is.Equal(ScheduleTimeout(0), storeTimeout)
	is.Equal(ScheduleTimeout(6), storeTimeout+6*scheduleRowTime)
	is.True(ScheduleTimeout(499500) >= 5*storeTimeout)

	m, _ := registeredManager(40)
	w := &wholeFake{}
	m.opts.Store = w
	before := time.Now()
	m.mu.Lock()
	is.NoErr(m.startLocked(context.Background()))
	m.mu.Unlock()
	after := time.Now()
	is.Equal(w.rounds, 39) // a store that writes the schedule whole is given it whole
	is.True(spans(w.deadline, ScheduleTimeout(780), before, after))
}

// TestScheduleWriteFails: a start whose schedule cannot be stored is E015,
// and leaves the league registering, to be started again.
func TestScheduleWriteFails(t *testing.T) {
	is := is.New(t)
	m, _ := registeredManager(60)
	f := &scheduleFake{m: m, failAt: 2}
	m.opts.Store = f
	m.mu.Lock()
	err := m.startLocked(context.Background())
	is.Equal(m.state, StateRegistration) // registering again
	is.Equal(len(m.rounds), 0)           // no schedule shown
	m.mu.Unlock()
	is.Equal(protocol.CodeOf(err), protocol.ErrInternal) // E015: not started
	is.Equal(f.ended, 0)

	f.failAt = 0
	m.mu.Lock()
	is.NoErr(m.startLocked(context.Background())) // started again: written whole
	m.mu.Unlock()
	is.Equal(f.ended, 60*59/2)
	is.Equal(m.state, StateRunning)
	is.Equal(f.failures, nil)
}
