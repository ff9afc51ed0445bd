// Package groupcommit hands the writes of many callers to one loop, which
// commits the writes that wait together, up to a bound, in one
// transaction: a caller waits only for the transaction that holds its
// write, and a store pays one commit (one flush of a disk, one round trip
// to a server) for all of them. The league's stores, SQLite's and
// PostgreSQL's, commit this way.
package groupcommit

import (
	"slices"
	"sync"
)

// Queue is the writes waiting for the loop. W is a caller's write, which
// carries its own way to hear its outcome: commit answers every write it
// is given.
type Queue[W comparable] struct {
	max    int
	commit func(batch []W)

	mu      sync.Mutex
	queue   []W
	closed  bool
	kick    chan struct{}
	quit    chan struct{}
	stopped chan struct{}
	closing sync.Once
}

// Start starts the loop, which calls commit with the writes waiting, at
// most max at a time, in the order they came.
func Start[W comparable](max int, commit func(batch []W)) *Queue[W] {
	q := &Queue[W]{max: max, commit: commit, kick: make(chan struct{}, 1), quit: make(chan struct{}), stopped: make(chan struct{})}
	go q.loop()
	return q
}

// Add queues w for the loop; false once the queue is closed.
func (q *Queue[W]) Add(w W) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.queue = append(q.queue, w)
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default: // the loop has been woken already and will take it
	}
	return true
}

// TakeBack removes w if the loop has not taken it yet, for a caller that
// has gone: nothing of it is written. False once it is taken: its outcome
// is its transaction's.
func (q *Queue[W]) TakeBack(w W) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.Index(q.queue, w); i >= 0 {
		q.queue = slices.Delete(q.queue, i, i+1)
		return true
	}
	return false
}

// Len is the number of writes waiting for the loop to take them.
func (q *Queue[W]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// Close stops the loop once the group it commits is done, and returns the
// writes it had not taken, for the caller to answer (to the first Close
// alone). A write added after fails (Add).
func (q *Queue[W]) Close() (left []W) {
	q.closing.Do(func() {
		q.mu.Lock()
		q.closed = true
		q.mu.Unlock()
		close(q.quit)
		<-q.stopped
		q.mu.Lock()
		left, q.queue = q.queue, nil
		q.mu.Unlock()
	})
	return left
}

func (q *Queue[W]) loop() {
	defer close(q.stopped)
	batch := make([]W, 0, q.max)
	for {
		select {
		case <-q.kick:
		case <-q.quit:
			return
		}
		for {
			q.mu.Lock()
			n := min(len(q.queue), q.max)
			batch = append(batch[:0], q.queue[:n]...)
			rest := copy(q.queue, q.queue[n:])
			clear(q.queue[rest:])
			q.queue = q.queue[:rest]
			if rest == 0 && cap(q.queue) > 4*q.max {
				q.queue = nil // a spike's room is given back once it has passed
			}
			q.mu.Unlock()
			if n == 0 {
				break
			}
			q.commit(batch)
			clear(batch)
		}
	}
}
