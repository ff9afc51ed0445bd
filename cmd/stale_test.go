package cmd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/cmd"
)

// TestServeManagerOnACompletedLeague: serve-manager on the database of a
// league that has completed says so at start, and what to do.
func TestServeManagerOnACompletedLeague(t *testing.T) {
	is := is.New(t)
	db := filepath.Join(t.TempDir(), "old.db")
	_, errs, code := run(t, "simulate", "--players", "2", "--db", db)
	is.Equal(code, 0) // the old league, played out
	is.Equal(errs, "")

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- cmd.ExitCode(cmd.Run(ctx, []string{"serve-manager", "--port", "0", "--db", db}, io.Discard, pw))
		pw.Close()
	}()
	defer func() {
		cancel()
		go func() { _, _ = io.Copy(io.Discard, pr) }()
		<-done
	}()
	var warned struct {
		Level, DB string
		Msg       string `json:"message"`
	}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var l struct {
			Level, DB string
			Msg       string `json:"message"`
		}
		is.NoErr(json.Unmarshal(sc.Bytes(), &l))
		if l.Level == "WARN" && strings.Contains(l.Msg, "has completed") {
			warned = l
			break
		}
		if l.Msg == "listening" {
			break // serving, and said nothing
		}
	}
	is.True(strings.Contains(warned.Msg, "another --db")) // what to do
	is.Equal(warned.DB, db)                               // which database
}
