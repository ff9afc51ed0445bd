package cmd

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

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
