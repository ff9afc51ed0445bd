package league

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/matryer/is"
)

// waitInLine waits until n matches wait for a slot.
func waitInLine(t *testing.T, p *pool, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		k := len(p.waiters)
		p.mu.Unlock()
		if k == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d matches in line, want %d", k, n)
		}
		runtime.Gosched()
	}
}

type acquired struct {
	who  int
	slot *agent
	err  error
}

// TestPoolFirstComeFirstServed: a slot that comes free goes to the match
// that has waited longest, and wakes that match alone.
func TestPoolFirstComeFirstServed(t *testing.T) {
	is := is.New(t)
	p := newPool()
	ref := &agent{id: "REF01"}
	got := make(chan acquired, 3)
	for i := range 3 {
		go func() {
			a, err := p.acquire(context.Background(), "")
			got <- acquired{i, a, err}
		}()
		waitInLine(t, p, i+1)
	}
	for want := range 3 {
		p.release(ref)
		g := <-got
		is.NoErr(g.err)
		is.Equal(g.who, want) // the oldest in line
		is.Equal(g.slot, ref)
		select {
		case g := <-got:
			t.Fatalf("match %d got a slot too", g.who) // one slot, one match
		default:
		}
	}
}

// TestPoolAvoid: a match that lost its referee gets another one's slot
// when there is one, and its old referee's otherwise.
func TestPoolAvoid(t *testing.T) {
	is := is.New(t)
	p := newPool()
	r1, r2 := &agent{id: "REF01"}, &agent{id: "REF02"}
	p.add(r1, 1)
	p.add(r2, 1)
	a, err := p.acquire(context.Background(), "REF01")
	is.NoErr(err)
	is.Equal(a, r2)
	a, err = p.acquire(context.Background(), "REF01")
	is.NoErr(err)
	is.Equal(a, r1) // the only one left

	got := make(chan acquired, 1)
	go func() {
		a, err := p.acquire(context.Background(), "REF02")
		got <- acquired{0, a, err}
	}()
	waitInLine(t, p, 1)
	p.mu.Lock()
	p.free = append(p.free, r2) // both come free at once
	p.free = append(p.free, r1)
	p.handOutLocked()
	p.mu.Unlock()
	is.Equal((<-got).slot, r1) // in line, it still avoids REF02
}

// TestPoolGiveUp: a match whose context ends leaves the line, and the next
// slot goes to the one behind it.
func TestPoolGiveUp(t *testing.T) {
	is := is.New(t)
	p := newPool()
	ref := &agent{id: "REF01"}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan acquired, 2)
	go func() {
		a, err := p.acquire(ctx, "")
		got <- acquired{0, a, err}
	}()
	waitInLine(t, p, 1)
	go func() {
		a, err := p.acquire(context.Background(), "")
		got <- acquired{1, a, err}
	}()
	waitInLine(t, p, 2)
	cancel()
	g := <-got
	is.Equal(g.who, 0)
	is.Equal(g.err, context.Canceled)
	waitInLine(t, p, 1)
	p.release(ref)
	g = <-got
	is.Equal(g.who, 1)
	is.Equal(g.slot, ref)
	is.Equal(len(p.free), 0)
}

// TestPoolQuiet: a quiet referee's slots wait while another referee is
// not quiet; a match in line gets one once it is heard from, or once
// every referee is quiet.
func TestPoolQuiet(t *testing.T) {
	is := is.New(t)
	p := newPool()
	r1, r2 := &agent{id: "REF01"}, &agent{id: "REF02"}
	p.add(r1, 1)
	p.add(r2, 1)
	ctx := context.Background()
	p.quieten(r1, 0)
	a, err := p.acquire(ctx, "")
	is.NoErr(err)
	is.Equal(a, r2) // r1's slot comes first in line, but r1 is quiet
	got := make(chan acquired, 1)
	go func() {
		a, err := p.acquire(ctx, "")
		got <- acquired{0, a, err}
	}()
	waitInLine(t, p, 1) // r1's slot is free, and not handed out
	p.heard(r1)
	g := <-got
	is.NoErr(g.err)
	is.Equal(g.slot, r1) // heard from: its slot goes

	p.release(r1)
	p.quieten(r1, 0) // heard from since that match was given it: not quiet
	a, err = p.acquire(ctx, "")
	is.NoErr(err)
	is.Equal(a, r1)
	p.release(r1)
	p.quieten(r1, p.heardCount(r1))
	go func() {
		a, err := p.acquire(ctx, "")
		got <- acquired{0, a, err}
	}()
	waitInLine(t, p, 1)
	p.quieten(r2, p.heardCount(r2)) // every referee quiet: theirs are the slots there are
	g = <-got
	is.NoErr(g.err)
	is.Equal(g.slot, r1)
}

// TestPoolResize: a referee's slots follow its capacity: more are there at
// once; fewer take its free ones at once and those in use as they come
// back, and a larger capacity again forgives those still owed first.
func TestPoolResize(t *testing.T) {
	is := is.New(t)
	p := newPool()
	r1, r2 := &agent{id: "REF01"}, &agent{id: "REF02"}
	p.add(r1, 3)
	p.add(r2, 1)
	ctx := context.Background()
	count := func(a *agent) int {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := 0
		for _, b := range p.free {
			if b == a {
				n++
			}
		}
		return n
	}
	take := func(want *agent) {
		t.Helper()
		got, err := p.acquire(ctx, "REF02") // REF01's slots first
		is.NoErr(err)
		is.Equal(got, want)
	}
	take(r1)
	take(r1) // two of REF01's three in use
	p.resize(r1, 3, 1)
	is.Equal(count(r1), 0) // its free one taken at once
	p.release(r1)
	is.Equal(count(r1), 0) // one in use taken as it comes back
	p.release(r1)
	is.Equal(count(r1), 1) // the one it has now
	is.Equal(count(r2), 1) // the other referee's untouched

	take(r1)
	p.resize(r1, 1, 0) // (as a capacity of 0 never is: owes its one in use)
	p.resize(r1, 0, 2) // forgiven that one, and given one more
	is.Equal(count(r1), 1)
	p.release(r1)
	is.Equal(count(r1), 2)
}
