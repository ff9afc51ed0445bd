package league

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// AgentHealth is how a registered agent is doing, as the manager sees it:
// what a dashboard shows to make a dead or slow agent visible at a glance.
// What the agent chose (name, endpoint, a referee's reason) is text.
type AgentHealth struct {
	AgentID     string        `json:"agent_id"`
	Role        protocol.Role `json:"role"`
	DisplayName string        `json:"display_name"`
	Endpoint    string        `json:"endpoint"`
	// LastSeen is when the agent last sent a message carrying its token,
	// or registered, whichever is later.
	LastSeen time.Time `json:"last_seen"`
	// Calls and Failures count the manager's calls to the agent since the
	// manager started, and those that failed (no answer, an error answer,
	// or refused by the agent's open breaker).
	Calls    uint64 `json:"calls"`
	Failures uint64 `json:"failures"`
	// LatencyP50 and LatencyP95 are of the manager's latest calls to the
	// agent (up to LatencySamples of them; Samples says how many): recent,
	// not since the start. Zero without any.
	LatencyP50 time.Duration `json:"latency_p50_ns"`
	LatencyP95 time.Duration `json:"latency_p95_ns"`
	Samples    int           `json:"latency_samples"`
	// BreakerOpen says the manager's calls to the agent fail at once.
	BreakerOpen bool `json:"breaker_open"`
	// TechnicalLosses is a player's count; the last one's code, reason and
	// match are those of the latest its manager's events still told when
	// Health was called (empty when none is known).
	TechnicalLosses int           `json:"technical_losses"`
	LastLossCode    protocol.Code `json:"last_loss_code,omitzero"`
	LastLossReason  string        `json:"last_loss_reason,omitzero"`
	LastLossMatch   string        `json:"last_loss_match_id,omitzero"`
}

// LatencySamples is how many of the latest calls to an agent its
// latencies are of: a fixed ring an agent, so that a league of a thousand
// players keeps the same few hundred kilobytes however long it runs.
const LatencySamples = 64

// healthBook is what the manager learns of its agents beside the league: when
// each was last heard from, how its calls go, its breaker, its latest
// technical loss. Its zero value is ready. Its locks are never held while
// m.mu is taken, nor taken under m.mu.
type healthBook struct {
	mu     sync.RWMutex
	byID   map[string]*agentStats
	bySeat map[seat]*agentStats // cache of m.endpoints, for calls

	// The technical losses' codes and reasons are only in the events: the
	// manager keeps no more than their count. Health reads the events
	// published since it last looked, through a subscription of its own
	// that nothing else reads (dropped when too far behind, and made
	// again from where it was).
	evMu   sync.Mutex
	cursor uint64 // the last event read
	sub    <-chan Event
	losses map[string]lastLoss // player id → latest technical loss
}

// lastLoss is a player's latest technical loss.
type lastLoss struct {
	code          protocol.Code
	reason, match string
}

// agentStats are one agent's, updated without any lock but its ring's.
type agentStats struct {
	seen            atomic.Int64 // Unix nanoseconds; 0: not since registering
	calls, failures atomic.Uint64
	breakerOpen     atomic.Bool

	ringMu sync.Mutex
	ring   [LatencySamples]time.Duration
	n      uint64 // samples written; the next goes at n % LatencySamples
}

