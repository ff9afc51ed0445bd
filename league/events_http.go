package league

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/time/rate"
)

// Limits of EventsHandler.
const (
	// EventsHeartbeat is how often an idle stream gets a comment: proxies
	// and load balancers commonly close a response that has been silent
	// for 30 to 60 seconds, and a write is what finds a client that has
	// gone without closing its connection.
	EventsHeartbeat = 15 * time.Second
	// MaxEventStreams bounds the streams one EventsHandler serves at once:
	// each holds a connection, a goroutine and a subscriber's buffer of
	// the manager's events, so watchers beyond it are answered 503.
	MaxEventStreams = 256
	// eventsWriteTimeout bounds one write of a stream (an event and its
	// flush, a heartbeat): a client that takes nothing for that long is
	// gone, or too slow, and comes back with the last event it saw.
	eventsWriteTimeout = 10 * time.Second
	// eventsRetry is the reconnection delay a stream suggests to an
	// EventSource (its retry field), in milliseconds.
	eventsRetry = 2000
)

// EventsHandler serves the manager's events as Server-Sent Events
// (docs/events.md): each event as "id: <seq>", "event: <type>" and
// "data: <the Event as one line of JSON>". A client that sends the last
// id it saw (the Last-Event-ID header, or ?after=N for one that cannot
// set headers) is sent the events after it that are kept, or, when some
// are not (or were given before a restart of the manager), a snapshot
// event (EventSnapshot, whose id is the last event it includes) and the
// events after it; a new client is sent a snapshot, then the events as
// they come. A stream ends when its client goes, when the server shuts
// down or the manager stops, and when the client falls too far behind
// (Events drops it): an EventSource then comes back with the last id it
// saw, and misses nothing.
func EventsHandler(m *Manager) http.Handler {
	return newEventsHandler(m, EventsHeartbeat, MaxEventStreams)
}

type eventsHandler struct {
	m         *Manager
	heartbeat time.Duration
	// slots holds a token for each stream being served.
	slots chan struct{}
	// snapshots is the snapshot the streams starting now share.
	snapshots sharedSnapshot
	// starts limits how often one address starts a stream (startsOf).
	startsMu sync.Mutex
	starts   map[string]*rate.Limiter

	// mu guards shutdown: a channel for each server the handler serves
	// on, closed when that server shuts down (RegisterOnShutdown), since
	// http.Server.Shutdown neither cancels a request's context nor ends
	// a response that never ends: it would wait for them until its own
	// deadline.
	mu       sync.Mutex
	shutdown map[*http.Server]chan struct{}
}

func newEventsHandler(m *Manager, heartbeat time.Duration, streams int) *eventsHandler {
	return &eventsHandler{m: m, heartbeat: heartbeat, slots: make(chan struct{}, streams),
		shutdown: map[*http.Server]chan struct{}{}}
}

// shuttingDown is closed when the server that serves r shuts down; nil
// when r does not say which server that is.
func (h *eventsHandler) shuttingDown(r *http.Request) <-chan struct{} {
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	if srv == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.shutdown[srv]
	if !ok {
		ch = make(chan struct{})
		h.shutdown[srv] = ch
		srv.RegisterOnShutdown(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.shutdown, srv)
			close(ch)
		})
	}
	return ch
}

// lastEventID is the last event the client saw, from its Last-Event-ID
// header or its ?after= parameter; ok is false for a client that saw
// none (it is sent a snapshot first).
func lastEventID(r *http.Request) (after uint64, ok bool, err error) {
	v, name := strings.TrimSpace(r.Header.Get("Last-Event-ID")), "Last-Event-ID"
	if v == "" {
		v, name = strings.TrimSpace(r.URL.Query().Get("after")), "after"
	}
	if v == "" {
		return 0, false, nil
	}
	after, err = strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s must be the id of an event (a number), got %q", name, v)
	}
	return after, true, nil
}

func (h *eventsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "use GET: /events is a stream of Server-Sent Events", http.StatusMethodNotAllowed)
		return
	}
	after, resume, err := lastEventID(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !h.startsOf(r.RemoteAddr).AllowN(h.m.clock(), 1) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("too many event streams started from this address (at most %g a second): "+
			"a watcher comes back with Last-Event-ID, and misses nothing by waiting", float64(streamStartRate)),
			http.StatusTooManyRequests)
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("too many event streams (at most %d): try again later", cap(h.slots)),
			http.StatusServiceUnavailable)
		return
	}
	shutdown := h.shuttingDown(r)

	rc := http.NewResponseController(w)
	// The server's ReadTimeout also ends a request's context: net/http
	// reads on in the background to see a client that closes, and that
	// read has the request's deadline. A stream outlives any such bound;
	// a client that goes is seen by a failed write instead (heartbeats).
	_ = rc.SetReadDeadline(time.Time{})
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream; charset=utf-8")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Content-Type-Options", "nosniff")
	// nginx buffers responses unless told not to: events would then come
	// in bursts, long after they happened.
	hdr.Set("X-Accel-Buffering", "no")

	s := &eventStream{w: w, rc: rc}
	if !s.write(fmt.Appendf(nil, "retry: %d\n\n", eventsRetry)) {
		return
	}
	var missed []Event
	gap := true
	next, cancel := (<-chan Event)(nil), func() {}
	defer func() { cancel() }()
	if resume {
		missed, gap, next, cancel = h.m.events.Subscribe(after)
	}
	if gap {
		cancel()
		// The snapshot shared by the streams that start within
		// snapshotReuse of each other, then the events after the one it
		// includes, which the hub still keeps.
		frame, seq := h.snapshots.get(h.m)
		missed, gap, next, cancel = h.m.events.Subscribe(seq)
		if !gap {
			s.last = seq
			if !s.write(frame) {
				return
			}
		} else {
			// Too many events since the shared one: a snapshot of its
			// own, subscribed first so that no event falls between the
			// two (those it includes are skipped: send).
			cancel()
			missed, _, next, cancel = h.m.events.Subscribe(h.m.events.Last())
			snap, seq := h.m.Snapshot()
			if !s.send(Event{Seq: seq, Type: EventSnapshot, At: h.m.clock().UTC(), LeagueID: h.m.opts.LeagueID, Data: snap}) {
				return
			}
		}
	}
	for _, ev := range missed {
		if !s.send(ev) {
			return
		}
	}
	tick := time.NewTicker(h.heartbeat)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-next:
			if !ok {
				return // dropped as too slow: it comes back with the last it saw
			}
			if !s.send(ev) {
				return
			}
		case <-tick.C:
			if !s.write([]byte(": keep-alive\n\n")) {
				return
			}
		case <-r.Context().Done():
			return
		case <-h.m.stopping:
			return
		case <-shutdown:
			return
		}
	}
}

