package league_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// sseBlock is one block of a Server-Sent Events stream: an event, or a
// comment (a heartbeat), or a retry hint.
type sseBlock struct {
	ID      uint64
	HasID   bool
	Type    string
	Data    string
	Comment string
	Retry   string
}

// wireEvent is an event as its data line carries it.
type wireEvent struct {
	Seq      uint64         `json:"seq"`
	Type     string         `json:"type"`
	At       time.Time      `json:"at"`
	LeagueID string         `json:"league_id"`
	Data     jsontext.Value `json:"data"`
}

// eventsClient reads one stream of /events.
type eventsClient struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
}

// openEvents opens a stream at url, sending lastID as Last-Event-ID when
// it is not "". It is closed when the test ends, before the servers.
func openEvents(t *testing.T, ctx context.Context, url, lastID string) *eventsClient {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("GET %s: Content-Type %q", url, ct)
	}
	return &eventsClient{t: t, resp: resp, r: bufio.NewReader(resp.Body)}
}

func (c *eventsClient) close() { c.resp.Body.Close() }

// block reads the next block of the stream.
func (c *eventsClient) block() (sseBlock, error) {
	var b sseBlock
	lines := 0
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return b, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if lines == 0 {
				continue
			}
			return b, nil
		}
		lines++
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			b.Comment = value
		case "id":
			b.ID, err = strconv.ParseUint(value, 10, 64)
			if err != nil {
				return b, fmt.Errorf("id %q: %w", value, err)
			}
			b.HasID = true
		case "event":
			b.Type = value
		case "data":
			if b.Data != "" {
				return b, errors.New("an event of more than one data line")
			}
			b.Data = value
		case "retry":
			b.Retry = value
		default:
			return b, fmt.Errorf("unknown field %q", line)
		}
	}
}

// next is the next event, past comments and hints; it checks that its
// data is the whole event, with the id and type of its fields.
func (c *eventsClient) next() sseBlock {
	c.t.Helper()
	for {
		b, err := c.block()
		if err != nil {
			c.t.Fatalf("reading events: %v", err)
		}
		if b.Type == "" {
			continue
		}
		w := decodeEvent(c.t, b)
		if !b.HasID || w.Seq != b.ID || w.Type != b.Type || w.LeagueID != leagueID || w.At.IsZero() {
			c.t.Fatalf("event %d %s: its data says %+v", b.ID, b.Type, w)
		}
		return b
	}
}

// until reads events up to the first of type typ, included.
func (c *eventsClient) until(typ string) []sseBlock {
	c.t.Helper()
	var got []sseBlock
	for {
		b := c.next()
		got = append(got, b)
		if b.Type == typ {
			return got
		}
	}
}

func decodeEvent(t *testing.T, b sseBlock) wireEvent {
	t.Helper()
	var w wireEvent
	if err := json.Unmarshal([]byte(b.Data), &w); err != nil {
		t.Fatalf("event %d: %v: %s", b.ID, err, b.Data)
	}
	return w
}

// dataOf is the data of event b, typed.
func dataOf[T any](t *testing.T, b sseBlock) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(decodeEvent(t, b).Data, &v); err != nil {
		t.Fatalf("event %d %s: %v", b.ID, b.Type, err)
	}
	return v
}

func idsOf(bs []sseBlock) []uint64 {
	out := []uint64{}
	for _, b := range bs {
		out = append(out, b.ID)
	}
	return out
}

func countOf(bs []sseBlock, typ string) int {
	n := 0
	for _, b := range bs {
		if b.Type == typ {
			n++
		}
	}
	return n
}

