package transport

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"
)

// TestBreakerStates: threshold consecutive failures open the breaker (a
// success in between starts the count again; a call given up on counts
// for nothing); once the reset timeout is over, one probe at a time is let
// through, a probe given up on lets another through, and its answer closes
// the breaker (its failure opens it again); a result from a generation that
// is over changes nothing.
func TestBreakerStates(t *testing.T) {
	is := is.New(t)
	var changes []string
	b := &breaker{name: "mem://p", threshold: 2, reset: 0, onChange: func(_ string, from, to breakerState) {
		changes = append(changes, from.String()+">"+to.String())
	}}
	fail := errors.New("unreachable")
	call := func(err error) bool {
		v, ok := b.before()
		if ok {
			b.after(v, err)
		}
		return ok
	}
	is.True(call(fail))
	is.True(call(nil)) // the count starts again
	is.True(call(fail))
	is.True(call(context.Canceled)) // counts for nothing
	stale, _ := b.before()
	is.True(call(fail)) // the second in a row: open
	is.Equal(changes, []string{"closed>open"})
	b.after(stale, nil) // of the closed generation: ignored
	is.Equal(b.state(b.gen.Load()), open)

	// The reset timeout (0 here) is over: one probe at a time.
	probe, ok := b.before()
	is.True(ok)
	_, ok = b.before()
	is.True(!ok) // a second probe is refused
	b.after(probe, context.Canceled)
	probe, ok = b.before()
	is.True(ok) // the probe given up on let another through
	b.after(probe, fail)
	is.Equal(b.state(b.gen.Load()), open) // failed: open again
	probe, ok = b.before()
	is.True(ok)
	b.after(probe, nil)
	is.Equal(b.state(b.gen.Load()), closed)
	is.Equal(changes, []string{"closed>open", "open>half-open", "half-open>open", "open>half-open", "half-open>closed"})
	is.True(call(fail)) // a fresh count after closing
	is.Equal(b.state(b.gen.Load()), closed)
}
