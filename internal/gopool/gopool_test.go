package gopool_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/gopool"
)

// TestGroup: every function runs, Wait waits for all of them, and a pool
// serves many groups.
func TestGroup(t *testing.T) {
	is := is.New(t)
	var p gopool.Pool
	var n atomic.Int64
	for range 10 {
		g := gopool.Group{Pool: &p}
		for range 100 {
			g.Go(func() { n.Add(1) })
		}
		g.Wait()
	}
	is.Equal(n.Load(), int64(1000))
}

// TestReuse: functions run one after another mostly find a goroutine kept
// from before; without the pool each would start its own.
func TestReuse(t *testing.T) {
	is := is.New(t)
	p := gopool.Pool{Idle: time.Minute}
	const n = 1000
	for range n {
		ran := make(chan struct{})
		p.Go(func() { close(ran) })
		<-ran
		runtime.Gosched() // let its goroutine come back for more
	}
	t.Logf("%d goroutines for %d functions", p.Started(), n)
	is.True(p.Started() < n/2)
}
