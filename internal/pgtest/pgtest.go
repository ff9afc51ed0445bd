// Package pgtest gives tests a real PostgreSQL: one throwaway cluster per
// test binary, started on first use on a free loopback port, and a new
// empty database in it for each test that asks.
//
// A package's TestMain calls Main, which stops the cluster and removes its
// directory once the tests have run:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// The cluster is also stopped when the test binary ends any other way (a
// panic, a -timeout, a kill): a watchdog process started with it waits for
// the end of a pipe that only the test binary holds open, which the
// kernel closes however the binary ends.
//
// Where PostgreSQL is not installed, Database and URL skip the test.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// shared is the cluster of this test binary. It is package state because
// every test of the binary shares one cluster (starting one takes about a
// second) and Main, which has no other way to reach it, stops it.
var shared struct {
	once sync.Once
	c    *cluster
	err  error // why it could not start
	skip string
	n    atomic.Int64 // databases made, for unique names
}

// Main runs m's tests, then stops the cluster if a test started one, and
// exits with the tests' code.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain that has more to do after the tests: it
// returns the tests' code.
func Run(m *testing.M) int {
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	return code
}

// URL is the URL of the shared cluster's postgres database, as its
// superuser postgres, without a password; it skips t where PostgreSQL is
// not installed.
func URL(t testing.TB) string {
	t.Helper()
	return clusterFor(t).url("postgres")
}

// Database makes a new empty database in the shared cluster and returns
// its URL; the database is dropped when t ends. It skips t where
// PostgreSQL is not installed.
func Database(t testing.TB) string {
	t.Helper()
	c := clusterFor(t)
	name := fmt.Sprintf("t%d_%s", shared.n.Add(1), nameSafe.ReplaceAllString(strings.ToLower(t.Name()), "_"))
	if len(name) > 63 {
		name = name[:63] // PostgreSQL's limit on a name
	}
	ident := pgx.Identifier{name}.Sanitize()
	if err := c.admin("CREATE DATABASE " + ident); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		// FORCE: a test that failed may have left connections open.
		if err := c.admin("DROP DATABASE IF EXISTS " + ident + " WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return c.url(name)
}

var nameSafe = regexp.MustCompile(`[^a-z0-9_]+`)

// Connect is a connection of the test's own to the database at url (to
// look at what a store wrote, or to do to it what an operator or a
// failure would), closed when t ends.
func Connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func clusterFor(t testing.TB) *cluster {
	t.Helper()
	shared.once.Do(func() {
		bin, err := findBin()
		if err != nil {
			shared.skip = err.Error()
			return
		}
		shared.c, shared.err = start(bin)
	})
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	if shared.err != nil {
		t.Fatalf("pgtest: %v", shared.err)
	}
	return shared.c
}

// findBin is the directory of initdb and pg_ctl: the highest version in
// /usr/lib/postgresql (Debian's layout, where they are not on PATH), else
// PATH's.
func findBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(dir string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int {
		switch va, vb := version(a), version(b); {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return 0
	})
	for _, d := range dirs {
		if executable(filepath.Join(d, "initdb")) && executable(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	initdb, err := exec.LookPath("initdb")
	if err == nil {
		d := filepath.Dir(initdb)
		if executable(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
		err = errors.New("pg_ctl is not beside " + initdb)
	}
	return "", fmt.Errorf("PostgreSQL is not installed (initdb not found in /usr/lib/postgresql/*/bin or PATH): %v", err)
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// cluster is a running throwaway PostgreSQL cluster.
type cluster struct {
	bin, dir, data string
	port           int
	// asPostgres is set when this process is root, which initdb and
	// postgres refuse to run as: they run as the postgres user.
	asPostgres bool
	// watchdog stops the cluster and removes dir when release is closed,
	// or when this process ends.
	watchdog *exec.Cmd
	release  *os.File
	stopOnce sync.Once
	stopErr  error
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// admin runs one statement on the cluster's postgres database.
func (c *cluster) admin(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// command is a command of the cluster's binaries, as the postgres user
// when this process is root.
func (c *cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asPostgres {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	// The postgres user may not be able to enter the test's directory.
	cmd.Dir = c.dir
	// pg_ctl's server keeps no descriptor of ours (it is started with
	// -l), but a wait for a pipe that a stray child held would never end.
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

func run(cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return nil
}

// start makes a cluster with initdb and starts it with pg_ctl, with its
// watchdog.
func start(bin string) (*cluster, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir, data: filepath.Join(dir, "data"), asPostgres: os.Geteuid() == 0}
	if err := c.startWatchdog(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fail := func(err error) (*cluster, error) {
		return nil, errors.Join(err, c.stop())
	}
	if c.asPostgres {
		if err := chownPostgres(dir); err != nil {
			return fail(err)
		}
	}
	// Only tests use it: trust on loopback, and no flush of the disk.
	if err := run(c.command("initdb", "-D", c.data, "--auth=trust", "-U", "postgres", "-E", "UTF8",
		"--no-locale", "--no-sync")); err != nil {
		return fail(err)
	}
	// A port found free may be taken before the server binds it: another
	// port is tried then.
	for attempt := 0; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			return fail(err)
		}
		opts := fmt.Sprintf("-k %s -p %d -h 127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
			c.dir, c.port)
		log := filepath.Join(c.dir, "server.log")
		err = run(c.command("pg_ctl", "-D", c.data, "-o", opts, "-l", log, "-w", "-t", "120", "start"))
		if err == nil {
			return c, nil
		}
		b, _ := os.ReadFile(log)
		err = fmt.Errorf("%w\nserver log:\n%s", err, b)
		if attempt == 4 || !strings.Contains(string(b), "could not bind") {
			return fail(err)
		}
	}
}

// startWatchdog starts the process that stops the cluster: it waits for
// the end of its standard input, whose other end only this process holds
// (Go opens it close-on-exec, so no other child inherits it).
func (c *cluster) startWatchdog() error {
	pgctl := filepath.Join(c.bin, "pg_ctl")
	stop := `"$1" -D "$2" stop -m immediate -w >/dev/null 2>&1`
	if c.asPostgres {
		stop = `runuser -u postgres -- ` + stop
	}
	script := `read -r _; if [ -f "$2/postmaster.pid" ]; then ` + stop + `; fi; rm -rf "$3"`
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command("/bin/sh", "-c", script, "pgtest-watchdog", pgctl, c.data, c.dir)
	cmd.Stdin = r
	// Its own session: an interrupt of the test's terminal must not stop
	// it before it has stopped the server.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("start the watchdog: %w", err)
	}
	r.Close()
	c.watchdog, c.release = cmd, w
	return nil
}

// stop stops the cluster and removes its directory, through the
// watchdog, and waits until it is done.
func (c *cluster) stop() error {
	c.stopOnce.Do(func() {
		c.release.Close()
		if err := c.watchdog.Wait(); err != nil {
			c.stopErr = fmt.Errorf("stop the cluster in %s: %w", c.dir, err)
		}
	})
	return c.stopErr
}

func chownPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, initdb must run as the postgres user: %w", err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return err
	}
	return os.Chown(dir, uid, gid)
}

// freePort is a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
