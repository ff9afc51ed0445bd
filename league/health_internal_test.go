package league

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// withAgents is a manager with agents registered as register leaves them:
// a referee REF01 and players P1…Pn (ids without padding, so that their
// order is by number, not by text), each at mem://<id>.
func withAgents(n int) *Manager {
	m := New(Options{LeagueID: "league_test"}, nil, nil)
	add := func(role protocol.Role, id string) {
		a := &agent{id: id, name: "Agent " + id, endpoint: "mem://" + id, role: role, registeredAt: m.clock()}
		m.agents[id] = a
		m.endpoints[seat{role, a.endpoint}] = id
		if role == protocol.RoleReferee {
			m.referees = append(m.referees, a)
		} else {
			m.players = append(m.players, a)
			m.table.add(id, a.name)
		}
	}
	for i := n; i >= 1; i-- { // registered out of order
		add(protocol.RolePlayer, fmt.Sprintf("P%d", i))
	}
	add(protocol.RoleReferee, "REF01")
	return m
}

// TestObserveCallCostsNoAllocation: a call observed, and a message seen,
// allocate nothing once the agent's stats exist: a league's every call
// goes through them.
func TestObserveCallCostsNoAllocation(t *testing.T) {
	is := is.New(t)
	m := withAgents(3)
	m.ObserveCall("mem://P2", protocol.MethodHandleGameInvitation, time.Millisecond, nil)
	timeout := &transport.Error{Kind: transport.KindTimeout}
	allocs := testing.AllocsPerRun(1000, func() {
		m.ObserveCall("mem://P2", protocol.MethodNotifyRound, time.Millisecond, timeout)
		m.ObserveCall("mem://REF01", string(protocol.TypeStartMatch), time.Millisecond, nil)
		m.seen(m.agents["P2"])
	})
	is.Equal(allocs, 0.0) // allocations a call
}

// TestHealth: agents in order (referees, then players by id), each with
// its calls, failures and the latencies of its latest calls only; a
// breaker's change is told once, by id, and one of an endpoint no agent
// holds not at all; a call to such an endpoint counts for nobody, nor
// one the manager gave up itself.
func TestHealth(t *testing.T) {
	is := is.New(t)
	m := withAgents(10)
	for i := 1; i <= 100; i++ { // the ring keeps the latest 64: 37…100 ms
		m.ObserveCall("mem://P2", protocol.MethodChooseParity, time.Duration(i)*time.Millisecond, nil)
	}
	m.ObserveCall("mem://P2", protocol.MethodChooseParity, 0, &transport.Error{Kind: transport.KindOpen}) // no time
	m.ObserveCall("mem://REF01", protocol.MethodStartMatch, 5*time.Millisecond, nil)
	m.ObserveCall("mem://REF01", protocol.MethodStartMatch, 9*time.Millisecond, // given up by the manager: not the referee's
		&transport.Error{Kind: transport.KindTimeout, Err: context.Canceled})
	m.ObserveCall("mem://stranger", protocol.MethodPing, time.Millisecond, nil)
	m.BreakerChanged("mem://P2", true)
	m.BreakerChanged("mem://P2", true) // told already
	m.BreakerChanged("mem://stranger", true)

	h := m.Health()
	var ids []string
	for _, a := range h {
		ids = append(ids, a.AgentID)
	}
	is.Equal(ids, []string{"REF01", "P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P10"}) // referees, then players by id
	p2 := h[2]
	is.Equal(p2.Calls, uint64(101))
	is.Equal(p2.Failures, uint64(1))
	is.Equal(p2.Samples, LatencySamples)
	is.Equal(p2.LatencyP50, 68*time.Millisecond) // the 32nd of 37…100
	is.Equal(p2.LatencyP95, 97*time.Millisecond) // the 61st
	is.True(p2.BreakerOpen)
	is.Equal(p2.Endpoint, "mem://P2")
	is.Equal(h[0].Calls, uint64(1)) // START_MATCH, by its other name, and not the one given up
	is.Equal(h[0].Failures, uint64(0))
	is.Equal(h[0].LatencyP95, 5*time.Millisecond)
	is.Equal(h[1].Samples, 0) // never called
	is.Equal(h[1].LatencyP50, time.Duration(0))
	is.Equal(h[1].LastSeen, m.agents["P1"].registeredAt) // registered, not heard from since

	missed, _, _, cancel := m.events.Subscribe(0)
	cancel()
	is.Equal(len(missed), 1)
	is.Equal(missed[0].Type, EventBreakerOpened)
	is.Equal(missed[0].Data, BreakerEvent{AgentID: "P2", Role: protocol.RolePlayer})
	m.BreakerChanged("mem://P2", false)
	is.Equal(m.events.Last(), uint64(2)) // closed: told
	is.True(!m.Health()[2].BreakerOpen)
}

// TestHealthTechnicalLosses: a player's latest technical loss, from the
// events, with the standings' count; events read before are not read
// again, and a subscription dropped as too far behind is made again from
// where it was.
func TestHealthTechnicalLosses(t *testing.T) {
	is := is.New(t)
	m := withAgents(2)
	m.events.Publish(EventTechnicalLoss, TechnicalLossEvent{MatchID: "R1M1", PlayerID: "P1", Code: protocol.ErrTimeout, Reason: "no answer"})
	m.mu.Lock()
	m.table.rows["P1"].tl = 1
	m.mu.Unlock()
	h := m.Health()
	is.Equal(h[1].TechnicalLosses, 1)
	is.Equal(h[1].LastLossCode, protocol.ErrTimeout)
	is.Equal(h[1].LastLossMatch, "R1M1")
	is.Equal(h[2].LastLossCode, protocol.Code("")) // P2: none

	for i := range 3000 { // more than a subscription holds: dropped, and made again
		m.events.Publish(EventMatchFinished, MatchFinishedEvent{MatchID: fmt.Sprint("M", i)})
	}
	m.events.Publish(EventTechnicalLoss, TechnicalLossEvent{MatchID: "R3M1", PlayerID: "P2", Code: protocol.ErrInvalidMove, Reason: "odd is not a parity"})
	h = m.Health()
	is.Equal(h[2].LastLossCode, protocol.ErrInvalidMove)
	is.Equal(h[2].LastLossReason, "odd is not a parity")
	is.Equal(h[1].LastLossMatch, "R1M1") // kept
}

// BenchmarkObserveCall is what the manager's health costs each call it
// makes, from many goroutines at once as in a round, at 1000 players.
func BenchmarkObserveCall(b *testing.B) {
	m := withAgents(1000)
	endpoints := make([]string, 1000)
	for i := range endpoints {
		endpoints[i] = fmt.Sprintf("mem://P%d", i+1)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			m.ObserveCall(endpoints[i%len(endpoints)], protocol.MethodNotifyRound, time.Millisecond, nil)
		}
	})
}