// serveEvents serves h on a new loopback server, closed when the test
// ends, after the streams opened later.
func serveEvents(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestEventsWholeLeague: a watcher that connects before the league is
// sent a snapshot of the registration, then every event of the league in
// order, numbered 1, 2, 3…: the registrations, the start, each round's
// start and end, each match's start and result, the technical loss, and
// the end with the seed, which nothing told before.
func TestEventsWholeLeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{Seed: 42})
		defer h.stop()
		srv := serveEvents(t, league.EventsHandler(h.mgr))
		w := openEvents(t, h.ctx, srv.URL, "")
		first := w.next()
		is.Equal(first.Type, league.EventSnapshot) // a new watcher gets a snapshot first
		is.Equal(first.ID, uint64(0))              // of a league with no event yet
		snap := dataOf[league.Snapshot](t, first)
		is.Equal(snap.State, league.StateRegistration)
		is.Equal(len(snap.Agents), 0)
		is.True(!strings.Contains(first.Data, "seed")) // the seed is not told before the end

		h.referee("REF01", 2, modeReport, crashScript)
		for _, id := range []string{"P01", "P02", "P03", "P04"} {
			h.player(id)
		}
		h.play()
		lc := h.wait()
		got := w.until(league.EventLeagueCompleted)

		want := []uint64{}
		for i := range got {
			want = append(want, uint64(i+1))
		}
		is.Equal(idsOf(got), want)                             // every event, in order, numbered from 1
		is.Equal(got[len(got)-1].ID, h.mgr.Events().Last())    // nothing after league_completed
		is.Equal(countOf(got, league.EventRegistration), 5)    // a referee and four players
		is.Equal(got[5].Type, league.EventLeagueStarted)       // then the start
		is.Equal(got[6].Type, league.EventRoundStarted)        // and round 1
		is.Equal(countOf(got, league.EventRoundStarted), 3)    // three rounds started
		is.Equal(countOf(got, league.EventRoundCompleted), 3)  // and completed
		is.Equal(countOf(got, league.EventMatchStarted), 6)    // six matches handed out
		is.Equal(countOf(got, league.EventMatchFinished), 6)   // and counted
		is.Equal(countOf(got, league.EventTechnicalLoss), 1)   // R2M2's
		is.Equal(countOf(got, league.EventLeagueCompleted), 1) // once
		is.Equal(countOf(got, league.EventSnapshot), 0)        // no snapshot after the first
		reg := dataOf[league.RegistrationEvent](t, got[0])     // the referee registered first
		is.Equal(reg, league.RegistrationEvent{Role: protocol.RoleReferee, AgentID: "REF01", DisplayName: "Referee 01", Endpoint: reg.Endpoint})
		started := dataOf[league.LeagueStartedEvent](t, got[5]) // the league's size
		is.Equal(started, league.LeagueStartedEvent{Players: 4, Referees: 1, Rounds: 3, Matches: 6})

		startedAt := map[string]uint64{}
		var dones []int
		round := 0
		for _, b := range got {
			switch b.Type {
			case league.EventRoundStarted:
				round = dataOf[league.RoundEvent](t, b).RoundID
			case league.EventMatchStarted:
				ms := dataOf[league.MatchStartedEvent](t, b)
				is.Equal(ms.RoundID, round) // a match starts in its round
				startedAt[ms.MatchID] = b.ID
			case league.EventMatchFinished:
				mf := dataOf[league.MatchFinishedEvent](t, b)
				is.True(startedAt[mf.MatchID] != 0) // finished after it started
				dones = append(dones, mf.Done)
				is.Equal(mf.Total, 6)
			case league.EventTechnicalLoss:
				tl := dataOf[league.TechnicalLossEvent](t, b)
				is.Equal(tl, league.TechnicalLossEvent{MatchID: "R2M2", RoundID: 2, PlayerID: "P04", Code: protocol.ErrTimeout, Reason: "no answer"})
			}
		}
		slices.Sort(dones)
		is.Equal(dones, []int{1, 2, 3, 4, 5, 6}) // each count told once (two counted at once may be told in either order)
		end := dataOf[league.LeagueCompletedEvent](t, got[len(got)-1])
		is.Equal(end.Seed, uint64(42)) // told at the end
		is.Equal(end.Champion, lc.Champion)
		is.Equal(end.FinalStandings, lc.FinalStandings)
	})
}

