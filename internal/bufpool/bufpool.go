// Package bufpool keeps byte buffers for use again. Unlike a sync.Pool of
// slices it allocates nothing per Put: the pointers that carry buffers
// through the pool are themselves kept for use again.
package bufpool

import "sync"

// Pool is a pool of byte buffers. The zero value keeps none; set Max.
type Pool struct {
	// Max is the largest capacity Put keeps: a rare large buffer is left
	// to the collector rather than held on to.
	Max int

	full  sync.Pool // *[]byte holding a buffer
	empty sync.Pool // *[]byte holding nothing, for Put to fill
}

// Get returns an empty buffer: one put before, or nil when there is none
// (append allocates it).
func (p *Pool) Get() []byte {
	h, _ := p.full.Get().(*[]byte)
	if h == nil {
		return nil
	}
	b := (*h)[:0]
	*h = nil
	p.empty.Put(h)
	return b
}

// Put keeps b for a later Get. The caller must not touch b after it.
func (p *Pool) Put(b []byte) {
	if cap(b) == 0 || cap(b) > p.Max {
		return
	}
	h, _ := p.empty.Get().(*[]byte)
	if h == nil {
		h = new([]byte)
	}
	*h = b[:0]
	p.full.Put(h)
}
