package league

import (
	"net/http"
	"time"
)

// EventsHandlerWith is EventsHandler with a heartbeat and a bound of
// streams of the test's choosing.
func EventsHandlerWith(m *Manager, heartbeat time.Duration, streams int) http.Handler {
	return newEventsHandler(m, heartbeat, streams)
}

// SetEventBuffer makes m keep only its latest n events, for a test of
// watchers that come back after their events are gone. Call it before
// the first event.
func SetEventBuffer(m *Manager, n int) {
	e := m.events
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ring, e.start, e.n = make([]Event, n), 0, 0
}
