package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// UnknownCode is the code label of technical losses whose events were
// missed (FollowLeague fell more than the manager's event buffer behind,
// or began after a restart of the manager mid-league): their number is
// the standings', their codes are not known. OtherCode is that of a code
// that is not one of the spec's, as another implementation's referee may
// report.
const (
	UnknownCode = "unknown"
	OtherCode   = "other"
)

// leagueMetrics are a manager's: its league's.
type leagueMetrics struct {
	completed  prometheus.Counter
	losses     *prometheus.CounterVec
	registered *prometheus.GaugeVec
	inFlight   prometheus.Gauge
	scheduled  prometheus.Gauge
	round      prometheus.Gauge
	events     *prometheus.CounterVec
}

// leagueMetrics registers the league's metrics, once.
func (m *Metrics) leagueMetrics() *leagueMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.league != nil {
		return m.league
	}
	lm := &leagueMetrics{
		completed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "matches_completed_total",
			Help: "Matches whose result the manager counted."}),
		losses: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "technical_losses_total",
			Help: "Technical losses in counted matches, by error code (E001…E018, other, or unknown for those whose events were missed)."},
			[]string{"code"}),
		registered: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "registered_agents",
			Help: "Agents registered in the league, by role."}, []string{"role"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "matches_in_flight",
			Help: "Matches handed to a referee whose result is not counted yet."}),
		scheduled: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "matches_scheduled",
			Help: "Matches in the league's schedule (0 before it starts)."}),
		round: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "round",
			Help: "The round being played, 1-based; 0 before the league starts."}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "league_events_total",
			Help: "The league's events read, by type (docs/events.md)."}, []string{"type"}),
	}
	for _, role := range []protocol.Role{protocol.RoleReferee, protocol.RolePlayer} {
		lm.registered.WithLabelValues(string(role))
	}
	m.reg.MustRegister(lm.completed, lm.losses, lm.registered, lm.inFlight, lm.scheduled, lm.round, lm.events)
	m.league = lm
	return lm
}

// FollowLeague keeps the league metrics of mgr, the agent's manager, from
// its events, in a goroutine of its own until ctx ends, and returns a
// channel closed once that goroutine is done. It starts from the manager's
// snapshot, and starts again from a snapshot when its events are no longer
// kept; a subscription dropped as too slow takes up where it was, from the
// events still kept. So the metrics are a function of the league, not of
// when they were read: a scrape waits (Handler) for the events published
// before it. Follow one manager with a Metrics.
func (m *Metrics) FollowLeague(ctx context.Context, mgr *league.Manager) (stopped <-chan struct{}) {
	f := &following{events: mgr.Events()}
	st := &leagueState{m: m, lm: m.leagueMetrics(), agents: map[string]protocol.Role{}, inFlight: map[string]struct{}{},
		breakers: map[string]bool{}}
	snap, after := mgr.Snapshot()
	st.resync(snap, mgr.Health())
	f.advance(after)
	m.mu.Lock()
	m.follow = f // from now on a scrape waits for the events before it
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			m.mu.Lock()
			if m.follow == f {
				m.follow = nil
			}
			m.mu.Unlock()
		}()
		st.follow(ctx, f, mgr, after)
	}()
	return done
}

// follow is FollowLeague's goroutine.
func (st *leagueState) follow(ctx context.Context, f *following, mgr *league.Manager, after uint64) {
	for ctx.Err() == nil {
		missed, gap, next, cancel := f.events.Subscribe(after)
		if gap {
			// What was missed is told by the league as it stands; events
			// on next up to its Seq are in it.
			var snap league.Snapshot
			snap, after = mgr.Snapshot()
			st.resync(snap, mgr.Health())
			f.advance(after)
		}
		for _, ev := range missed {
			st.apply(ev)
			after = ev.Seq
			f.advance(after)
		}
		after = st.read(ctx, f, next, after)
		cancel()
	}
}

// read applies the events of next after after until ctx ends or next is
// closed (too far behind), and returns the last one applied.
func (st *leagueState) read(ctx context.Context, f *following, next <-chan Event, after uint64) uint64 {
	for {
		select {
		case <-ctx.Done():
			return after
		case ev, ok := <-next:
			if !ok {
				return after
			}
			if ev.Seq <= after {
				continue
			}
			st.apply(ev)
			after = ev.Seq
			f.advance(after)
		}
	}
}

// Event is a league event.
type Event = league.Event

// leagueState is what FollowLeague knows of the league, beside the
// metrics themselves, which cannot be read back. Its goroutine's own.
type leagueState struct {
	m         *Metrics
	lm        *leagueMetrics
	agents    map[string]protocol.Role
	inFlight  map[string]struct{} // match ids
	completed int
	losses    int             // technical losses counted
	breakers  map[string]bool // agents with a breaker series, and its value
}

