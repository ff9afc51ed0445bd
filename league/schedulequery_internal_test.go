package league

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// runningManager is registeredManager's manager of n players with its
// schedule set up, as once started.
func runningManager(tb testing.TB, n int) *Manager {
	tb.Helper()
	m, ids := registeredManager(n)
	slices.Sort(ids)
	if err := m.buildRoundsLocked(Schedule(ids)); err != nil {
		tb.Fatal(err)
	}
	m.state = StateRunning
	return m
}

func scheduleQuery(round int, player string) *protocol.LeagueQuery {
	q := &protocol.LeagueQuery{Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeLeagueQuery,
		ConversationID: "conv-schedule"}, QueryType: protocol.QuerySchedule}
	if round != 0 || player != "" {
		q.QueryParams = &protocol.QueryParams{RoundID: round, PlayerID: player}
	}
	return q
}

// TestSchedulePages: a whole schedule too large for one answer comes a
// part at a time, each of at most MaxScheduleMatches matches and about a
// megabyte, and the parts, asked for by the round each names next, make
// the whole schedule once, in order.
func TestSchedulePages(t *testing.T) {
	is := is.New(t)
	m := runningManager(t, 300) // 299 rounds of 150 matches
	resp, err := m.Answer(t.Context(), scheduleQuery(0, ""), "", "")
	is.NoErr(err)
	is.True(resp.Success)
	first := resp.Data.(*ScheduleData)
	is.Equal(len(first.Rounds), MaxScheduleMatches/150) // the rounds that fit
	is.Equal(first.NextRoundID, MaxScheduleMatches/150+1)
	b, err := json.Marshal(resp)
	is.NoErr(err)
	is.True(len(b) < 2<<20) // well within a client's 8 MiB

	rounds := first.Rounds
	for next := first.NextRoundID; next != 0; {
		resp, err := m.Answer(t.Context(), scheduleQuery(next, ""), "", "")
		is.NoErr(err)
		is.True(resp.Success)
		d := resp.Data.(*ScheduleData)
		is.Equal(len(d.Rounds), 1) // the round asked for
		is.Equal(d.Rounds[0].RoundID, next)
		if next < 299 {
			is.Equal(d.NextRoundID, next+1)
		} else {
			is.Equal(d.NextRoundID, 0) // none after the last
		}
		rounds = append(rounds, d.Rounds...)
		next = d.NextRoundID
	}
	is.Equal(len(rounds), 299)
	matches := 0
	for i, r := range rounds {
		is.Equal(r.RoundID, i+1) // every round, once, in order
		for j, mt := range r.Matches {
			is.Equal(mt, m.rounds[i][j].scheduled())
		}
		matches += len(r.Matches)
	}
	is.Equal(matches, 300*299/2)

	// A player's whole schedule fits one answer.
	resp, err = m.Answer(t.Context(), scheduleQuery(0, "P007"), "", "")
	is.NoErr(err)
	d := resp.Data.(*ScheduleData)
	is.Equal(len(d.Rounds), 299)
	is.Equal(d.NextRoundID, 0)
	for _, r := range d.Rounds {
		is.Equal(len(r.Matches), 1) // an even league: one match a round
		is.True(r.Matches[0].PlayerAID == "P007" || r.Matches[0].PlayerBID == "P007")
	}
}

// TestScheduleAnswersBounded: however many ask at once, at most
// MaxScheduleAnswers schedule answers are built at once (counted as they
// are built); the others wait for their turn and are answered.
func TestScheduleAnswersBounded(t *testing.T) {
	is := is.New(t)
	m := runningManager(t, 300)
	const askers = 32
	// Holding the manager's lock holds every answer being built at its
	// first round, so that as many are built at once as are let in.
	m.mu.Lock()
	var entered sync.WaitGroup
	var wg sync.WaitGroup
	errs := make(chan error, askers)
	entered.Add(askers)
	for range askers {
		wg.Go(func() {
			entered.Done()
			resp, err := m.Answer(context.Background(), scheduleQuery(0, ""), "", "")
			if err == nil && (!resp.Success || len(resp.Data.(*ScheduleData).Rounds) == 0) {
				t.Errorf("answer: %+v", resp)
			}
			errs <- err
		})
	}
	entered.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for m.scheduleAnswers.building.Load() < MaxScheduleAnswers && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	for range 10000 {
		runtime.Gosched() // time for any more to be let in, were they to be
	}
	is.Equal(m.scheduleAnswers.building.Load(), int64(MaxScheduleAnswers)) // as many as the bound, no more
	m.mu.Unlock()
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // every one answered in its turn
	}
	is.Equal(m.scheduleAnswers.peak.Load(), int64(MaxScheduleAnswers)) // never more at once
	is.Equal(m.scheduleAnswers.building.Load(), int64(0))
}

// TestScheduleAnswerTurnEnds: a schedule answer that gets no turn within
// its caller's time is refused with E016, which is retryable, and is
// built once a turn is free.
func TestScheduleAnswerTurnEnds(t *testing.T) {
	is := is.New(t)
	m := runningManager(t, 10)
	for range MaxScheduleAnswers {
		is.NoErr(m.scheduleAnswers.acquire(t.Context(), time.Second))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := m.Answer(ctx, scheduleQuery(0, ""), "", "")
	is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // E016: ask again
	is.Equal(m.scheduleAnswers.peak.Load(), int64(MaxScheduleAnswers))
	_, err = m.Answer(t.Context(), &protocol.LeagueQuery{QueryType: protocol.QueryStandings}, "", "")
	is.NoErr(err) // other queries take no turn
	m.scheduleAnswers.release()
	resp, err := m.Answer(t.Context(), scheduleQuery(0, ""), "", "")
	is.NoErr(err)
	is.Equal(len(resp.Data.(*ScheduleData).Rounds), 9)
}
