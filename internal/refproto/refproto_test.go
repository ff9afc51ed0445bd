package refproto

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"
)

var runs = map[string]func(context.Context, time.Duration) (Result, error){
	"channels": Channels, "http": HTTP,
}

// TestPlay: both ways of moving the prototype's calls play whole matches,
// every reply checked, for the time they were given and not until the
// test's deadline.
func TestPlay(t *testing.T) {
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const d = 100 * time.Millisecond
			res, err := run(ctx, d)
			is.NoErr(err)
			is.True(res.Matches >= Concurrent) // at least a match on each way to a player
			is.True(res.Elapsed >= d)          // no player is left before d
			is.NoErr(ctx.Err())                // and the run ended of itself, not at the test's deadline
			is.True(res.PerSecond() > 0)
		})
	}
}

// TestPlayIsConcurrent: a run has Concurrent matches under way at once,
// and never more. Every way to a player holds its first call until all
// of them have one, so a run that played fewer at once would not end.
func TestPlayIsConcurrent(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var inFlight, most, arrived atomic.Int64
	all := make(chan struct{})
	r := &rig{}
	for range Concurrent {
		first := true
		r.trips = append(r.trips, func(ctx context.Context, body []byte) ([]byte, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				if m := most.Load(); n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			if first {
				first = false
				if arrived.Add(1) == Concurrent {
					close(all)
				}
				select {
				case <-all:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return serve(body)
		})
	}
	res, err := r.play(ctx, 0, 3*Concurrent)
	is.NoErr(err)
	is.Equal(res.Matches, 3*Concurrent)      // the limit, every match played
	is.Equal(most.Load(), int64(Concurrent)) // matches at once
}

func TestExchangeChecksTheReply(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	c := newCall(3)
	is.NoErr(exchange(ctx, 7, &c, func(_ context.Context, b []byte) ([]byte, error) { return serve(b) }))
	// A reply with another id does not answer the call.
	err := exchange(ctx, 7, &c, func(_ context.Context, b []byte) ([]byte, error) {
		return []byte(`{"jsonrpc":"2.0","id":8,"result":{"player_id":"P03","parity_choice":"odd"}}`), nil
	})
	is.True(err != nil)
	_, err = newChannels().play(ctx, 0, 0)
	is.True(err != nil) // nothing bounds the run
}

// TestStopsWithCtx: a context that ends mid-run ends the run, the calls it
// cut short in the middle of an exchange included (through channels their
// player goroutines had a reply nobody would take).
func TestStopsWithCtx(t *testing.T) {
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := run(ctx, time.Hour)
				done <- err
			}()
			stop := time.AfterFunc(50*time.Millisecond, cancel) // a run under way
			defer stop.Stop()
			select {
			case err := <-done:
				is.True(err != nil) // cut short
			case <-time.After(20 * time.Second):
				t.Fatal("the run did not return after its context ended")
			}
		})
	}
}

// BenchmarkReference is the prototype's cost, beside BenchmarkLeague's:
// one op is Concurrent matches played at once, one on each way to a
// player, set up once for the whole benchmark.
func BenchmarkReference(b *testing.B) {
	for name, newRig := range map[string]func() (*rig, error){
		"channels": func() (*rig, error) { return newChannels(), nil },
		"http":     newHTTP,
	} {
		b.Run(name, func(b *testing.B) {
			r, err := newRig()
			if err != nil {
				b.Fatal(err)
			}
			defer r.close()
			for b.Loop() {
				if _, err := r.play(context.Background(), 0, Concurrent); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(Concurrent*b.N)/b.Elapsed().Seconds(), "matches/s")
		})
	}
}
