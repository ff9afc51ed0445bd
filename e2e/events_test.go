package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"
)

// streamEvent is one event of /events as a plain HTTP client reads it.
type streamEvent struct {
	id, typ, data string
	// state is the league's state, by the manager's /health, when the
	// event was read.
	state string
}

// TestEventsAcrossProcesses: "curl -N /events prints events as they
// happen". A plain HTTP client reads the manager process's /events while
// a league of four slow players runs across processes: it is sent a
// snapshot, then every event numbered in order, each result while the
// league is still running, league_completed last. leaguectl watch then
// prints the same events and exits 0.
func TestEventsAcrossProcesses(t *testing.T) {
	is := is.New(t)
	t.Setenv("LEAGUECTL_RETRY_INITIAL_DELAY", "20ms")
	t.Setenv("LEAGUECTL_RETRY_MAX_DELAY", "100ms")
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--seed", "5", "--min-players", "4")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(mgr.endpoint, "/mcp")+"/events", nil)
	is.NoErr(err)
	resp, err := (&http.Client{}).Do(req) // as curl -N does: no Last-Event-ID
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK)
	is.True(strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"))

	startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01", "--seed", "5")
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("P%02d", i)
		// Slow players (well within the timeouts) stretch the league, so
		// that an event arrives while it runs, or not at all, and cannot
		// pass for one that came at the end.
		startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id, "--seed", "5",
			"--fault", "slow:50ms")
	}

	var got []streamEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var ev streamEvent
	for sc.Scan() {
		field, value, _ := strings.Cut(sc.Text(), ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.typ = value
		case "data":
			ev.data = value
		}
		if sc.Text() != "" || ev.typ == "" {
			continue
		}
		if ev.typ == "match_finished" {
			ev.state, _ = status(t, mgr.endpoint)["state"].(string)
		}
		got = append(got, ev)
		if ev.typ == "league_completed" {
			break
		}
		ev = streamEvent{}
	}
	is.NoErr(sc.Err())
	is.True(len(got) > 0)
	is.Equal(got[0].typ, "snapshot") // a client without an id is shown the league first
	is.Equal(got[len(got)-1].typ, "league_completed")
	finished := 0
	for i, e := range got[1:] {
		is.Equal(e.id, strconv.Itoa(i+1)) // numbered from 1, in order, none missed
		var w struct {
			Seq  uint64 `json:"seq"`
			Type string `json:"type"`
		}
		is.NoErr(json.Unmarshal([]byte(e.data), &w)) // one line of JSON
		is.Equal(strconv.FormatUint(w.Seq, 10), e.id)
		is.Equal(w.Type, e.typ)
		if e.typ == "match_finished" {
			finished++
			if finished == 1 {
				is.Equal(e.state, "RUNNING") // the first result came while the league ran
			}
		}
	}
	is.Equal(finished, 6) // every result, before league_completed
	resp.Body.Close()

	out, errs, code := runCLI(t, "watch", "--manager", mgr.endpoint, "--output", "json", "--after", "0")
	is.Equal(code, 0) // watch ends at league_completed
	if code != 0 {
		t.Fatal(errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	is.Equal(len(lines), len(got)-1) // every event, without the snapshot
	for i, line := range lines {
		is.Equal(line, got[i+1].data) // as the stream sent it
	}
}
