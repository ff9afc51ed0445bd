package cmd

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// newLogger writes JSON lines with the fields of implementation-guide
// §5.10: timestamp (UTC), level, message, and the attributes the agents
// add (agent_id, message_type, conversation_id, …).
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return nil, usagef(fmt.Errorf("--log-level must be debug, info, warn or error, got %q", level))
	}
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: l,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String("timestamp", a.Value.Time().UTC().Format("2006-01-02T15:04:05.000Z"))
			case slog.MessageKey:
				a.Key = "message"
			}
			return a
		},
	})
	return slog.New(h), nil
}