// resync sets the metrics from the league as it stands.
func (st *leagueState) resync(s league.Snapshot, health []league.AgentHealth) {
	clear(st.agents)
	for _, a := range s.Agents {
		st.agents[a.ID] = a.Role
	}
	st.setRegistered()
	clear(st.inFlight)
	for _, f := range s.InFlight {
		st.inFlight[f.MatchID] = struct{}{}
	}
	st.lm.inFlight.Set(float64(len(st.inFlight)))
	st.count(s.MatchesDone)
	losses := 0
	for _, r := range s.Standings {
		losses += r.TechnicalLosses
	}
	if losses > st.losses {
		st.lm.losses.WithLabelValues(UnknownCode).Add(float64(losses - st.losses))
		st.losses = losses
	}
	st.lm.scheduled.Set(float64(s.MatchesTotal))
	st.lm.round.Set(float64(s.Round))
	for _, h := range health {
		if h.BreakerOpen || st.breakers[h.AgentID] {
			st.breaker(h.AgentID, h.BreakerOpen)
		}
	}
}

// apply takes ev into the metrics.
func (st *leagueState) apply(ev Event) {
	st.lm.events.WithLabelValues(eventType(ev.Type)).Inc()
	switch d := ev.Data.(type) {
	case league.RegistrationEvent:
		st.agents[d.AgentID] = d.Role
		st.setRegistered()
	case league.LeagueStartedEvent:
		st.lm.scheduled.Set(float64(d.Matches))
	case league.RoundEvent:
		if ev.Type == league.EventRoundStarted {
			st.lm.round.Set(float64(d.RoundID))
		}
	case league.MatchStartedEvent:
		st.inFlight[d.MatchID] = struct{}{}
		st.lm.inFlight.Set(float64(len(st.inFlight)))
	case league.MatchFinishedEvent:
		delete(st.inFlight, d.MatchID)
		st.lm.inFlight.Set(float64(len(st.inFlight)))
		st.count(d.Done)
	case league.TechnicalLossEvent:
		st.lm.losses.WithLabelValues(codeLabel(d.Code)).Inc()
		st.losses++
	case league.BreakerEvent:
		st.breaker(d.AgentID, ev.Type == league.EventBreakerOpened)
	case league.LeagueCompletedEvent:
		clear(st.inFlight)
		st.lm.inFlight.Set(0)
	}
}

// count raises the completed matches to done: a result the snapshot
// counted may come again as an event.
func (st *leagueState) count(done int) {
	if done > st.completed {
		st.lm.completed.Add(float64(done - st.completed))
		st.completed = done
	}
}

func (st *leagueState) setRegistered() {
	n := map[protocol.Role]int{}
	for _, role := range st.agents {
		n[role]++
	}
	for _, role := range []protocol.Role{protocol.RoleReferee, protocol.RolePlayer} {
		st.lm.registered.WithLabelValues(string(role)).Set(float64(n[role]))
	}
}

func (st *leagueState) breaker(agent string, open bool) {
	st.breakers[agent] = open
	st.m.SetBreaker(agent, open)
}

// codeLabel is code as a label: one of the spec's codes, or OtherCode.
func codeLabel(code protocol.Code) string {
	if code.Known() {
		return string(code)
	}
	return OtherCode
}

// eventType is typ as a label: the manager's own event types.
func eventType(typ string) string {
	switch typ {
	case league.EventRegistration, league.EventLeagueStarted, league.EventRoundStarted, league.EventMatchStarted,
		league.EventMatchFinished, league.EventTechnicalLoss, league.EventRoundCompleted, league.EventBreakerOpened,
		league.EventBreakerClosed, league.EventLeagueCompleted:
		return typ
	}
	return "other"
}

// following is where FollowLeague is in the league's events, for the
// scrapes that wait for it.
type following struct {
	events *league.Events
	mu     sync.Mutex
	seen   uint64
	// wake is closed when seen moves; made by a scrape that waits, so
	// that events nobody waits for cost no channel.
	wake chan struct{}
}

// advance records that every event up to seq has been applied.
func (f *following) advance(seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq > f.seen {
		f.seen = seq
		if f.wake != nil {
			close(f.wake)
			f.wake = nil
		}
	}
}

// await waits until the events up to target are applied, ctx ends, or
// limit has passed.
func (f *following) await(ctx context.Context, target uint64, limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		f.mu.Lock()
		if f.seen >= target {
			f.mu.Unlock()
			return
		}
		if f.wake == nil {
			f.wake = make(chan struct{})
		}
		wake := f.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}
