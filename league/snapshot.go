package league

import (
	"time"

	"github.com/leaguectl/leaguectl/protocol"
)

// Snapshot is a league as it stands: what a watcher that missed events no
// longer kept is sent in their place (EventSnapshot), and what a
// dashboard starts from.
type Snapshot struct {
	LeagueID     string                 `json:"league_id"`
	State        string                 `json:"state"`
	Round        int                    `json:"round_id"`
	Rounds       int                    `json:"rounds"`
	MatchesDone  int                    `json:"matches_done"`
	MatchesTotal int                    `json:"matches_total"`
	StartedAt    time.Time              `json:"started_at,omitzero"`
	Standings    []protocol.StandingRow `json:"standings"`
	InFlight     []InFlight             `json:"in_flight"`
	Agents       []AgentInfo            `json:"agents"`
	// Seed is told once the league is over (LeagueCompletedEvent).
	Seed *uint64 `json:"seed,omitzero"`
}

// InFlight is a match handed to a referee whose result is not counted.
type InFlight struct {
	MatchID   string    `json:"match_id"`
	RoundID   int       `json:"round_id"`
	PlayerA   string    `json:"player_a_id"`
	PlayerB   string    `json:"player_b_id"`
	RefereeID string    `json:"referee_id"`
	Since     time.Time `json:"since"`
}

// AgentInfo is a registered agent.
type AgentInfo struct {
	ID           string        `json:"agent_id"`
	Role         protocol.Role `json:"role"`
	DisplayName  string        `json:"display_name"`
	Endpoint     string        `json:"endpoint"`
	RegisteredAt time.Time     `json:"registered_at"`
}

// Snapshot is the league as it stands, with the Seq of the last event it
// includes: a watcher given it goes on with the events after that one.
// Matches in flight are those of the round under way, the only ones a
// round-by-round league runs.
func (m *Manager) Snapshot() (Snapshot, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seq := m.events.Last()
	s := Snapshot{LeagueID: m.opts.LeagueID, State: m.state, Round: m.round, Rounds: m.plannedRounds,
		MatchesDone: m.counted, MatchesTotal: m.total, StartedAt: m.startedAt, Standings: m.table.ranked(),
		InFlight: []InFlight{}, Agents: make([]AgentInfo, 0, len(m.players)+len(m.referees))}
	if m.round > 0 && m.round <= len(m.rounds) {
		for _, mt := range m.rounds[m.round-1] {
			if mt.state == "RUNNING" {
				s.InFlight = append(s.InFlight, InFlight{MatchID: mt.MatchID, RoundID: mt.Round, PlayerA: mt.A, PlayerB: mt.B,
					RefereeID: mt.referee, Since: time.UnixMilli(int64(mt.ticketN)).UTC()})
			}
		}
	}
	for _, group := range [][]*agent{m.referees, m.players} {
		for _, a := range group {
			s.Agents = append(s.Agents, AgentInfo{ID: a.id, Role: a.role, DisplayName: a.name, Endpoint: a.endpoint,
				RegisteredAt: a.registeredAt})
		}
	}
	if m.state == StateCompleted {
		seed := m.opts.Seed
		s.Seed = &seed
	}
	return s, seq
}
