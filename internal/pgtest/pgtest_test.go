package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"
)

func TestMain(m *testing.M) { Main(m) }

func TestDatabase(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, b := Database(t), Database(t)
	is.True(a != b) // a new database each time
	for _, u := range []string{a, b} {
		is.True(strings.HasPrefix(u, "postgres://postgres@127.0.0.1:")) // loopback, no password
		conn, err := pgx.Connect(ctx, u)
		is.NoErr(err)
		var tables int
		is.NoErr(conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables))
		is.Equal(tables, 0) // empty
		_, err = conn.Exec(ctx, `CREATE TABLE t (x int)`)
		is.NoErr(err)
		is.NoErr(conn.Close(ctx))
	}
	conn, err := pgx.Connect(ctx, URL(t))
	is.NoErr(err)
	defer conn.Close(ctx)
	var v int
	is.NoErr(conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&v))
	is.True(v >= 110000) // a server that has what the store needs (hashtextextended)
}

// TestStop: a cluster of its own, stopped, leaves no server and no
// directory.
func TestStop(t *testing.T) {
	is := is.New(t)
	bin, err := findBin()
	if err != nil {
		t.Skip(err)
	}
	c, err := start(bin)
	is.NoErr(err)
	b, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	is.NoErr(err)
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	is.NoErr(err)
	is.NoErr(syscall.Kill(pid, 0)) // the server runs
	is.NoErr(c.stop())
	is.NoErr(c.stop()) // again: nothing more to do
	_, err = os.Stat(c.dir)
	is.True(errors.Is(err, os.ErrNotExist)) // the directory is gone
	is.True(!running(pid))                  // the server is gone
}

// running says whether process pid runs: the server is not this
// process's child, and what reaps it (init) may not have yet, so a zombie
// counts as gone.
func running(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	_, state, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(state, "Z")
}
