package cmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// ttyBuffer is a buffer that says it is a terminal, as stderr is when a
// person runs leaguectl: it gets the bar.
type ttyBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (t *ttyBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.Write(p)
}

func (t *ttyBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

func (*ttyBuffer) IsTerminal() bool { return true }

// TestBarRateAndETA: on a terminal the bar shows the matches done of the
// league's, a rate in matches a second and an ETA, and takes itself off
// its line at the end. How the rate is averaged (its last ten half-second
// samples) is schollz/progressbar's.
func TestBarRateAndETA(t *testing.T) {
	is := is.New(t)
	tty := &ttyBuffer{}
	v := newProgressView(tty)
	_, isBar := v.(*barView)
	is.True(isBar) // a terminal gets a bar
	for _, done := range []int{0, 50, 100, 400} {
		v.progress(leagueProgress{at: time.Now(), done: done, total: 1000})
	}
	out := tty.String()
	is.True(strings.Contains(out, "matches"))
	is.True(strings.Contains(out, "/1000"))     // the count of the league's matches
	is.True(strings.Contains(out, "matches/s")) // a rate
	is.True(strings.Contains(out, ":"))         // elapsed:ETA
	v.close()
	is.True(strings.HasSuffix(tty.String(), "\r")) // the bar takes itself off its line
}

// TestProgressViewNotTerminal: anywhere but a terminal, no bar: a line a
// completed round.
func TestProgressViewNotTerminal(t *testing.T) {
	is := is.New(t)
	var buf bytes.Buffer
	v := newProgressView(&buf)
	v.progress(leagueProgress{at: time.Now(), done: 3, total: 6})
	is.Equal(buf.String(), "") // no bar
	v.roundCompleted(roundDone{round: 2, rounds: 3, matches: 2, draws: 1, technicalLosses: 1, took: 4100 * time.Millisecond})
	v.close()
	is.Equal(buf.String(), "round 2/3 completed: 2 matches, 1 draw, 1 technical loss, 4.1 s\n")
}

func TestRoundLine(t *testing.T) {
	for _, tc := range []struct {
		d    roundDone
		want string
	}{
		{roundDone{round: 3, rounds: 7, matches: 12, draws: 2, technicalLosses: 1, took: 4100 * time.Millisecond},
			"round 3/7 completed: 12 matches, 2 draws, 1 technical loss, 4.1 s"},
		{roundDone{round: 1, rounds: 1, matches: 1, technicalLosses: 2, under: 500 * time.Millisecond},
			"round 1/1 completed: 1 match, 0 draws, 2 technical losses, <0.5 s"},
		{roundDone{round: 1, rounds: 2, matches: 1, under: time.Millisecond},
			"round 1/2 completed: 1 match, 0 draws, 0 technical losses, <0.1 s"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			is := is.New(t)
			is.Equal(tc.d.String(), tc.want)
		})
	}
}

// fakeManager answers get_league_status with the status it holds, and
// GET_SCHEDULE of a round with its results; failSchedule makes those
// fail.
type fakeManager struct {
	st           league.Status
	rounds       map[int][]string // round → its matches' results, "WIN-LOSS"
	failSchedule bool
	asked        []int // the rounds asked for
}

func (f *fakeManager) Call(_ context.Context, _, method string, params, result any) error {
	var v any
	switch method {
	case protocol.MethodGetLeagueStatus:
		v = f.st
	case league.MethodAdminQuery:
		r := params.(map[string]any)["query_params"].(map[string]any)["round_id"].(int)
		f.asked = append(f.asked, r)
		if f.failSchedule {
			return errors.New("refused")
		}
		sr := league.ScheduledRound{RoundID: r}
		for _, res := range f.rounds[r] {
			sr.Matches = append(sr.Matches, league.ScheduledMatch{Result: res})
		}
		v = map[string]any{"success": true, "data": league.ScheduleData{Rounds: []league.ScheduledRound{sr}}}
	default:
		return errors.New("unexpected " + method)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, result)
}

// recorder is a view that keeps what it is told.
type recorder struct {
	looks  []leagueProgress
	rounds []roundDone
}

func (r *recorder) progress(p leagueProgress)  { r.looks = append(r.looks, p) }
func (r *recorder) roundCompleted(d roundDone) { r.rounds = append(r.rounds, d) }
func (r *recorder) close()                     {}

