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
//
// An idle goroutine waits on a channel of its own with a plain receive:
// no select and no timer of its own, which a hand-over per call would
// otherwise pay for (a timer reset, and a timer armed and disarmed for
// every wait). The goroutine idle longest is the last one picked, so that
// the ones not needed stay idle and end; one reaper, running while any
// goroutine is idle, ends those idle for Idle. Idle time is counted in the
// reaper's ticks, not read from the clock at every hand-over.
type Workers[T any] struct {
	// Work is what a goroutine does with an item.
	Work func(T)
	// Idle is how long a goroutine waits for more work before it ends
	// (0: one second); it may wait up to half as long again.
	Idle time.Duration

	mu sync.Mutex
	// idle are the goroutines waiting for work, idle longest first.
	idle    []*worker[T]
	reaping bool   // a reaper is running
	ticks   uint64 // the reaper's ticks so far, one every Idle/2
	started atomic.Int64
}

// worker is one kept goroutine.
type worker[T any] struct {
	items chan T // buffered: handing an idle worker its item never blocks
	since uint64 // the tick in which it went idle
}

// idleTicks is how many ticks a goroutine idle since an earlier tick has
// waited at least Idle: it went idle at most a tick after that one began.
const idleTicks = 3

// Go hands item to an idle goroutine, or to a new one.
func (w *Workers[T]) Go(item T) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		k := w.idle[n-1]
		w.idle[n-1] = nil
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		k.items <- item
		return
	}
	w.mu.Unlock()
	w.started.Add(1)
	go w.work(&worker[T]{items: make(chan T, 1)}, item)
}

// Started is the number of goroutines started so far.
func (w *Workers[T]) Started() int64 { return w.started.Load() }

func (w *Workers[T]) work(k *worker[T], item T) {
	for {
		w.Work(item)
		var zero T
		item = zero // not kept alive while idle
		w.mu.Lock()
		k.since = w.ticks
		w.idle = append(w.idle, k)
		if !w.reaping {
			w.reaping = true
			go w.reap()
		}
		w.mu.Unlock()
		var ok bool
		if item, ok = <-k.items; !ok {
			return // the reaper ended it
		}
	}
}

// reap ends the goroutines idle for Idle (up to half as long again), every
// Idle/2, until none is idle.
func (w *Workers[T]) reap() {
	idle := w.Idle
	if idle <= 0 {
		idle = time.Second
	}
	t := time.NewTimer(idle / 2)
	defer t.Stop()
	for range t.C {
		w.mu.Lock()
		w.ticks++
		n := 0
		for n < len(w.idle) && w.ticks-w.idle[n].since >= idleTicks {
			close(w.idle[n].items)
			n++
		}
		w.idle = append(w.idle[:0], w.idle[n:]...)
		clear(w.idle[len(w.idle):cap(w.idle)])
		if len(w.idle) == 0 {
			w.reaping = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		t.Reset(idle / 2)
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
