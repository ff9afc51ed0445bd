package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// progressSource follows a league for a view until it has told all of
// it, or ctx ends. ended says the league is over (its result came): the
// source tells what it has not yet, and returns. A source of the
// manager's /events stream would do the same from its events.
type progressSource interface {
	follow(ctx context.Context, v progressView, ended <-chan struct{})
}

// caller is the one method of transport.Client a poller needs.
type caller interface {
	Call(ctx context.Context, endpoint, method string, params, result any) error
}

// statusPollInterval is how often start --wait asks the manager where
// its league is: a bar that moves, for two small calls a second.
const statusPollInterval = 500 * time.Millisecond

// statusPoller follows a league by asking its manager's get_league_status
// every interval, and the GET_SCHEDULE of each round that completes for
// the round's draws and technical losses. A failed look is not an error:
// the progress is a courtesy, and the next look tells it; the league's
// result, and its errors, come by get_league_result.
type statusPoller struct {
	client   caller
	manager  string
	token    string
	interval time.Duration
	now      func() time.Time
	// joined: the league was running before start came; the rounds it
	// completed before the first look are not told again.
	joined bool

	looked   bool
	lastLook time.Time
	running  int       // the round seen under way at the last look
	since    time.Time // when it was first seen under way
	timed    int       // rounds whose end has been seen
	pending  []roundDone
}

func newStatusPoller(client caller, manager, token string, joined bool) *statusPoller {
	return &statusPoller{client: client, manager: manager, token: token, interval: statusPollInterval,
		now: time.Now, joined: joined}
}

func (p *statusPoller) follow(ctx context.Context, v progressView, ended <-chan struct{}) {
	p.lastLook = p.now()
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		if p.look(ctx, v) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ended:
			p.look(ctx, v) // the last rounds' ends, if this look did not see them
			return
		case <-tick.C:
		}
	}
}

// look asks once where the league is, tells v, and reports whether the
// whole league has been told.
func (p *statusPoller) look(ctx context.Context, v progressView) bool {
	var st league.Status
	if err := p.client.Call(ctx, p.manager, protocol.MethodGetLeagueStatus, adminParams(p.token, nil), &st); err != nil {
		return false
	}
	at := p.now()
	if st.State == league.StateRunning || st.State == league.StateCompleted {
		v.progress(leagueProgress{at: at, done: st.MatchesPlayed, total: st.TotalMatches})
	}
	// A round's matches are all counted once the next one is under way:
	// the manager starts a round when every result of the one before is in.
	completed := 0
	switch st.State {
	case league.StateCompleted:
		completed = st.TotalRounds
	case league.StateRunning:
		completed = max(st.CurrentRound-1, 0)
	}
	if !p.looked && p.joined {
		p.timed = completed
	}
	p.looked = true
	for r := p.timed + 1; r <= completed; r++ {
		d := roundDone{round: r, rounds: st.TotalRounds}
		if r == p.running {
			d.took = at.Sub(p.since)
		} else {
			// Not under way at the last look, over at this one.
			d.under = at.Sub(p.lastLook)
		}
		p.pending = append(p.pending, d)
	}
	p.timed = max(p.timed, completed)
	if st.State == league.StateRunning && st.CurrentRound != p.running {
		p.running, p.since = st.CurrentRound, at
	}
	p.lastLook = at
	for len(p.pending) > 0 {
		if !p.count(ctx, &p.pending[0]) {
			return false // asked again at the next look, so that lines keep their order
		}
		v.roundCompleted(p.pending[0])
		p.pending = p.pending[1:]
	}
	return st.State == league.StateCompleted
}

// count fills in d's matches, draws and technical losses from the
// round's schedule, and reports whether the manager told it.
func (p *statusPoller) count(ctx context.Context, d *roundDone) bool {
	q := map[string]any{"query_type": protocol.QuerySchedule, "query_params": map[string]any{"round_id": d.round}}
	var resp struct {
		Success bool                `json:"success"`
		Data    league.ScheduleData `json:"data"`
	}
	if err := p.client.Call(ctx, p.manager, league.MethodAdminQuery, adminParams(p.token, q), &resp); err != nil ||
		!resp.Success || len(resp.Data.Rounds) != 1 {
		return false
	}
	d.matches, d.draws, d.technicalLosses = 0, 0, 0
	for _, m := range resp.Data.Rounds[0].Matches {
		d.matches++
		// As the manager's round summary counts them: a match with a
		// technical loss is one, whatever the other side got.
		a, b, _ := strings.Cut(m.Result, "-")
		switch {
		case a == protocol.ResultTechnicalLoss || b == protocol.ResultTechnicalLoss:
			d.technicalLosses++
		case a == protocol.ResultDraw:
			d.draws++
		}
	}
	return true
}