// streamStartRate and streamStartBurst bound how often one address
// starts an event stream: a watcher starts one, and another only when
// its connection drops, but one that reconnects in a loop would cost the
// manager a subscription and a snapshot each time. A few hundred
// reconnections a second from one address slowed a 100-player league
// sevenfold; these allow a few tabs and watchers reconnecting at once.
const (
	streamStartRate  = rate.Limit(5)
	streamStartBurst = 20
)

// maxStartAddresses bounds the addresses whose stream starts are
// remembered: past it they are all forgotten, which only lets more start.
const maxStartAddresses = 4096

// startsOf is the limiter of the streams the address of remote (an
// http.Request's RemoteAddr) starts.
func (h *eventsHandler) startsOf(remote string) *rate.Limiter {
	addr := remote
	if host, _, err := net.SplitHostPort(remote); err == nil {
		addr = host
	}
	h.startsMu.Lock()
	defer h.startsMu.Unlock()
	l := h.starts[addr]
	if l == nil {
		if h.starts == nil || len(h.starts) >= maxStartAddresses {
			h.starts = map[string]*rate.Limiter{}
		}
		l = rate.NewLimiter(streamStartRate, streamStartBurst)
		h.starts[addr] = l
	}
	return l
}

// snapshotReuse is how long a snapshot is shared by the streams that
// start after it, while the league goes on: watchers that reconnect in a
// loop then cost the manager one snapshot (its lock, its ranking, its
// encoding: 5 ms and 250 KB at 1000 players) a quarter of a second, not
// one each, which slowed a 100-player league elevenfold with 16 of them.
// A snapshot whose last event is still the league's last is shared for
// as long as it is.
const snapshotReuse = 250 * time.Millisecond

// sharedSnapshot is the encoded snapshot event the streams starting now
// are sent.
type sharedSnapshot struct {
	mu    sync.Mutex
	at    time.Time
	seq   uint64
	frame []byte
}

// get is the shared snapshot, made again when events have come since and
// it is older than snapshotReuse, or the league is over (a watcher then
// gets its completed state at once). The streams that start while
// one is made wait for it rather than make their own.
func (c *sharedSnapshot) get(m *Manager) (frame []byte, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	over := false
	select {
	case <-m.finished:
		over = true
	default:
	}
	if c.frame != nil && (c.seq == m.events.Last() || (!over && time.Since(c.at) < snapshotReuse)) {
		return c.frame, c.seq
	}
	snap, seq := m.Snapshot()
	ev := Event{Seq: seq, Type: EventSnapshot, At: m.clock().UTC(), LeagueID: m.opts.LeagueID, Data: snap}
	c.frame, c.seq, c.at = encodeEvent(ev), seq, time.Now()
	return c.frame, c.seq
}

// eventStream writes one client's events.
type eventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// last is the Seq of the last event the client has (a snapshot's
	// included): a later subscription's events up to it are not sent.
	last uint64
}

// send writes ev unless the client has it already; false when the
// stream is broken.
func (s *eventStream) send(ev Event) bool {
	if ev.Type != EventSnapshot && ev.Seq <= s.last {
		return true
	}
	s.last = max(s.last, ev.Seq)
	return s.write(encodeEvent(ev))
}

// encodeEvent is ev as a Server-Sent Event.
func encodeEvent(ev Event) []byte {
	data, err := json.Marshal(ev)
	if err != nil {
		// An event whose data does not encode is a bug; the client is told
		// of nothing it could act on, and the stream goes on without it.
		data, _ = json.Marshal(Event{Seq: ev.Seq, Type: ev.Type, At: ev.At, LeagueID: ev.LeagueID})
	}
	buf := fmt.Appendf(nil, "id: %d\nevent: %s\ndata: ", ev.Seq, ev.Type)
	return append(append(buf, data...), '\n', '\n')
}

// write writes b and flushes it to the client. The server's WriteTimeout
// is a deadline for the whole response, set when the request was read:
// it would cut a stream that lives longer. So each write gets a deadline
// of its own, and a client that stops reading is still let go.
func (s *eventStream) write(b []byte) bool {
	if err := s.rc.SetWriteDeadline(time.Now().Add(eventsWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	if _, err := s.w.Write(b); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}