// TestEventsResumeMidLeague: a watcher whose stream drops in the middle
// of a league and comes back with the last id it saw (Last-Event-ID) is
// sent what it missed meanwhile, then the rest: both streams together
// hold every event once. The first stream starts with ?after=0, as a
// client that cannot set headers asks for every event kept.
func TestEventsResumeMidLeague(t *testing.T) {
	is := is.New(t)
	h := newHarness(t, transporttest.Mem(), league.Options{})
	defer h.stop()
	srv := serveEvents(t, league.EventsHandler(h.mgr))
	ref := h.referee("REF01", 1, modeManual, nil)
	for _, id := range []string{"P01", "P02", "P03", "P04"} {
		h.player(id)
	}
	h.play()
	report := func() {
		t.Helper()
		status, err := ref.report(ref.nextStart(), "A")
		is.NoErr(err)
		is.Equal(status, protocol.StatusAccepted)
	}

	w1 := openEvents(t, h.ctx, srv.URL+"?after=0", "")
	report()
	got1 := w1.until(league.EventMatchFinished)
	is.Equal(got1[0].Type, league.EventRegistration) // ?after=0: every event kept, no snapshot
	is.Equal(got1[0].ID, uint64(1))
	w1.close() // the stream drops
	report()   // and the league goes on without the watcher
	report()

	last := got1[len(got1)-1].ID
	w2 := openEvents(t, h.ctx, srv.URL, strconv.FormatUint(last, 10))
	for range 3 {
		report()
	}
	h.wait()
	got2 := w2.until(league.EventLeagueCompleted)
	is.Equal(got2[0].ID, last+1) // no snapshot: what it missed, from the next one
	all := append(idsOf(got1), idsOf(got2)...)
	for i, id := range all {
		is.Equal(id, uint64(i+1)) // every event once, in order
	}
	is.Equal(all[len(all)-1], h.mgr.Events().Last())
	is.Equal(countOf(append(got1, got2...), league.EventMatchFinished), 6) // no result missed
}

// TestEventsSnapshotWhenGone: a watcher that comes back after the events
// it missed are no longer kept, or with a number the manager has not
// given, is sent a snapshot first, whose id is the last event it
// includes, and which shows the seed of a completed league; one that
// missed only events still kept is sent those.
func TestEventsSnapshotWhenGone(t *testing.T) {
	is := is.New(t)
	h := newHarness(t, transporttest.Mem(), league.Options{Seed: 9})
	defer h.stop()
	league.SetEventBuffer(h.mgr, 4)
	srv := serveEvents(t, league.EventsHandler(h.mgr))
	h.referee("REF01", 2, modeReport, crashScript)
	for _, id := range []string{"P01", "P02", "P03", "P04"} {
		h.player(id)
	}
	h.play()
	lc := h.wait()
	last := h.mgr.Events().Last()
	is.True(last > 8)

	w := openEvents(t, h.ctx, srv.URL, "3") // event 4 is gone
	b := w.next()
	is.Equal(b.Type, league.EventSnapshot) // a snapshot in place of what is gone
	is.Equal(b.ID, last)                   // including every event
	snap := dataOf[league.Snapshot](t, b)
	is.Equal(snap.LeagueID, leagueID)
	is.Equal(snap.State, league.StateCompleted)
	is.Equal(snap.MatchesDone, 6)
	is.Equal(snap.MatchesTotal, 6)
	is.Equal(snap.Rounds, 3)
	is.Equal(snap.Standings, lc.FinalStandings)
	is.Equal(len(snap.Agents), 5)
	is.Equal(len(snap.InFlight), 0)
	is.True(snap.Seed != nil && *snap.Seed == 9) // a completed league's seed is told

	w = openEvents(t, h.ctx, srv.URL, strconv.FormatUint(last+100, 10)) // a number not given (a run that kept no bound)
	b = w.next()
	is.Equal(b.Type, league.EventSnapshot) // a snapshot too
	is.Equal(b.ID, last)

	w2 := openEvents(t, h.ctx, srv.URL+"?after="+strconv.FormatUint(last-2, 10), "")
	is.Equal(w2.next().ID, last-1) // still kept: sent as they were
	end := w2.next()
	is.Equal(end.ID, last)
	is.Equal(end.Type, league.EventLeagueCompleted)
}

