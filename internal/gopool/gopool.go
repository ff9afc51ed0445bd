// Package gopool runs work on goroutines that are kept for a while after
// they finish, instead of on a new goroutine each time. A goroutine that
// calls through the protocol stack grows its stack to the depth of the
// codec; a new one per call pays for that growth (runtime.newstack) every
// time, a kept one once.
package gopool

import (
	"sync"
	"sync/atomic"
	"time"
)

// Workers runs Work(item) on an idle goroutine, or a new one. Set Work
// (and Idle) before first use; a Workers must not be copied after it.
type Workers[T any] struct {
	// Work is what a goroutine does with an item.
	Work func(T)
	// Idle is how long a goroutine waits for more work before it ends
	// (0: one second).
	Idle time.Duration

	once    sync.Once
	idle    chan T
	started atomic.Int64
}

// Go hands item to an idle goroutine, or to a new one.
func (w *Workers[T]) Go(item T) {
	w.once.Do(func() {
		w.idle = make(chan T)
		if w.Idle <= 0 {
			w.Idle = time.Second
		}
	})
	select {
	case w.idle <- item:
	default:
		w.started.Add(1)
		go w.work(item)
	}
}

// Started is the number of goroutines started so far.
func (w *Workers[T]) Started() int64 { return w.started.Load() }

func (w *Workers[T]) work(item T) {
	t := time.NewTimer(w.Idle)
	defer t.Stop()
	for {
		w.Work(item)
		t.Reset(w.Idle)
		select {
		case item = <-w.idle:
		case <-t.C:
			return
		}
	}
}

// Pool runs functions on kept goroutines. The zero value is ready to use;
// a Pool must not be copied after first use.
type Pool struct {
	// Idle is how long a goroutine waits for more work before it ends
	// (0: one second). Set it before first use.
	Idle time.Duration

	once sync.Once
	w    Workers[func()]
}

// Go runs f on an idle goroutine of the pool, or on a new one.
func (p *Pool) Go(f func()) {
	p.once.Do(func() { p.w.Work, p.w.Idle = func(f func()) { f() }, p.Idle })
	p.w.Go(f)
}

// Started is the number of goroutines the pool has started.
func (p *Pool) Started() int64 { return p.w.Started() }

// Group runs functions on a pool and waits for them, as sync.WaitGroup.Go
// does on new goroutines.
type Group struct {
	Pool *Pool
	wg   sync.WaitGroup
}

// Go runs f on the group's pool.
func (g *Group) Go(f func()) {
	g.wg.Add(1)
	g.Pool.Go(func() {
		defer g.wg.Done()
		f()
	})
}

// Wait waits for every function the group ran.
func (g *Group) Wait() { g.wg.Wait() }
