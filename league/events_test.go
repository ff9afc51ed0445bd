package league_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

func seqs(evs []league.Event) []uint64 {
	out := []uint64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

// TestEventsReplay: a watcher that comes back after event k is given the
// events after k that are still kept, and is told of a gap (it needs a
// snapshot) when some are not; one up to date is given none; events go
// on from where it left off.
func TestEventsReplay(t *testing.T) {
	is := is.New(t)
	clock := func() time.Time { return time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC) }
	e := league.NewEvents("L", 1, 4, clock, nil)
	for range 6 {
		e.Publish(league.EventRoundStarted, nil)
	}
	is.Equal(e.Last(), uint64(6))
	missed, gap, _, cancel := e.Subscribe(3)
	cancel()
	is.Equal(seqs(missed), []uint64{4, 5, 6})
	is.True(!gap)
	_, gap, _, cancel = e.Subscribe(1) // 2 is no longer kept (4 are)
	cancel()
	is.True(gap)
	_, gap, _, cancel = e.Subscribe(9) // a number not given: of before a restart
	cancel()
	is.True(gap)
	missed, gap, next, cancel := e.Subscribe(6)
	defer cancel()
	is.Equal(len(missed), 0)
	is.True(!gap)
	ev := e.Publish(league.EventMatchStarted, "m")
	is.Equal(<-next, ev)
	is.Equal(ev.At, clock())
	is.Equal(ev.LeagueID, "L")
}

// TestEventsAfterRestart: a manager restarted numbers its events from the
// bound it had reserved, above every number given before; a watcher that
// comes back with one of those gets a snapshot, since they are not kept.
func TestEventsAfterRestart(t *testing.T) {
	is := is.New(t)
	var reserved []uint64
	e := league.NewEvents("L", 1, 8, nil, func(upto uint64) { reserved = append(reserved, upto) })
	for range 3 {
		e.Publish(league.EventRegistration, nil)
	}
	is.Equal(len(reserved), 1) // once for thousands of events
	again := league.NewEvents("L", reserved[0], 8, nil, nil)
	ev := again.Publish(league.EventLeagueStarted, nil)
	is.True(ev.Seq > 3)
	_, gap, _, cancel := again.Subscribe(3)
	cancel()
	is.True(gap)
}

// TestEventsSlowWatcherDropped: publishing never waits for a watcher; one
// that does not take its events is dropped (its channel closed) and comes
// back with the last it saw.
func TestEventsSlowWatcherDropped(t *testing.T) {
	is := is.New(t)
	e := league.NewEvents("L", 1, 16, nil, nil)
	_, _, next, cancel := e.Subscribe(0)
	defer cancel()
	for range 5000 {
		e.Publish(league.EventMatchFinished, nil)
	}
	n := 0
	for range next {
		n++
	}
	is.True(n > 0 && n < 5000) // some, then closed
	missed, gap, _, cancel2 := e.Subscribe(uint64(n))
	cancel2()
	is.True(gap || len(missed) > 0)
}

// TestEventsReserveAhead: the bound kept in the store is always half a
// step and more above the numbers given, so that a reservation's write,
// which the publisher does not wait for, has thousands of events' time to
// become durable; and reservations are few.
func TestEventsReserveAhead(t *testing.T) {
	is := is.New(t)
	var reserved []uint64
	e := league.NewEvents("L", 1, 8, nil, func(upto uint64) { reserved = append(reserved, upto) })
	for range 10000 {
		ev := e.Publish(league.EventMatchFinished, nil)
		is.True(reserved[len(reserved)-1] > ev.Seq+2048) // ahead of every number given
	}
	is.Equal(len(reserved), 5) // one write for about 2000 events
}

// seqStore is a SQLite store that tells of every bound of event numbers
// it has written.
type seqStore struct {
	*sqlite.Store
	saved chan uint64
}

func (s *seqStore) SaveEventSeq(ctx context.Context, upto uint64) error {
	err := s.Store.SaveEventSeq(ctx, upto)
	if err == nil {
		s.saved <- upto
	}
	return err
}

// TestEventsReservedInStore: a manager on a store reserves its first
// numbers before it serves, and the next ones as its events go, through
// the store, without its publishers waiting; restarted, it numbers from
// the bound written.
func TestEventsReservedInStore(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "league.db")
	s := &seqStore{Store: openStore(t, path), saved: make(chan uint64, 8)}
	h := newHarness(t, transporttest.Mem(), league.Options{Store: s})
	defer h.stop()
	is.Equal(<-s.saved, uint64(1+4096)) // Restore's, before any number is given
	var last league.Event
	for range 2050 {
		last = h.mgr.Events().Publish(league.EventMatchFinished, nil)
	}
	is.Equal(last.Seq, uint64(2050))
	var upto uint64
	select {
	case upto = <-s.saved:
	case <-h.ctx.Done():
		t.Fatal("no reservation written")
	}
	is.Equal(upto, uint64(2050+4096)) // half a step before the bound was reached
	h.stop()
	is.NoErr(s.Close())

	s2 := &seqStore{Store: openStore(t, path), saved: make(chan uint64, 8)}
	h2 := newHarnessAt(t, transporttest.Mem(), "league_manager-restarted", league.Options{Store: s2})
	defer h2.stop()
	is.Equal(<-s2.saved, upto+4096)          // its own first reservation, from the bound
	is.Equal(h2.mgr.Events().Last(), upto-1) // and its numbers go on from there
	ev := h2.mgr.Events().Publish(league.EventRoundStarted, nil)
	is.Equal(ev.Seq, upto)
}
