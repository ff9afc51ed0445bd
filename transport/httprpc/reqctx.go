package httprpc

import (
	"context"
	"sync"
	"time"
)

// reqCtx is the context of a single request on the fast path: the
// connection's (its values, and its end when the client goes away or the
// server closes) with the request's bound as its deadline. The server's
// watcher ends it at the bound with context.DeadlineExceeded, and the
// server with context.Canceled when the handler returns, as a
// context.WithTimeout cancelled on return would end: the same answers,
// without a timer per request. Its done channel, and its watch on the
// connection's context, are made only when something asks for them.
//
// It implements AfterFunc, so that contexts derived from it (WithCancel,
// WithTimeout, context.AfterFunc) are told of its end, with its error,
// without a goroutine each; and it hides the context package's own key
// for cancelable contexts (the only *int key), so that context.Cause of
// it is its own error, not the cause of the connection's context ending
// later.
type reqCtx struct {
	parent context.Context
	until  time.Time // set before the handler runs, read-only after

	mu    sync.Mutex
	err   error         // why it ended; nil while it has not
	done  chan struct{} // made when asked for; closed when it ends
	funcs map[*func()]struct{}
	stop  func() bool // ends the watch on parent; nil while there is none
}

func (r *reqCtx) Deadline() (time.Time, bool) { return r.until, true }

// Value is the connection context's, except for the context package's key
// for its cancelable contexts (the only *int key), which it hides.
func (r *reqCtx) Value(key any) any {
	if _, ok := key.(*int); ok {
		return nil
	}
	return r.parent.Value(key)
}

func (r *reqCtx) Done() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.done = make(chan struct{})
		if r.err != nil {
			close(r.done)
		} else {
			r.watchLocked()
		}
	}
	return r.done
}

func (r *reqCtx) Err() error {
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if err := r.parent.Err(); err != nil {
		return r.end(err)
	}
	return nil
}

// AfterFunc arranges for f to run in its own goroutine once r ends, as
// context.AfterFunc does; stop undoes that if f has not been started.
func (r *reqCtx) AfterFunc(f func()) (stop func() bool) {
	r.mu.Lock()
	if r.err != nil {
		r.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	key := &f
	if r.funcs == nil {
		r.funcs = map[*func()]struct{}{}
	}
	r.funcs[key] = struct{}{}
	r.watchLocked()
	r.mu.Unlock()
	return func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		_, ok := r.funcs[key]
		delete(r.funcs, key)
		return ok
	}
}

// watchLocked makes r end with its parent, once.
func (r *reqCtx) watchLocked() {
	if r.stop == nil {
		r.stop = context.AfterFunc(r.parent, func() { r.end(r.parent.Err()) })
	}
}

// end ends r with err unless it has ended already, and returns the error
// it ended with.
func (r *reqCtx) end(err error) error {
	r.mu.Lock()
	if r.err != nil {
		err = r.err
		r.mu.Unlock()
		return err
	}
	r.err = err
	if r.done != nil {
		close(r.done)
	}
	funcs, stop := r.funcs, r.stop
	r.funcs, r.stop = nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
	for f := range funcs {
		go (*f)()
	}
	return err
}
