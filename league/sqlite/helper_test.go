//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/league/storetest"
)

// TestHelperProcess is not a test: it is the other process of the tests
// that need one, started by helper; LEAGUECTL_SQLITE_HELPER says what it
// does with the database LEAGUECTL_SQLITE_DB, and it prints what came of
// it on one line.
func TestHelperProcess(t *testing.T) {
	what := os.Getenv("LEAGUECTL_SQLITE_HELPER")
	if what == "" {
		t.Skip("the other process of the tests that need one")
	}
	path := os.Getenv("LEAGUECTL_SQLITE_DB")
	ctx := context.Background()
	fail := func(err error) {
		fmt.Println(err)
		os.Exit(1)
	}
	switch what {
	case "hold": // open and write a league, then hold the store until stdin closes (or the process is killed)
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			fail(err)
		}
		if err := s.CreateLeague(ctx, testLeague); err != nil {
			fail(err)
		}
		if err := s.SaveSchedule(ctx, storetest.At(1), storetest.OneRound(2)); err != nil {
			fail(err)
		}
		fmt.Println("held")
		_, _ = io.Copy(io.Discard, os.Stdin)
		if err := s.Close(); err != nil {
			fail(err)
		}
	case "open-hold": // open as a manager does, write nothing, and hold the store until stdin closes (or the process is killed)
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			fail(err)
		}
		fmt.Println("held")
		_, _ = io.Copy(io.Discard, os.Stdin)
		if err := s.Close(); err != nil {
			fail(err)
		}
	case "open": // open as a manager does
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			fail(err)
		}
		fmt.Println("opened")
		s.Close()
	case "export": // read the ledger as export does
		s, err := sqlite.OpenExisting(ctx, path)
		if err != nil {
			fail(err)
		}
		rows, err := s.Ledger(ctx)
		if err != nil {
			fail(err)
		}
		fmt.Println(len(rows), "rows")
		s.Close()
	}
	os.Exit(0)
}

// helperProc is a helper process, stopped when the test ends.
type helperProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startHelper starts a helper process doing what with the database at
// path, as another user when as is not nil.
func startHelper(t *testing.T, exe, what, path string, as *syscall.Credential) *helperProc {
	t.Helper()
	cmd := exec.CommandContext(testCtx(t), exe, "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "LEAGUECTL_SQLITE_HELPER="+what, "LEAGUECTL_SQLITE_DB="+path)
	cmd.Stderr = os.Stderr
	if as != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: as}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a helper process: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &helperProc{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
}

// line is the helper's next line of output.
func (h *helperProc) line(t *testing.T) string {
	t.Helper()
	l, err := h.out.ReadString('\n')
	if err != nil {
		t.Fatalf("helper process: %v (%q)", err, l)
	}
	return strings.TrimSuffix(l, "\n")
}

// runHelper runs a helper process to its end: its one line and exit code.
func runHelper(t *testing.T, exe, what, path string, as *syscall.Credential) (string, int) {
	t.Helper()
	h := startHelper(t, exe, what, path, as)
	h.stdin.Close()
	out, err := io.ReadAll(h.out)
	if err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Wait()
	return strings.TrimSuffix(string(out), "\n"), h.cmd.ProcessState.ExitCode()
}

// selfExe is this test binary, which starts the helper processes.
func selfExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// unprivileged is what a test of file permissions needs, which root
// would not be subject to: a directory every user may enter
// (removed when the test ends), and, when the test runs as root, a copy
// of this test binary beside it and the user (nobody, 65534) to run it
// as; as another user, as is nil and exe this binary.
func unprivileged(t *testing.T) (dir, exe string, as *syscall.Credential) {
	t.Helper()
	base, err := os.MkdirTemp("", "leaguectl-sqlite-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Give back the write permission the test took away, then remove.
		_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		_ = os.RemoveAll(base)
	})
	dir = filepath.Join(base, "data")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{base, dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe = selfExe(t)
	if os.Geteuid() != 0 {
		return dir, exe, nil
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(base, "sqlite.test")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	as = &syscall.Credential{Uid: 65534, Gid: 65534}
	probe := exec.CommandContext(testCtx(t), exe, "-test.run=^$")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: as}
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("root, and cannot run a process as uid 65534: %v %s", err, out)
	}
	return dir, exe, as
}
