package cmd

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"
)

// TestSignalExitCodes: a command ended by SIGINT exits 130, by SIGTERM
// 143, as a shell says of a process either signal ended.
func TestSignalExitCodes(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		t.Run(sig.String(), func(t *testing.T) {
			is := is.New(t)
			ctx, cancel := context.WithCancelCause(t.Context())
			cancel(&SignalError{Signal: sig})
			var stderr bytes.Buffer
			err := Run(ctx, []string{"simulate", "--players", "4", "--seed", "1"}, &bytes.Buffer{}, &stderr)
			is.Equal(ExitCode(err), want)
			is.Equal(stderr.String(), "leaguectl: interrupted\n")
		})
	}
}

func TestVersion(t *testing.T) {
	is := is.New(t)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var stdout bytes.Buffer
		is.NoErr(Run(t.Context(), args, &stdout, &bytes.Buffer{}))
		is.True(strings.HasPrefix(stdout.String(), "leaguectl ")) // leaguectl VERSION…
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}}}
	is.Equal(versionOf(bi), "v1.2.0, revision abc123-dirty 2026-01-02T03:04:05Z, go1.26")
}
