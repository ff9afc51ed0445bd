package cmd

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestNamedHandler: agent_id is the name's at each line, first, in the
// loggers made before the name changed too, with their attributes and
// groups kept.
func TestNamedHandler(t *testing.T) {
	is := is.New(t)
	var buf bytes.Buffer
	name := newAgentName("player", "pending")
	log := slog.New(newNamedHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}), name))
	round := log.With("round_id", 3)
	grouped := round.WithGroup("match").With("match_id", "R3M1")
	round.Info("before")
	name.set("P07")
	round.Info("after", "k", 1)
	grouped.Info("grouped", "k", 2)
	log.Debug("disabled")
	is.Equal(strings.Split(strings.TrimSpace(buf.String()), "\n"), []string{
		`level=INFO msg=before agent_id=player:pending round_id=3`,
		`level=INFO msg=after agent_id=player:P07 round_id=3 k=1`,
		`level=INFO msg=grouped agent_id=player:P07 round_id=3 match.match_id=R3M1 match.k=2`,
	})
}

// TestLogLinesReadable: a duration is written as a person reads it, and
// the timestamp and message have the names of implementation-guide §5.10.
func TestLogLinesReadable(t *testing.T) {
	is := is.New(t)
	var buf bytes.Buffer
	log, err := newLogger(&buf, "info")
	is.NoErr(err)
	log.Info("retrying", slog.Duration("next", 2*time.Second), slog.Group("g", slog.Duration("took", 1500*time.Microsecond)))
	line := buf.String()
	is.True(strings.Contains(line, `"next":"2s"`))
	is.True(strings.Contains(line, `"g":{"took":"1.5ms"}`))
	is.True(strings.Contains(line, `"message":"retrying"`))
	is.True(strings.Contains(line, `"timestamp":"`))
}
