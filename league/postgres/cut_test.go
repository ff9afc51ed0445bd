package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

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
// Or it freezes: once a message holding freezeOn has passed, nothing more
// passes on any connection, and none is closed, as of a machine that
// stopped (a paused VM) until the test ends.
type cutter struct {
	ln       net.Listener
	mu       sync.Mutex
	trigger  []byte
	cuts     int
	freezeOn []byte
	frozen   chan struct{}
	freeze   sync.Once
	done     chan struct{}
	conns    []net.Conn
	killed   sync.Once
}

// kill closes every connection, as the end of a stopped machine does:
// the store then hears of it.
func (c *cutter) kill() {
	c.killed.Do(func() {
		close(c.done)
		c.ln.Close()
		c.mu.Lock()
		for _, conn := range c.conns {
			conn.Close()
		}
		c.mu.Unlock()
	})
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
	c = &cutter{ln: ln, frozen: make(chan struct{}), done: make(chan struct{})}
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
			c.mu.Lock()
			c.conns = append(c.conns, client, server)
			c.mu.Unlock()
			conns.Go(func() { c.pipe(client, server, true) })
			conns.Go(func() { c.pipe(server, client, false) })
		}
	}()
	t.Cleanup(func() { c.kill(); conns.Wait() })
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
		select {
		case <-c.frozen:
			<-c.done // nothing passes, nothing is closed
			return
		default:
		}
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
			if up && c.freezeOn != nil && bytes.Contains(buf[:n], c.freezeOn) {
				c.freeze.Do(func() { close(c.frozen) })
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

// TestPausedLeaderInAWrite: a manager whose machine stops answering in
// the middle of a write of several statements (its transaction open, the
// fence's lock on the leadership row held) does not keep the league from
// its standby: the server ends the idle transaction and the idle lock
// session (their timeouts, 20 s), the standby takes the lead, and the
// stopped manager's store has lost it.
func TestPausedLeaderInAWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the server's 20 s timeouts")
	}
	is := is.New(t)
	ctx := testCtx(t)
	direct := pgtest.Database(t)
	proxy, url := newCutter(t, direct)
	a := leader(t, url, leagueID, "host-a:1")
	t.Cleanup(proxy.kill) // before a's Close, which waits for its connections
	proxy.mu.Lock()
	proxy.freezeOn = []byte("INSERT INTO token_keys")
	proxy.mu.Unlock()
	go a.TokenKey(context.Background(), make([]byte, 32)) // a write of two statements, whose second never answers
	<-proxy.frozen

	b := open(t, direct, leagueID, "host-b:2")
	led := make(chan error, 1)
	go func() { led <- b.Lead(ctx, nil) }()
	select {
	case err := <-led:
		is.NoErr(err) // the standby leads
	case <-time.After(90 * time.Second):
		t.Fatal("the standby did not take the lead in 90 s")
	}
	select {
	case <-a.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("the paused manager's store did not lose the lead")
	}
	is.NoErr(b.CreateLeague(ctx, testLeague(leagueID))) // and the standby writes
	proxy.kill()                                        // the stopped machine's connections end, and its store closes
}
