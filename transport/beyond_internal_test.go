package transport

import (
	"math"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// untilRule is the rule beyond must agree with.
func untilRule(m *Mux, dl time.Time) bool { return time.Until(dl) > m.timeout }

// TestBeyond: the handler bound is decided as time.Until decides it, for
// deadlines near and far, past, without a monotonic reading, and with a
// timeout too large to add to anything, before and after the clock
// readings beyond keeps have moved on.
func TestBeyond(t *testing.T) {
	for _, timeout := range []time.Duration{time.Second, time.Hour, math.MaxInt64} {
		m := NewMux(nil)
		m.SetHandlerTimeout(timeout)
		for range 2 {
			for _, ahead := range []time.Duration{-time.Hour, 0, time.Millisecond, timeout / 2, timeout + time.Minute,
				2 * timeout, 100 * 365 * 24 * time.Hour, math.MaxInt64} {
				for _, dl := range []time.Time{time.Now().Add(ahead), time.Now().Add(ahead).Round(0)} {
					want := untilRule(m, dl)
					if ahead != timeout/2 && ahead != timeout+time.Minute && ahead != 2*timeout {
						want = ahead > timeout // far from the bound: no race with the clock
					}
					if got := m.beyond(dl); got != want {
						t.Fatalf("timeout %v, deadline %v ahead (monotonic %v): beyond %v, want %v",
							timeout, ahead, dl != dl.Round(0), got, want)
					}
				}
			}
		}
	}
}

// TestBeyondWallStep: a deadline made from a wall time is compared with
// the wall clock, as time.Until compares it, even when the wall clock has
// been stepped back since the Mux was made (simulated by moving the wall
// reading of born an hour on; the monotonic one stays).
func TestBeyondWallStep(t *testing.T) {
	m := NewMux(nil)
	m.SetHandlerTimeout(time.Minute)
	// time.Time's first word holds, with a monotonic reading, the wall
	// seconds from bit 30 on.
	*(*uint64)(unsafe.Pointer(&m.born)) += uint64(3600) << 30
	dl := time.Now().Add(10 * time.Minute).Round(0)
	if !m.beyond(dl) || !untilRule(m, dl) {
		t.Fatal("a wall deadline 10 minutes on is beyond a 1-minute bound")
	}
}

// TestBeyondAfterSetHandlerTimeout: what beyond keeps does not outlive a
// change of the timeout, however calls made meanwhile interleave.
func TestBeyondAfterSetHandlerTimeout(t *testing.T) {
	for range 200 {
		m := NewMux(nil)
		m.SetHandlerTimeout(3 * time.Hour)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for range 50 {
					m.beyond(time.Now().Add(4 * time.Hour))
				}
			})
		}
		wg.Wait()
		m.SetHandlerTimeout(time.Second)
		if !m.beyond(time.Now().Add(time.Hour)) {
			t.Fatal("a deadline an hour on is beyond a 1-second bound")
		}
	}
}