// TestEventsNumberedAboveRestart: a manager restarted on its SQLite
// database numbers its events above every number it gave before the
// restart, so a watcher that comes back with an id of before is sent a
// snapshot (those events are gone), then the new events.
func TestEventsNumberedAboveRestart(t *testing.T) {
	is := is.New(t)
	n := transporttest.Mem()
	path := filepath.Join(t.TempDir(), "league.db")
	s1 := openStore(t, path)
	h1 := newHarness(t, n, league.Options{Store: s1})
	defer h1.stop()
	srv1 := serveEvents(t, league.EventsHandler(h1.mgr))
	ref := h1.referee("REF01", 1, modeManual, nil)
	for _, id := range []string{"P01", "P02", "P03", "P04"} {
		h1.player(id)
	}
	h1.play()
	w1 := openEvents(t, h1.ctx, srv1.URL+"?after=0", "")
	status, err := ref.report(ref.nextStart(), "A")
	is.NoErr(err)
	is.Equal(status, protocol.StatusAccepted)
	old := w1.until(league.EventMatchFinished)
	inFlight := ref.nextStart() // with the referee when the manager stops
	oldLast := h1.mgr.Events().Last()
	w1.close()
	h1.stop()
	is.NoErr(s1.Close())

	s2 := openStore(t, path)
	bound := load(t, s2).EventSeq
	is.True(bound > oldLast) // reserved before the numbers were given
	h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: s2})
	defer h2.stop()
	ref.h = h2
	srv2 := serveEvents(t, league.EventsHandler(h2.mgr))
	w2 := openEvents(t, h2.ctx, srv2.URL, strconv.FormatUint(old[len(old)-1].ID, 10))
	first := w2.next()
	is.Equal(first.Type, league.EventSnapshot) // the events of before are not kept
	is.Equal(first.ID, bound-1)                // above every number given before
	snap := dataOf[league.Snapshot](t, first)
	is.Equal(snap.State, league.StateRunning)
	is.Equal(snap.MatchesDone, 1)

	h2.run()
	status, err = ref.report(inFlight, "A")
	is.NoErr(err)
	is.Equal(status, protocol.StatusAccepted)
	ref.reportAll(t) // the rest, and the match in flight handed out again (a duplicate)
	h2.wait()
	rest := w2.until(league.EventLeagueCompleted)
	for i, b := range rest {
		is.Equal(b.ID, bound+uint64(i)) // numbered from the bound, in order
	}
	is.Equal(countOf(rest, league.EventMatchFinished), 5) // the other five results
	is.True(load(t, s2).EventSeq >= bound)                // the bound never goes down

	// Watchers of the manager before the restart that saw nothing, or
	// all of it, get a snapshot too.
	for _, id := range []string{"0", strconv.FormatUint(oldLast, 10)} {
		w := openEvents(t, h2.ctx, srv2.URL, id)
		b := w.next()
		is.Equal(b.Type, league.EventSnapshot) // id
		is.Equal(b.ID, h2.mgr.Events().Last())
		w.close()
	}
}

// TestEventsStreamsBounded: streams beyond the handler's bound are
// answered 503 with a Retry-After, so watchers cannot take the manager's
// connections and memory.
func TestEventsStreamsBounded(t *testing.T) {
	is := is.New(t)
	h := newHarness(t, transporttest.Mem(), league.Options{})
	defer h.stop()
	srv := serveEvents(t, league.EventsHandlerWith(h.mgr, time.Hour, 2))
	for range 2 {
		w := openEvents(t, h.ctx, srv.URL, "")
		is.Equal(w.next().Type, league.EventSnapshot) // served
	}
	req, err := http.NewRequestWithContext(h.ctx, http.MethodGet, srv.URL, nil)
	is.NoErr(err)
	resp, err := (&http.Client{}).Do(req)
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusServiceUnavailable) // the third waits
	is.Equal(resp.Header.Get("Retry-After"), "5")
	is.True(league.MaxEventStreams >= 256) // the default bound
}

