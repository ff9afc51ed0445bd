package cmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
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
			if a.Value.Kind() == slog.KindDuration {
				// "2s", as a person reads it, not nanoseconds.
				return slog.String(a.Key, a.Value.Duration().String())
			}
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

// agentName is the agent_id of a serve-* command's log lines: role:pending
// (or the id it asks for) until the manager assigns one, then role:id.
type agentName struct {
	role string
	id   atomic.Pointer[string]
}

func newAgentName(role, id string) *agentName {
	n := &agentName{role: role}
	n.set(id)
	return n
}

// set makes every line from now on carry role:id.
func (n *agentName) set(id string) {
	s := n.role + ":" + id
	n.id.Store(&s)
}

// namedHandler is a handler whose lines carry agent_id first, as a
// logger.With would put it, but read from an agentName at each line. The
// attributes and groups added to it are replayed onto a handler made once
// for each name.
type namedHandler struct {
	base  slog.Handler
	name  *agentName
	steps []func(slog.Handler) slog.Handler // WithAttrs and WithGroup, in order
	made  *atomic.Pointer[namedMade]
}

// namedMade is base with agent_id and the steps, for one name.
type namedMade struct {
	id string
	h  slog.Handler
}

func newNamedHandler(base slog.Handler, name *agentName) *namedHandler {
	return &namedHandler{base: base, name: name, made: new(atomic.Pointer[namedMade])}
}

func (h *namedHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.base.Enabled(ctx, l)
}

func (h *namedHandler) handler() slog.Handler {
	id := *h.name.id.Load()
	if m := h.made.Load(); m != nil && m.id == id {
		return m.h
	}
	hh := h.base.WithAttrs([]slog.Attr{slog.String("agent_id", id)})
	for _, step := range h.steps {
		hh = step(hh)
	}
	h.made.Store(&namedMade{id: id, h: hh})
	return hh
}

func (h *namedHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.handler().Handle(ctx, r)
}

func (h *namedHandler) with(step func(slog.Handler) slog.Handler) *namedHandler {
	return &namedHandler{base: h.base, name: h.name, steps: append(slices.Clip(h.steps), step), made: new(atomic.Pointer[namedMade])}
}

func (h *namedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.with(func(hh slog.Handler) slog.Handler { return hh.WithAttrs(attrs) })
}

func (h *namedHandler) WithGroup(name string) slog.Handler {
	return h.with(func(hh slog.Handler) slog.Handler { return hh.WithGroup(name) })
}
