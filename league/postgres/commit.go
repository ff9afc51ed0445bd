package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leaguectl/leaguectl/internal/groupcommit"
)

// The writes of one statement that wait while another transaction
// commits are committed together (groupcommit), in one transaction behind
// one fence: one round trip and one commit for all of them, where each
// alone cost the server a transaction (most of a league's time on
// PostgreSQL, its CPU for 4,200 transactions at 64 players).

// maxBatch bounds the writes of one transaction.
const maxBatch = 64

// batchTimeout bounds one transaction of the commit loop: no caller's
// context ends it, since it holds the writes of many.
const batchTimeout = 30 * time.Second

// queued is one exec waiting for the commit loop.
type queued struct {
	ctx  context.Context
	sql  string
	args []any
	done chan execResult // buffered: the loop never waits for a caller
}

type execResult struct {
	tag pgconn.CommandTag
	err error
}

// committer is the commit loop of a store's single-statement writes.
type committer struct {
	s      *Store
	writes *groupcommit.Queue[*queued]
}

func newCommitter(s *Store) *committer {
	c := &committer{s: s}
	c.writes = groupcommit.Start(maxBatch, c.commit)
	return c
}

// close commits the writes queued, then stops the loop; a write that
// comes after fails with ErrClosed.
func (c *committer) close() {
	for left := c.writes.Close(); len(left) > 0; {
		n := min(len(left), maxBatch)
		c.commit(left[:n])
		left = left[n:]
	}
}

// exec queues a write and waits for the transaction that holds it. A
// caller whose ctx ends while its write waits to be taken takes it back;
// once taken, its outcome is its transaction's.
func (c *committer) exec(ctx context.Context, sql string, args []any) (pgconn.CommandTag, error) {
	q := &queued{ctx: ctx, sql: sql, args: args, done: make(chan execResult, 1)}
	if !c.writes.Add(q) {
		return pgconn.CommandTag{}, ErrClosed
	}
	select {
	case r := <-q.done:
		return r.tag, r.err
	case <-ctx.Done():
	}
	if c.writes.TakeBack(q) {
		return pgconn.CommandTag{}, ctx.Err()
	}
	r := <-q.done
	return r.tag, r.err
}

// commit makes batch one transaction. If a write in it fails, the
// transaction is rolled back and each write is made alone, so that each
// caller gets its own write's outcome, never another's.
func (c *committer) commit(batch []*queued) {
	live := batch[:0]
	for _, q := range batch {
		if err := q.ctx.Err(); err != nil {
			q.done <- execResult{err: err} // its caller has gone: nothing of it is written
			continue
		}
		live = append(live, q)
	}
	if len(live) == 0 {
		return
	}
	tags, err := c.inOne(live)
	if err == nil || len(live) == 1 || errors.Is(err, ErrNotLeader) {
		for i, q := range live {
			q.done <- execResult{tag: tags[i], err: err}
		}
		return
	}
	for _, q := range live {
		tags, err := c.inOne([]*queued{q})
		q.done <- execResult{tag: tags[0], err: err}
	}
}

// inOne sends qs behind one fence in one batch, which PostgreSQL runs as
// one implicit transaction, made once more on another connection if its
// connection was lost (every write of the store may be made twice).
func (c *committer) inOne(qs []*queued) ([]pgconn.CommandTag, error) {
	tags := make([]pgconn.CommandTag, len(qs))
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.s.closing), batchTimeout)
	defer cancel()
	err := c.s.again(ctx, func(epoch int64) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT leaguectl_fence($1, $2)`, c.s.leagueID, epoch)
		for _, q := range qs {
			b.Queue(q.sql, q.args...)
		}
		br := c.s.pool.SendBatch(ctx, b)
		_, err := br.Exec()
		for i := 0; err == nil && i < len(qs); i++ {
			tags[i], err = br.Exec()
		}
		// Close reads to the end of the transaction: the writes are
		// committed only if it succeeds.
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		return err
	})
	return tags, err
}
