// Package metrics is an agent's Prometheus metrics (docs/metrics.md):
// a registry of the process's own, never the default one, with the Go
// and process collectors, the agent's outgoing calls and breakers
// (through transport.Hooks), and, for a league manager, its league, read
// from the manager's events (FollowLeague). Every label value is from a
// fixed set or an agent id the league gave: never a string an agent
// chose, such as an endpoint, a name or a reason.
package metrics

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// Namespace prefixes every metric of ours.
const Namespace = "leaguectl"

// OtherMethod is the method label of calls of a method no league.v2
// agent serves: the label's values stay a fixed set, whatever a caller
// names.
const OtherMethod = "other"

// Outcomes of a call, the values of leaguectl_calls_total's outcome label.
const (
	OutcomeOK          = "ok"
	OutcomeRemoteError = "remote_error" // the peer answered with an error
	OutcomeBadResponse = "bad_response" // an answer that is no usable JSON-RPC response, or a bare HTTP status
	OutcomeTimeout     = "timeout"
	OutcomeUnreachable = "unreachable" // nothing answers there, or no such endpoint
	OutcomeBreakerOpen = "breaker_open"
	OutcomeCanceled    = "canceled" // the caller gave up
	OutcomeError       = "error"    // anything else
)

var outcomes = [...]string{OutcomeOK, OutcomeRemoteError, OutcomeBadResponse, OutcomeTimeout, OutcomeUnreachable,
	OutcomeBreakerOpen, OutcomeCanceled, OutcomeError}

// outcomeIndex is err's outcome, as its index in outcomes.
func outcomeIndex(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := errors.AsType[*transport.Error](err); ok {
		switch e.Kind {
		case transport.KindRemote:
			return 1
		case transport.KindBadResponse, transport.KindStatus:
			return 2
		case transport.KindTimeout:
			return 3
		case transport.KindUnreachable, transport.KindBadEndpoint:
			return 4
		case transport.KindOpen:
			return 5
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 6
	}
	return 7
}

// CallBuckets are the bounds of leaguectl_call_duration_seconds: from a
// call in process (tens of microseconds) to the spec's longest timeout.
var CallBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Metrics are one agent's. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	callDuration *prometheus.HistogramVec
	calls        *prometheus.CounterVec
	breakerOpen  *prometheus.GaugeVec
	// methods are the series of each method a league.v2 agent serves, made
	// on its first call, so that a scrape lists the methods called only;
	// read-only once New returns.
	methods map[string]*methodSeries

	league *leagueMetrics // nil until FollowLeague
	mu     sync.Mutex     // guards league's registration and follow
	follow *following     // set while FollowLeague runs
}

// methodSeries are one method's series.
type methodSeries struct {
	once     sync.Once
	name     string
	duration prometheus.Observer
	outcomes [len(outcomes)]prometheus.Counter
}

// New returns an agent's metrics, in a registry of their own with the Go
// runtime's and the process's collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "call_duration_seconds",
			Help:    "Time of the agent's outgoing calls, retries included, by league method; calls its breakers refused are not in it.",
			Buckets: CallBuckets}, []string{"method"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "calls_total",
			Help: "The agent's outgoing calls, by league method and outcome."}, []string{"method", "outcome"}),
		breakerOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "breaker_open",
			Help: "1 while the agent's circuit breaker to another agent (by its league id) refuses calls, 0 once closed again."},
			[]string{"agent"}),
		methods: map[string]*methodSeries{},
	}
	series := map[string]*methodSeries{}
	for name, label := range knownMethods() {
		if series[label] == nil {
			series[label] = &methodSeries{name: label}
		}
		m.methods[name] = series[label]
	}
	m.methods[OtherMethod] = &methodSeries{name: OtherMethod}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.callDuration, m.calls, m.breakerOpen)
	return m
}

// knownMethods are the method names a league.v2 agent serves, each with
// its label: a league message's names (its tool name, its message type,
// their aliases) are one label, the one our agents call it by; a tool's
// is its name.
func knownMethods() map[string]string {
	out := map[string]string{}
	for _, name := range []string{protocol.MethodPing, protocol.MethodStartLeague, protocol.MethodGetLeagueStatus,
		protocol.MethodGetStandings, protocol.MethodGetPlayerState, protocol.MethodGetRegistrationStatus,
		protocol.MethodGetMatchState, protocol.MethodManualRegister, protocol.MethodToolsCall, protocol.MethodMCPMessage} {
		out[name] = name
	}
	for name, t := range protocol.Aliases() {
		out[name] = protocol.ToolName(t)
	}
	return out
}

// Registry is the registry the metrics are in, for more collectors of
// the agent's own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus's text format (or what the
// scraper asks for). A manager's scrape first waits, briefly, for
// FollowLeague to have read every event published before it: what a
// scrape shows is the league as it was then.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		f := m.follow
		m.mu.Unlock()
		if f != nil {
			f.await(r.Context(), f.events.Last(), scrapeWait)
		}
		h.ServeHTTP(w, r)
	})
}

// scrapeWait bounds how long a scrape waits for the league's events to
// be read: a scrape is never held up by a manager that is busy.
const scrapeWait = time.Second

// Hooks are the hooks of the agent's Client that feed its call metrics.
// agentOf names the agent at an endpoint whose breaker changed, by its
// league id ("" when not known: no series); nil leaves breakers out (a
// manager's come from its events, FollowLeague).
func (m *Metrics) Hooks(agentOf func(endpoint string) string) transport.Hooks {
	h := transport.Hooks{Call: func(_, method string, d time.Duration, err error) { m.ObserveCall(method, d, err) }}
	if agentOf != nil {
		h.Breaker = func(endpoint string, open bool) {
			if id := agentOf(endpoint); id != "" {
				m.SetBreaker(id, open)
			}
		}
	}
	return h
}

// ObserveCall counts a call of method that took d, with its outcome err;
// its time goes in the histogram unless a breaker refused it.
func (m *Metrics) ObserveCall(method string, d time.Duration, err error) {
	s := m.methods[method]
	if s == nil {
		s = m.methods[OtherMethod]
	}
	s.once.Do(func() {
		s.duration = m.callDuration.WithLabelValues(s.name)
		for i, o := range outcomes {
			s.outcomes[i] = m.calls.WithLabelValues(s.name, o)
		}
	})
	i := outcomeIndex(err)
	s.outcomes[i].Inc()
	if outcomes[i] != OutcomeBreakerOpen {
		s.duration.Observe(d.Seconds())
	}
}

// SetBreaker sets whether the breaker to the agent of league id agent is
// open. agent must be an id the league gave, never an endpoint.
func (m *Metrics) SetBreaker(agent string, open bool) {
	v := 0.0
	if open {
		v = 1
	}
	m.breakerOpen.WithLabelValues(agent).Set(v)
}
