package postgres_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/postgres"
	"github.com/leaguectl/leaguectl/league/storetest"
	"github.com/leaguectl/leaguectl/protocol"
)

// cutter is a TCP proxy to the database that cuts the connection that
// carries a client message holding its trigger, once it has passed the
// message on: the write reaches the server, its answer never comes back.
type cutter struct {
	ln      net.Listener
	mu      sync.Mutex
	trigger []byte
	cuts    int
}

func newCutter(t *testing.T, direct string) (c *cutter, url string) {
	t.Helper()
	i := strings.Index(direct, "@") + 1
	j := i + strings.Index(direct[i:], "/")
	target := direct[i:j]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c = &cutter{ln: ln}
	var conns sync.WaitGroup
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			conns.Go(func() { c.pipe(client, server, true) })
			conns.Go(func() { c.pipe(server, client, false) })
		}
	}()
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	return c, direct[:i] + ln.Addr().String() + direct[j:]
}

// cutOn makes the next client message holding trigger the last of its
// connection.
func (c *cutter) cutOn(trigger string) {
	c.mu.Lock()
	c.trigger = []byte(trigger)
	c.mu.Unlock()
}

func (c *cutter) pipe(src, dst net.Conn, up bool) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			c.mu.Lock()
			cut := up && c.trigger != nil && bytes.Contains(buf[:n], c.trigger)
			if cut {
				c.trigger = nil
				c.cuts++
			}
			c.mu.Unlock()
			if cut {
				return // the server has the write; its answer is dropped with the connection
			}
		}
		if err != nil {
			return
		}
	}
}

// TestWriteWhoseAnswerIsLost: a write whose connection is cut once the
// server has it is made again on another connection, and succeeds
// whether or not the first committed: a registration is recorded once,
// a schedule ends once. Before, the first committed and was reported
// failed, and the manager's next try met it as a duplicate.
func TestWriteWhoseAnswerIsLost(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	direct := pgtest.Database(t)
	cut, url := newCutter(t, direct)
	s := leader(t, url, leagueID, "host-a:1")
	is.NoErr(s.CreateLeague(ctx, testLeague(leagueID)))

	p := storetest.AgentRec("PCUT01", protocol.RolePlayer, 0, storetest.At(1))
	cut.cutOn("PCUT01")
	is.NoErr(s.SaveAgent(ctx, p)) // made again
	rounds := storetest.OneRound(2)
	is.NoErr(s.BeginSchedule(ctx, storetest.At(2)))
	rows := []league.ScheduleRow{{Pairing: rounds[0][0]}, {Pairing: rounds[0][1], Position: 1}}
	is.NoErr(s.SaveMatches(ctx, rows))
	cut.cutOn("matches WHERE league_id") // EndSchedule's count
	is.NoErr(s.EndSchedule(ctx, 2))
	cut.mu.Lock()
	is.Equal(cut.cuts, 2) // both writes lost an answer
	cut.mu.Unlock()

	r, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(r.Agents, []league.AgentRecord{p}) // recorded once
	is.Equal(r.State, league.StateRunning)
	is.Equal(r.Rounds, rounds)
}

// TestConnectionLost: a standby waits on through a lost connection, and
// stops on a refusal another try would meet again.
func TestConnectionLost(t *testing.T) {
	is := is.New(t)
	is.True(postgres.ConnectionLost(&pgconn.PgError{Code: "57P01"}))                      // terminated by an administrator
	is.True(postgres.ConnectionLost(&pgconn.PgError{Code: "08006"}))                      // connection failure
	is.True(postgres.ConnectionLost(fmt.Errorf("lead: %w", io.ErrUnexpectedEOF)))         // cut mid-answer
	is.True(!postgres.ConnectionLost(&pgconn.PgError{Code: "42501"}))                     // permission denied
	is.True(!postgres.ConnectionLost(fmt.Errorf("lead: %w", postgres.ErrClosed)))         // closed
	is.True(!postgres.ConnectionLost(errors.New("the store has led its league already"))) // a bug, not an outage
}
