package transport

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

type testKey struct{}

// TestSharedOf: the broadcast shared with a call is found whether the
// server is handed the call's context itself or one made from it, and the
// context its handler gets keeps every value and the deadline but not the
// broadcast, so that the handler's own calls do not carry it.
func TestSharedOf(t *testing.T) {
	b, err := protocol.NewBroadcast(&protocol.RoundCompleted{RoundID: 1})
	if err != nil {
		t.Fatal(err)
	}
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), testKey{}, "v"), time.Hour)
	defer cancel()
	dl, _ := parent.Deadline()
	call := &sharing{Context: parent, b: b}
	for name, ctx := range map[string]context.Context{
		"the call's context":       call,
		"a context made from it":   context.WithValue(call, noRetryKey{}, true),
		"a cancelable child of it": func() context.Context { c, cancel := context.WithCancel(call); t.Cleanup(cancel); return c }(),
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			got, hctx := sharedOf(ctx)
			is.Equal(got, b)
			is.Equal(hctx.Value(testKey{}), "v")
			hdl, ok := hctx.Deadline()
			is.True(ok)
			is.Equal(hdl, dl)
			again, _ := sharedOf(hctx)
			is.True(again == nil)                                       // the handler's own calls share nothing
			is.Equal(hctx.Value(noRetryKey{}), ctx.Value(noRetryKey{})) // values set after the call's kept
		})
	}
	t.Run("no broadcast", func(t *testing.T) {
		is := is.New(t)
		got, hctx := sharedOf(parent)
		is.True(got == nil)
		is.Equal(hctx, context.Context(parent))
	})
	t.Run("the parent's end ends the handler's", func(t *testing.T) {
		is := is.New(t)
		p, stop := context.WithCancel(context.Background())
		_, hctx := sharedOf(context.WithValue(&sharing{Context: p, b: b}, testKey{}, 1))
		is.NoErr(hctx.Err())
		stop()
		is.Equal(hctx.Err(), context.Canceled) // at once: a cancellation reaches its children before stop returns
	})
}