// TestStatusPoller: the poller tells each round once, in order, with its
// counts from the round's schedule; how long a round took as it saw it
// run, or under the time between two looks when it began and ended
// between them; a round it could not count is told at a later look.
func TestStatusPoller(t *testing.T) {
	results := map[int][]string{
		1: {"WIN-LOSS", "DRAW-DRAW"},
		2: {"TECHNICAL_LOSS-WIN", "DRAW-DRAW"},
		3: {"LOSS-WIN", "TECHNICAL_LOSS-TECHNICAL_LOSS"},
	}
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	running := func(round, done int) league.Status {
		return league.Status{State: league.StateRunning, CurrentRound: round, TotalRounds: 3, TotalMatches: 6, MatchesPlayed: done}
	}

	t.Run("started", func(t *testing.T) {
		is := is.New(t)
		m := &fakeManager{rounds: results}
		p := newStatusPoller(m, "x", "", false)
		p.now = func() time.Time { return now }
		v := &recorder{}
		p.lastLook = t0
		look := func(after time.Duration, st league.Status) bool {
			now, m.st = t0.Add(after), st
			return p.look(context.Background(), v)
		}
		is.True(!look(0, running(1, 0)))
		is.True(!look(time.Second, running(1, 1)))
		is.True(!look(1500*time.Millisecond, running(2, 2))) // round 1 over
		is.Equal(len(v.rounds), 1)
		is.Equal(v.rounds[0], roundDone{round: 1, rounds: 3, matches: 2, draws: 1, took: 1500 * time.Millisecond})
		m.failSchedule = true
		is.True(!look(2*time.Second, running(3, 4))) // round 2 over, not counted yet
		is.Equal(len(v.rounds), 1)
		m.failSchedule = false
		done := look(2500*time.Millisecond, league.Status{State: league.StateCompleted, CurrentRound: 3, TotalRounds: 3, TotalMatches: 6, MatchesPlayed: 6})
		is.True(done) // the whole league told
		is.Equal(len(v.rounds), 3)
		is.Equal(v.rounds[1], roundDone{round: 2, rounds: 3, matches: 2, draws: 1, technicalLosses: 1, took: 500 * time.Millisecond}) // seen from 1.5 s to 2 s
		is.Equal(v.rounds[2], roundDone{round: 3, rounds: 3, matches: 2, technicalLosses: 1, took: 500 * time.Millisecond})
		is.Equal(m.asked, []int{1, 2, 2, 3}) // round 2 asked again, each other once
		is.Equal(len(v.looks), 5)
		is.Equal(v.looks[4], leagueProgress{at: t0.Add(2500 * time.Millisecond), done: 6, total: 6})
	})

	t.Run("between two looks", func(t *testing.T) {
		is := is.New(t)
		m := &fakeManager{rounds: results, st: running(1, 0)}
		p := newStatusPoller(m, "x", "", false)
		p.now = func() time.Time { return now }
		p.lastLook, now = t0, t0
		v := &recorder{}
		p.look(context.Background(), v)
		now, m.st = t0.Add(300*time.Millisecond), league.Status{State: league.StateCompleted, CurrentRound: 3, TotalRounds: 3, TotalMatches: 6, MatchesPlayed: 6}
		is.True(p.look(context.Background(), v))
		is.Equal(len(v.rounds), 3)
		is.Equal(v.rounds[0].took, 300*time.Millisecond)  // seen running at the first look
		is.Equal(v.rounds[1].under, 300*time.Millisecond) // begun and ended between the looks
		is.Equal(v.rounds[2].String(), "round 3/3 completed: 2 matches, 0 draws, 1 technical loss, <0.3 s")
	})

	t.Run("joined", func(t *testing.T) {
		is := is.New(t)
		m := &fakeManager{rounds: results, st: running(3, 4)}
		p := newStatusPoller(m, "x", "", true)
		p.now = func() time.Time { return now }
		p.lastLook, now = t0, t0
		v := &recorder{}
		p.look(context.Background(), v)
		is.Equal(len(v.rounds), 0) // rounds over before start came are not told
		now, m.st = t0.Add(time.Second), league.Status{State: league.StateCompleted, CurrentRound: 3, TotalRounds: 3, TotalMatches: 6, MatchesPlayed: 6}
		is.True(p.look(context.Background(), v))
		is.Equal(len(v.rounds), 1)
		is.Equal(v.rounds[0].round, 3)
		is.Equal(m.asked, []int{3})
	})

	t.Run("a failed look", func(t *testing.T) {
		is := is.New(t)
		p := newStatusPoller(failing{}, "x", "", false)
		v := &recorder{}
		is.True(!p.look(context.Background(), v)) // not over, not an error
		is.Equal(len(v.looks)+len(v.rounds), 0)
	})
}

type failing struct{}

func (failing) Call(context.Context, string, string, any, any) error { return errors.New("down") }
