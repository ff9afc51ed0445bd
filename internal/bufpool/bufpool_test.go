package bufpool

import (
	"testing"

	"github.com/matryer/is"
)

func TestPool(t *testing.T) {
	is := is.New(t)
	p := Pool{Max: 64}
	is.Equal(p.Get(), []byte(nil)) // an empty pool has nothing
	b := append(make([]byte, 0, 32), "abc"...)
	p.Put(b)
	got := p.Get()
	is.Equal(len(got), 0)  // emptied
	is.Equal(cap(got), 32) // the buffer put
	is.Equal(&got[:1][0], &b[0])
	p.Put(make([]byte, 0, 65)) // over Max: not kept
	p.Put(nil)                 // nothing to keep
	is.Equal(p.Get(), []byte(nil))
}

// TestPoolAllocatesNothing: a buffer goes round without allocating once
// the pool's carriers exist.
func TestPoolAllocatesNothing(t *testing.T) {
	p := Pool{Max: 1 << 10}
	p.Put(make([]byte, 0, 512))
	allocs := testing.AllocsPerRun(100, func() {
		b := p.Get()
		p.Put(append(b, 'x'))
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Get and Put, want 0", allocs)
	}
}