// stats are id's, made on first use.
func (h *healthBook) stats(id string) *agentStats {
	h.mu.RLock()
	s := h.byID[id]
	h.mu.RUnlock()
	if s != nil {
		return s
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s = h.byID[id]; s == nil {
		if h.byID == nil {
			h.byID = map[string]*agentStats{}
		}
		s = &agentStats{}
		h.byID[id] = s
	}
	return s
}

// seen records that a sent an authenticated message now.
func (m *Manager) seen(a *agent) {
	m.healthBook.stats(a.id).seen.Store(m.clock().UnixNano())
}

// statsAt are the stats of the agent of role at endpoint, nil when none is
// registered there.
func (m *Manager) statsAt(role protocol.Role, endpoint string) *agentStats {
	h := &m.healthBook
	at := seat{role, endpoint}
	h.mu.RLock()
	s := h.bySeat[at]
	h.mu.RUnlock()
	if s != nil {
		return s
	}
	m.mu.Lock()
	id, ok := m.endpoints[at]
	m.mu.Unlock()
	if !ok {
		return nil // not cached: an agent may register there later
	}
	s = h.stats(id)
	h.mu.Lock()
	if h.bySeat == nil {
		h.bySeat = map[seat]*agentStats{}
	}
	h.bySeat[at] = s // an agent keeps its seat for the league
	h.mu.Unlock()
	return s
}

// ObserveCall records a call the manager made to endpoint
// (transport.Hooks.Call): it counts for the agent registered there, the
// referee for a START_MATCH and otherwise the player, or the referee when
// no player is. Calls to an endpoint no agent holds are not kept, nor
// calls the manager gave up itself (context.Canceled: a START_MATCH whose
// result came before its acknowledgement), which say nothing of the agent
// and would show a healthy referee as failing.
func (m *Manager) ObserveCall(endpoint, method string, d time.Duration, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	var s *agentStats
	if t, _ := protocol.MethodType(method); t == protocol.TypeStartMatch {
		s = m.statsAt(protocol.RoleReferee, endpoint)
	} else if s = m.statsAt(protocol.RolePlayer, endpoint); s == nil {
		s = m.statsAt(protocol.RoleReferee, endpoint)
	}
	if s == nil {
		return
	}
	s.calls.Add(1)
	if err != nil {
		s.failures.Add(1)
	}
	if e, ok := errors.AsType[*transport.Error](err); ok && e.Kind == transport.KindOpen {
		return // refused at once: no time worth counting
	}
	s.ringMu.Lock()
	s.ring[s.n%LatencySamples] = d
	s.n++
	s.ringMu.Unlock()
}

// BreakerChanged records that the manager's breaker for endpoint opened or
// closed (transport.Hooks.Breaker), and tells the league's watchers
// (EventBreakerOpened, EventBreakerClosed) for each agent registered
// there. A breaker is the endpoint's: it speaks for whoever holds it. One
// of an endpoint no agent holds is not told: watchers see agents by id,
// never by an endpoint someone chose.
func (m *Manager) BreakerChanged(endpoint string, open bool) {
	typ := EventBreakerClosed
	if open {
		typ = EventBreakerOpened
	}
	for _, role := range [2]protocol.Role{protocol.RoleReferee, protocol.RolePlayer} {
		m.mu.Lock()
		id, ok := m.endpoints[seat{role, endpoint}]
		m.mu.Unlock()
		if !ok {
			continue
		}
		if m.healthBook.stats(id).breakerOpen.Swap(open) == open {
			continue // told already
		}
		m.events.Publish(typ, BreakerEvent{AgentID: id, Role: role})
	}
}

// readEvents reads the events published since the last call, keeping each
// player's latest technical loss.
func (m *Manager) readEvents() {
	h := &m.healthBook
	h.evMu.Lock()
	defer h.evMu.Unlock()
	for {
		if h.sub == nil {
			// A gap (events no longer kept) loses only the latest reasons
			// of its time: the counts are the standings'.
			missed, _, next, _ := m.events.Subscribe(h.cursor)
			for _, ev := range missed {
				h.read(ev)
			}
			h.sub = next
		}
		select {
		case ev, ok := <-h.sub:
			if !ok { // dropped, too far behind: subscribed again from cursor
				h.sub = nil
				continue
			}
			h.read(ev)
		default:
			return
		}
	}
}

// read takes ev into h. Under evMu.
func (h *healthBook) read(ev Event) {
	h.cursor = max(h.cursor, ev.Seq)
	tl, ok := ev.Data.(TechnicalLossEvent)
	if !ok {
		return
	}
	if h.losses == nil {
		h.losses = map[string]lastLoss{}
	}
	h.losses[tl.PlayerID] = lastLoss{code: tl.Code, reason: tl.Reason, match: tl.MatchID}
}

// Health is how every registered agent is doing: the referees, then the
// players, each in id order (P2 before P10).
func (m *Manager) Health() []AgentHealth {
	m.readEvents()
	m.mu.Lock()
	out := make([]AgentHealth, 0, len(m.referees)+len(m.players))
	for _, group := range [][]*agent{m.referees, m.players} {
		for _, a := range group {
			ah := AgentHealth{AgentID: a.id, Role: a.role, DisplayName: a.name, Endpoint: a.endpoint, LastSeen: a.registeredAt}
			if r := m.table.rows[a.id]; r != nil && a.role == protocol.RolePlayer {
				ah.TechnicalLosses = r.tl
			}
			out = append(out, ah)
		}
	}
	m.mu.Unlock()
	byID := func(x, y AgentHealth) int {
		return cmp.Or(cmp.Compare(len(x.AgentID), len(y.AgentID)), cmp.Compare(x.AgentID, y.AgentID))
	}
	nRefs := 0
	for nRefs < len(out) && out[nRefs].Role == protocol.RoleReferee {
		nRefs++
	}
	slices.SortFunc(out[:nRefs], byID)
	slices.SortFunc(out[nRefs:], byID)

	h := &m.healthBook
	h.evMu.Lock()
	for i := range out {
		if l, ok := h.losses[out[i].AgentID]; ok && out[i].Role == protocol.RolePlayer {
			out[i].LastLossCode, out[i].LastLossReason, out[i].LastLossMatch = l.code, l.reason, l.match
		}
	}
	h.evMu.Unlock()
	var lat [LatencySamples]time.Duration
	for i := range out {
		s := h.stats(out[i].AgentID)
		if seen := s.seen.Load(); seen != 0 {
			if t := time.Unix(0, seen).UTC(); t.After(out[i].LastSeen) {
				out[i].LastSeen = t
			}
		}
		out[i].Calls, out[i].Failures, out[i].BreakerOpen = s.calls.Load(), s.failures.Load(), s.breakerOpen.Load()
		s.ringMu.Lock()
		n := int(min(s.n, LatencySamples))
		copy(lat[:], s.ring[:n])
		s.ringMu.Unlock()
		if n > 0 {
			slices.Sort(lat[:n])
			out[i].Samples, out[i].LatencyP50, out[i].LatencyP95 = n, quantile(lat[:n], 0.50), quantile(lat[:n], 0.95)
		}
	}
	return out
}

// quantile is the q-quantile of sorted, the nearest rank's.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
