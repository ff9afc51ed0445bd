package dashboard

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// hostile is what an agent may choose as its name, endpoint or reason.
const hostile = `<img src=x onerror=alert(1)>`

// fakeLeague is a manager as the dashboard reads it, of any size, without
// a league played.
type fakeLeague struct {
	snap   league.Snapshot
	health []league.AgentHealth
	events *league.Events
}

func (f *fakeLeague) Snapshot() (league.Snapshot, uint64) { return f.snap, f.events.Last() }
func (f *fakeLeague) Health() []league.AgentHealth        { return f.health }
func (f *fakeLeague) Events() *league.Events              { return f.events }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newFake is a running league of n players and a referee, half its
// matches done, a match of each pair of players in flight.
func newFake(n int) *fakeLeague {
	f := &fakeLeague{events: league.NewEvents("league_7", 1, 0, func() time.Time { return t0 }, nil)}
	total := n * (n - 1) / 2
	f.snap = league.Snapshot{LeagueID: "league_7", State: league.StateRunning, Round: 2, Rounds: n - 1, MatchesDone: total / 2,
		MatchesTotal: total, StartedAt: t0.Add(-time.Minute), InFlight: []league.InFlight{}}
	f.snap.Agents = append(f.snap.Agents, league.AgentInfo{ID: "REF01", Role: protocol.RoleReferee, Endpoint: "http://127.0.0.1:8001/mcp"})
	f.health = append(f.health, league.AgentHealth{AgentID: "REF01", Role: protocol.RoleReferee, Endpoint: "http://127.0.0.1:8001/mcp",
		LastSeen: t0.Add(-time.Second), Calls: 10, LatencyP50: 3 * time.Millisecond, LatencyP95: 9 * time.Millisecond})
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("P%04d", i)
		f.snap.Standings = append(f.snap.Standings, protocol.StandingRow{Rank: i, PlayerID: id, DisplayName: "Player " + id,
			Played: 2, Wins: 1, Losses: 1, Points: 3})
		f.snap.Agents = append(f.snap.Agents, league.AgentInfo{ID: id, Role: protocol.RolePlayer, DisplayName: "Player " + id,
			Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", 9000+i)})
		f.health = append(f.health, league.AgentHealth{AgentID: id, Role: protocol.RolePlayer, DisplayName: "Player " + id,
			Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", 9000+i), LastSeen: t0.Add(-2 * time.Second), Calls: 6,
			LatencyP50: time.Millisecond, LatencyP95: 4 * time.Millisecond})
		if i%2 == 0 {
			f.snap.InFlight = append(f.snap.InFlight, league.InFlight{MatchID: fmt.Sprintf("R2M%d", i/2), RoundID: 2,
				PlayerA: fmt.Sprintf("P%04d", i-1), PlayerB: id, RefereeID: "REF01", Since: t0.Add(-3 * time.Second)})
		}
	}
	return f
}

func get(t *testing.T, h http.Handler, target string) *http.Response {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	return w.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPage(t *testing.T) {
	t.Run("a running league", func(t *testing.T) {
		is := is.New(t)
		f := newFake(4)
		r := get(t, newHandler(f, Options{Now: func() time.Time { return t0 }}), "/")
		b := body(t, r)
		is.Equal(r.StatusCode, http.StatusOK)
		is.Equal(r.Header.Get("Content-Type"), "text/html; charset=utf-8")
		is.True(strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'self'")) // no inline script runs
		is.Equal(r.Header.Get("Referrer-Policy"), "no-referrer")                                // a ?token= leaks nowhere
		is.True(strings.Contains(b, `<span id="league-id">league_7</span>`))
		is.True(strings.Contains(b, `<dd id="league-state" data-started-at="2026-03-01T11:59:00Z">RUNNING</dd>`))
		is.True(strings.Contains(b, `<span id="league-done">3</span> / <span id="league-total">6</span>`))
		is.True(strings.Contains(b, `<dd id="league-elapsed">1m00s</dd>`)) // a minute since the start
		is.True(strings.Contains(b, `<dd id="league-eta">1m00s</dd>`))     // half done: as long again
		is.True(strings.Contains(b, "hidden until the end"))               // no seed while it runs
		for _, id := range []string{"P0001", "P0002", "P0003", "P0004"} {
			is.True(strings.Contains(b, `<tr data-player="`+id+`">`)) // every player's row
		}
		is.True(strings.Contains(b, `<tr data-match="R2M1"><td>R2M1</td><td>P0001 vs P0002</td><td>REF01</td>`)) // in flight
		is.True(strings.Contains(b, `src="/dashboard/static/app.js"`))
		is.True(!strings.Contains(b, `src="http`) && !strings.Contains(b, `href="http`)) // nothing from elsewhere: works offline
	})
	t.Run("a completed league tells its seed", func(t *testing.T) {
		is := is.New(t)
		f := newFake(4)
		seed := uint64(42)
		f.snap.State, f.snap.MatchesDone, f.snap.Seed = league.StateCompleted, 6, &seed
		b := body(t, get(t, newHandler(f, Options{Now: func() time.Time { return t0 }}), "/"))
		is.True(strings.Contains(b, `<dd id="league-seed" title="told once the league is over">42</dd>`))
		is.True(strings.Contains(b, `<dd id="league-eta">done</dd>`))
	})
	t.Run("before the start", func(t *testing.T) {
		is := is.New(t)
		f := &fakeLeague{events: league.NewEvents("league_7", 1, 0, nil, nil),
			snap: league.Snapshot{LeagueID: "league_7", State: league.StateRegistration, Standings: []protocol.StandingRow{}, InFlight: []league.InFlight{}}}
		r := get(t, newHandler(f, Options{}), "/")
		is.Equal(r.StatusCode, http.StatusOK)
		is.True(strings.Contains(body(t, r), ">REGISTRATION<"))
	})
	t.Run("only / is the page", func(t *testing.T) {
		is := is.New(t)
		is.Equal(get(t, newHandler(newFake(2), Options{}), "/index.html").StatusCode, http.StatusNotFound)
	})
}

// TestHostileNames: what an agent chose is text in the page, never markup.
func TestHostileNames(t *testing.T) {
	is := is.New(t)
	f := newFake(3)
	f.snap.Standings[0].DisplayName = hostile
	f.snap.InFlight[0].PlayerA = hostile
	f.health[1].DisplayName = hostile
	f.health[1].Endpoint = `http://x/"><script>alert(1)</script>`
	f.health[1].LastLossReason = hostile
	f.health[1].LastLossCode = "E001"
	f.health[1].TechnicalLosses = 1
	f.health[2].DisplayName = `" onmouseover="alert(1)`
	h := newHandler(f, Options{})
	b := body(t, get(t, h, "/"))
	is.True(!strings.Contains(b, "<img"))                                 // no element made of a name
	is.True(!strings.Contains(b, "<script>alert"))                        // nor of an endpoint
	is.True(!strings.Contains(b, `" onmouseover="`))                      // nor an attribute
	is.True(strings.Contains(b, "&lt;img src=x onerror=alert(1)&gt;"))    // the name is shown, as text
	is.True(strings.Contains(b, "&lt;script&gt;alert(1)&lt;/script&gt;")) // the endpoint too
	is.Equal(strings.Count(b, "<script"), 1)                              // the page's own script alone

	r := get(t, h, HealthPath)
	is.Equal(r.Header.Get("Content-Type"), "application/json")
	is.Equal(r.Header.Get("X-Content-Type-Options"), "nosniff") // never sniffed as a page
	var got []healthView
	is.NoErr(json.Unmarshal([]byte(body(t, r)), &got))
	var names []string
	for _, a := range got {
		names = append(names, a.Name)
	}
	is.True(strings.Contains(strings.Join(names, "\n"), hostile)) // given back as it was, for textContent

	js := body(t, get(t, h, StaticPath+"app.js"))
	is.True(strings.Contains(js, "textContent"))
	is.True(!strings.Contains(js, "innerHTML"))          // the script makes no markup of text
	is.True(!strings.Contains(js, "insertAdjacentHTML")) // nor this way
	is.True(!strings.Contains(js, "outerHTML"))
}

// TestLargeLeague: at 1000 players the page is one page of each table,
// small and quick.
func TestLargeLeague(t *testing.T) {
	is := is.New(t)
	f := newFake(1000)
	h := newHandler(f, Options{Now: func() time.Time { return t0 }})
	get(t, h, "/") // the template's first run is not what a visitor waits for
	const runs = 20
	start := time.Now()
	var size int
	for range runs {
		r := get(t, h, "/")
		is.Equal(r.StatusCode, http.StatusOK)
		size = len(body(t, r))
	}
	per := time.Since(start) / runs
	t.Logf("1000 players, 500 matches in flight: GET / is %d bytes, rendered in %s", size, per)
	b := body(t, get(t, h, "/"))
	is.Equal(strings.Count(b, "<tr data-player="), DefaultPageSize) // one page of standings
	is.Equal(strings.Count(b, "<tr data-match="), DefaultPageSize)  // of matches in flight
	is.Equal(strings.Count(b, "<tr class=\"st-"), DefaultPageSize)  // of agents
	is.True(strings.Contains(b, "1000 players, 50 a page"))
	is.True(size < 100<<10)             // under 100 KB
	is.True(per < 250*time.Millisecond) // even under -race

	r := get(t, h, StatePath)
	var s standingsView
	is.NoErr(json.Unmarshal([]byte(body(t, r)), &s))
	is.Equal(len(s.Standings), 1000) // the script pages the whole table itself
}

func TestHealth(t *testing.T) {
	is := is.New(t)
	f := newFake(4)
	f.health[1].BreakerOpen = true                         // P0001: down
	f.health[2].LatencyP95 = 3 * time.Second               // P0002: slow
	f.health[3].Failures, f.health[3].LastLossCode = 2, "" // P0003: failing
	f.health[4].TechnicalLosses, f.health[4].LastLossCode, f.health[4].LastLossReason = 1, "E001", "timeout"
	var got []healthView
	is.NoErr(json.Unmarshal([]byte(body(t, get(t, newHandler(f, Options{Now: func() time.Time { return t0 }}), HealthPath))), &got))
	is.Equal(len(got), 5)
	status := map[string]string{}
	for _, a := range got {
		status[a.ID] = a.Status
	}
	is.Equal(status, map[string]string{"REF01": "ok", "P0001": "down", "P0002": "slow", "P0003": "failing", "P0004": "failing"})
	is.Equal(got[0].ID, "P0001") // the worst first
	is.Equal(got[1].ID, "P0002")
	is.Equal(got[4].ID, "REF01")
	is.Equal(got[4].P95, 9.0) // milliseconds
	is.Equal(got[3].LastCode, "E001")
	is.Equal(got[3].LastReason, "timeout")

	b := body(t, get(t, newHandler(f, Options{Now: func() time.Time { return t0 }}), "/"))
	is.True(strings.Contains(b, `<tr class="st-down" data-agent="P0001">`)) // red at a glance
	is.True(strings.Contains(b, `<td>open</td>`))                           // its breaker
	is.True(strings.Contains(b, `E001 timeout`))                            // the code and reason of a technical loss
}

func TestHistory(t *testing.T) {
	is := is.New(t)
	f := newFake(3)
	f.events.Publish(league.EventRoundStarted, league.RoundEvent{RoundID: 1, Matches: 1})
	f.events.Publish(league.EventRoundCompleted, league.RoundEvent{RoundID: 1, Standings: []protocol.StandingRow{
		{PlayerID: "P0001", Points: 3}, {PlayerID: "P0002", Points: 0}}})
	f.events.Publish(league.EventRoundCompleted, league.RoundEvent{RoundID: 2, Standings: []protocol.StandingRow{
		{PlayerID: "P0003", Points: 3}, {PlayerID: "P0001", Points: 4}, {PlayerID: "P0002", Points: 1}}})
	var h historyView
	is.NoErr(json.Unmarshal([]byte(body(t, get(t, newHandler(f, Options{}), HistoryPath))), &h))
	is.Equal(h.Players, []string{"P0001", "P0002", "P0003"})
	is.Equal(h.Rounds, []int{1, 2})
	is.Equal(h.Points, [][]int{{3, 0, 0}, {4, 1, 3}}) // P0003's first round padded
	is.Equal(h.FirstRound, 1)
}

func TestStatic(t *testing.T) {
	h := newHandler(newFake(2), Options{})
	for _, c := range []struct{ path, ctype string }{
		{StaticPath + "app.js", "text/javascript; charset=utf-8"},
		{StaticPath + "style.css", "text/css; charset=utf-8"},
	} {
		t.Run(c.path, func(t *testing.T) {
			is := is.New(t)
			r := get(t, h, c.path)
			is.Equal(r.StatusCode, http.StatusOK)
			is.Equal(r.Header.Get("Content-Type"), c.ctype)
		})
	}
	t.Run("nothing else", func(t *testing.T) {
		is := is.New(t)
		is.Equal(get(t, h, StaticPath+"dashboard.go").StatusCode, http.StatusNotFound) // no file but the assets
		is.Equal(get(t, h, StaticPath).StatusCode, http.StatusNotFound)                // nor is a listing
	})
}
