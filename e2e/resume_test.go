package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestSimulateInterruptedResumes is the must-show of issue 38: simulate
// --players 300 --seed 5 --db F, interrupted with SIGINT once it has
// counted results (a round completed, as its log says, rather than after
// a time a slow machine might not have used), exits 130 and prints the
// command that resumes it; that command ends with the standings of a run
// never interrupted.
func TestSimulateInterruptedResumes(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "league.db")
	args := []string{"simulate", "--players", "300", "--seed", "5", "--output", "json"}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang's bound only
	defer cancel()
	c := exec.CommandContext(ctx, bin(t), append(args, "--db", db, "--log-level", "info")...)
	c.Dir = dir
	stderr, err := c.StderrPipe()
	is.NoErr(err)
	is.NoErr(c.Start())
	var tail bytes.Buffer
	sc := bufio.NewScanner(stderr)
	sc.Buffer(nil, 1<<20)
	interrupted := false
	for sc.Scan() {
		line := sc.Text()
		if !interrupted && strings.Contains(line, `"round completed"`) {
			is.NoErr(c.Process.Signal(syscall.SIGINT))
			interrupted = true
		}
		if interrupted {
			tail.WriteString(line + "\n")
		}
	}
	_, _ = io.Copy(io.Discard, stderr)
	err = c.Wait()
	is.True(interrupted) // a round was completed before the end
	var ee *exec.ExitError
	is.True(errors.As(err, &ee)) // not a success
	is.Equal(ee.ExitCode(), 130) // SIGINT's exit
	lines := strings.Split(strings.TrimSpace(tail.String()), "\n")
	last := lines[len(lines)-1]
	_, command, ok := strings.Cut(last, "to resume, run: ")
	is.True(ok) // the last line says how to resume
	words := strings.Fields(command)
	is.Equal(words[0], "leaguectl")
	is.True(strings.Contains(command, "--db "+db))

	resumed, errs, code := runCLIFor(t, dir, 5*time.Minute, words[1:]...)
	is.Equal(code, 0)                                   // resumed to the end
	is.True(strings.Contains(errs, "registered again")) // its agents took their places again
	want, _, code := runCLIFor(t, dir, 5*time.Minute, args...)
	is.Equal(code, 0)
	got, full := decode(t, resumed), decode(t, want)
	is.Equal(got.TotalMatches, 44850)
	is.Equal(got.FinalStandings, full.FinalStandings) // the standings of the run never interrupted
}
