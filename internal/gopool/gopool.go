// Package gopool runs functions on goroutines that are kept for a while
// after they finish, instead of on a new goroutine each time. A goroutine
// that calls through the protocol stack grows its stack to the depth of the
// codec; a new one per call pays for that growth (runtime.newstack) every
// time, a kept one once.
package gopool

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pool hands functions to idle goroutines. The zero value is ready to use;
// a Pool must not be copied after first use.
type Pool struct {
	once sync.Once
	idle chan func()
	// Idle is how long a goroutine waits for more work before it ends
	// (0: one second). Set it before first use.
	Idle time.Duration

	started atomic.Int64
}

// Started is the number of goroutines the pool has started.
func (p *Pool) Started() int64 { return p.started.Load() }

// Go runs f on an idle goroutine of the pool, or on a new one.
func (p *Pool) Go(f func()) {
	p.once.Do(func() {
		p.idle = make(chan func())
		if p.Idle <= 0 {
			p.Idle = time.Second
		}
	})
	select {
	case p.idle <- f:
	default:
		p.started.Add(1)
		go p.work(f)
	}
}

func (p *Pool) work(f func()) {
	t := time.NewTimer(p.Idle)
	defer t.Stop()
	for {
		f()
		t.Reset(p.Idle)
		select {
		case f = <-p.idle:
		case <-t.C:
			return
		}
	}
}

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
