package refproto

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestPlay: both ways of moving the prototype's calls play every match
// and check every reply; a reply that answers another call is an error.
func TestPlay(t *testing.T) {
	for name, run := range map[string]func(context.Context, int, int) (float64, error){
		"channels": Channels, "http": HTTP,
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rate, err := run(ctx, 40, 4)
			is.NoErr(err)
			is.True(rate > 0)
		})
	}
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
	_, err = play(ctx, 0, 1, nil)
	is.True(err != nil) // nothing to play
}

// BenchmarkReference is the prototype's cost, beside BenchmarkLeague's:
// one op is one match of seven exchanges, 100 at once (a 200-player
// round) through channels and 64 over HTTP.
func BenchmarkReference(b *testing.B) {
	for name, c := range map[string]struct {
		run     func(context.Context, int, int) (float64, error)
		workers int
	}{"channels": {Channels, 100}, "http": {HTTP, 64}} {
		b.Run(name, func(b *testing.B) {
			var rate float64
			for b.Loop() {
				var err error
				if rate, err = c.run(context.Background(), 2000, c.workers); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rate, "matches/s")
		})
	}
}

// TestChannelsStopsWithCtx: a context that ends mid-run ends Channels,
// the calls it cut short in the middle of an exchange included (their
// player goroutines had a reply nobody would take).
func TestChannelsStopsWithCtx(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Channels(ctx, 1<<30, 100)
		done <- err
	}()
	stop := time.AfterFunc(20*time.Millisecond, cancel) // a run under way
	defer stop.Stop()
	select {
	case err := <-done:
		is.True(err != nil) // cut short
	case <-time.After(20 * time.Second):
		t.Fatal("Channels did not return after its context ended")
	}
}