// TestEventsStartsLimited: one address starts at most a burst of 20
// streams, then 5 a second: a watcher that reconnects in a loop is
// answered 429 before it costs the manager a subscription or a
// snapshot. The manager's clock stands still here: the 40 come at once.
func TestEventsStartsLimited(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, transporttest.Mem(), league.Options{Clock: func() time.Time { return now }})
	defer h.stop()
	srv := serveEvents(t, league.EventsHandler(h.mgr))
	c := &http.Client{}
	refused := 0
	for range 40 {
		ctx, cancel := context.WithCancel(h.ctx)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		is.NoErr(err)
		resp, err := c.Do(req)
		is.NoErr(err)
		if resp.StatusCode == http.StatusTooManyRequests {
			refused++
			is.Equal(resp.Header.Get("Retry-After"), "1")
		} else {
			is.Equal(resp.StatusCode, http.StatusOK)
		}
		resp.Body.Close()
		cancel() // it reconnects at once
	}
	is.Equal(refused, 40-20) // the burst, and no more while no time passes
}

// TestEventsBadRequests: only GET, and an id that is a number.
func TestEventsBadRequests(t *testing.T) {
	h := newHarness(t, transporttest.Mem(), league.Options{})
	defer h.stop()
	srv := serveEvents(t, league.EventsHandler(h.mgr))
	for _, tc := range []struct {
		name, method, query, lastID string
		code                        int
	}{
		{"POST", http.MethodPost, "", "", http.StatusMethodNotAllowed},
		{"Last-Event-ID not a number", http.MethodGet, "", "x", http.StatusBadRequest},
		{"after not a number", http.MethodGet, "?after=-1", "", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequestWithContext(h.ctx, tc.method, srv.URL+tc.query, nil)
			is.NoErr(err)
			if tc.lastID != "" {
				req.Header.Set("Last-Event-ID", tc.lastID)
			}
			resp, err := (&http.Client{}).Do(req)
			is.NoErr(err)
			resp.Body.Close()
			is.Equal(resp.StatusCode, tc.code)
		})
	}
}

// TestEventsOutliveServerTimeouts: a stream lives past the server's read
// and write timeouts, which bound one request of the league's, with a
// retry hint first and heartbeats while nothing happens; and it ends when
// the server shuts down, which would otherwise wait for it.
func TestEventsOutliveServerTimeouts(t *testing.T) {
	is := is.New(t)
	h := newHarness(t, transporttest.Mem(), league.Options{})
	defer h.stop()
	// The server's timeouts run from when it reads the request: the
	// client must send it, and the handler take the stream out of their
	// reach, well within them however loaded the machine.
	const timeout = time.Second
	srv := httptest.NewUnstartedServer(league.EventsHandlerWith(h.mgr, timeout/5, 8))
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = timeout, timeout
	srv.Start()
	t.Cleanup(srv.Close)
	w := openEvents(t, h.ctx, srv.URL, "")
	// The server read the request before it answered: both timeouts end
	// before over.
	over := time.Now().Add(timeout)
	hint, err := w.block()
	is.NoErr(err)
	is.Equal(hint.Retry, "2000") // a reconnection delay for EventSource
	is.Equal(w.next().Type, league.EventSnapshot)
	for beats := 0; beats < 2 || !time.Now().After(over); beats++ {
		b, err := w.block()
		is.NoErr(err) // the stream goes on past the timeouts
		is.Equal(b.Comment, "keep-alive")
	}
	h.player("P01") // an event made after the timeouts
	b := w.next()
	is.Equal(b.Type, league.EventRegistration) // and still carries events
	is.Equal(b.ID, uint64(1))

	shut := make(chan error, 1)
	go func() { shut <- srv.Config.Shutdown(h.ctx) }()
	for {
		if _, err = w.block(); err != nil {
			break
		}
	}
	is.Equal(err, io.EOF) // the stream ends with the server
	is.NoErr(<-shut)      // which did not wait for its deadline
	is.NoErr(h.ctx.Err())
}
