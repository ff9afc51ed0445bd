package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
)

// fourPlayerLeague serves a manager, a referee and four players in this
// process, P04 declining every match (a technical loss each round), and
// returns the manager's endpoint.
func fourPlayerLeague(t *testing.T) string {
	t.Helper()
	mgr, _ := serveCmd(t, nil, "serve-manager", "--port", "0", "--db", ":memory:", "--seed", "5")
	serveCmd(t, nil, "serve-referee", "--port", "0", "--manager", mgr, "--seed", "5")
	for i := 1; i <= 4; i++ {
		args := []string{"serve-player", "--port", "0", "--manager", mgr, "--id", fmt.Sprintf("P%02d", i), "--seed", "5"}
		if i == 4 {
			args = append(args, "--fault", "decline")
		}
		serveCmd(t, nil, args...)
	}
	return mgr
}

// runStartCmd runs start --wait against mgr with extra args, and returns
// its stdout.
func runStartCmd(t *testing.T, mgr string, stderr io.Writer, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout bytes.Buffer
	args := append([]string{"start", "--manager", mgr, "--min-players", "4", "--wait"}, extra...)
	if err := Run(ctx, args, &stdout, stderr); err != nil {
		t.Fatalf("start --wait: %v\n%s", err, stderr)
	}
	return stdout.String()
}

var roundLine = regexp.MustCompile(`^round (\d+)/3 completed: (\d+) match(?:es)?, (\d+) draws?, (\d+) technical loss(?:es)?, <?\d+\.\d s$`)

// TestStartWaitRoundLines: start --wait, its stderr not a terminal, prints
// one line a round as the rounds complete, whose counts are the round's
// results as the manager's schedule has them, then the standings on
// stdout.
func TestStartWaitRoundLines(t *testing.T) {
	is := is.New(t)
	mgr := fourPlayerLeague(t)
	var stderr bytes.Buffer
	out := runStartCmd(t, mgr, &stderr)
	is.True(strings.HasPrefix(out, "League league_2025_even_odd: 4 players, 3 rounds, 6 matches")) // the standings
	is.True(!strings.Contains(stderr.String(), "\r"))                                              // no bar
	var lines []string
	for l := range strings.Lines(stderr.String()) {
		if strings.HasPrefix(l, "round ") {
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	is.Equal(len(lines), 3) // one line a round
	for i, l := range lines {
		m := roundLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q", l)
		}
		round, _ := strconv.Atoi(m[1])
		is.Equal(round, i+1) // in order
		is.Equal(m[2], "2")  // matches: four players, two a round
		is.Equal(m[4], "1")  // technical losses: P04's match
		var schedule bytes.Buffer
		err := Run(context.Background(), []string{"query", "schedule", "--manager", mgr, "--round", m[1], "--output", "json"}, &schedule, io.Discard)
		is.NoErr(err)
		var resp struct {
			Data league.ScheduleData `json:"data"`
		}
		is.NoErr(json.Unmarshal(schedule.Bytes(), &resp))
		draws := 0
		for _, mt := range resp.Data.Rounds[0].Matches {
			if mt.Result == "DRAW-DRAW" {
				draws++
			}
		}
		is.Equal(m[3], strconv.Itoa(draws)) // draws, as the schedule has them
	}
}

// TestStartWaitBar: on a terminal, start --wait draws a bar of the
// matches on stderr, takes it off its line at the end, and prints no
// round lines.
func TestStartWaitBar(t *testing.T) {
	is := is.New(t)
	mgr := fourPlayerLeague(t)
	tty := &ttyBuffer{}
	out := runStartCmd(t, mgr, tty)
	is.True(strings.HasPrefix(out, "League league_2025_even_odd: 4 players")) // the standings
	errs := tty.String()
	is.True(strings.Contains(errs, "\rmatches "))     // a frame
	is.True(strings.Contains(errs, "/6, "))           // of the league's 6 matches
	is.True(strings.HasSuffix(errs, "\r"))            // taken off at the end
	is.True(!strings.Contains(errs, "round 1/3 com")) // no lines on a terminal
}

// TestStartWaitJSON: with --output json, start --wait prints the result
// and nothing else: no bar even on a terminal, no round lines.
func TestStartWaitJSON(t *testing.T) {
	is := is.New(t)
	mgr := fourPlayerLeague(t)
	tty := &ttyBuffer{}
	out := runStartCmd(t, mgr, tty, "--output", "json")
	is.Equal(strings.Count(out, "\n"), 1) // one JSON object
	var res simulateResult
	is.NoErr(json.Unmarshal([]byte(out), &res))
	is.Equal(res.TotalMatches, 6)
	is.Equal(len(res.FinalStandings), 4)
	is.Equal(res.Seed, uint64(5))
	errs := tty.String()
	is.True(!strings.Contains(errs, "matches ")) // no bar
	is.True(!strings.Contains(errs, "round "))   // no lines
}
