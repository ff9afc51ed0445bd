package httprpc

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"
)

type valueKey struct{}

// TestReqCtx: a request context ends once, with its own error, its
// parent's end, or at its bound; it tells Done, AfterFunc and derived
// contexts, and passes its parent's values on.
func TestReqCtx(t *testing.T) {
	is := is.New(t)
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), valueKey{}, "v"))
	defer cancel()

	r := &reqCtx{parent: parent, until: time.Now().Add(time.Hour)}
	dl, ok := r.Deadline()
	is.True(ok && dl.Equal(r.until))
	is.Equal(r.Value(valueKey{}), "v") // the parent's values
	is.NoErr(r.Err())
	ran := make(chan struct{})
	r.AfterFunc(func() { close(ran) })
	stopped := r.AfterFunc(func() { t.Error("a stopped AfterFunc ran") })
	is.True(stopped())  // stopped before the end
	is.True(!stopped()) // once
	child, cancelChild := context.WithTimeout(r, 2*time.Hour)
	defer cancelChild()
	is.Equal(r.end(context.DeadlineExceeded), context.DeadlineExceeded)
	is.Equal(r.end(context.Canceled), context.DeadlineExceeded) // ends once
	<-r.Done()
	<-ran
	<-child.Done()
	is.Equal(child.Err(), context.DeadlineExceeded)          // derived contexts end as it did
	is.Equal(context.Cause(r), context.DeadlineExceeded)     // not the parent's
	is.Equal(context.Cause(child), context.DeadlineExceeded) // nor for them
	late := make(chan struct{})
	is.True(!r.AfterFunc(func() { close(late) })()) // after the end: runs at once
	<-late

	// The parent's end ends it, whether it is asked (Err) or waited on.
	r1 := &reqCtx{parent: parent, until: time.Now().Add(time.Hour)}
	done := r1.Done()
	r2 := &reqCtx{parent: parent, until: time.Now().Add(time.Hour)}
	cancel()
	is.Equal(context.Cause(r), context.DeadlineExceeded) // its own end, not the parent's later one
	<-done
	is.Equal(r1.Err(), context.Canceled)
	is.Equal(r2.Err(), context.Canceled)
	<-r2.Done()
}
