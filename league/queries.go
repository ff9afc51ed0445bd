package league

import (
	"context"
	"fmt"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// MethodAdminQuery is this implementation's operator tool: a LEAGUE_QUERY
// (query_type, query_params) answered for whoever passes the admin check,
// so that `leaguectl query --admin-token` needs no agent identity.
const MethodAdminQuery = "admin_query"

// ScheduledMatch is one match in GET_SCHEDULE and GET_PLAYER_STATS.
type ScheduledMatch struct {
	MatchID   string `json:"match_id"`
	RoundID   int    `json:"round_id"`
	PlayerAID string `json:"player_A_id"`
	PlayerBID string `json:"player_B_id"`
	RefereeID string `json:"referee_id,omitzero"`
	Status    string `json:"status"`
	Winner    string `json:"winner,omitzero"`
	Result    string `json:"result,omitzero"` // "WIN-LOSS" as statuses of A and B
}

// ScheduledRound is one round of GET_SCHEDULE.
type ScheduledRound struct {
	RoundID int              `json:"round_id"`
	Matches []ScheduledMatch `json:"matches"`
}

// NextMatch is the answer of GET_NEXT_MATCH.
type NextMatch struct {
	MatchID         string `json:"match_id"`
	RoundID         int    `json:"round_id"`
	OpponentID      string `json:"opponent_id"`
	Role            string `json:"role_in_match"`
	RefereeEndpoint string `json:"referee_endpoint,omitzero"`
}

// QueryError is the error of an unsuccessful LEAGUE_QUERY_RESPONSE.
type QueryError struct {
	ErrorCode protocol.Code `json:"error_code"`
	Message   string        `json:"message"`
}

func (m *Manager) onQuery(ctx context.Context, r *transport.Request) (any, error) {
	a, err := m.authenticate(r.Env, protocol.RolePlayer, protocol.RoleReferee)
	if err != nil {
		return nil, err
	}
	if err := m.ofThisLeague(*r.Env); err != nil {
		return nil, err
	}
	resp := m.Answer(r.Msg.(*protocol.LeagueQuery), a.id, a.role)
	// A message from the manager to an agent carries the agent's own token
	// (DESIGN §4), replies included.
	resp.AuthToken = m.tokenFor(a)
	return resp, nil
}

func (m *Manager) onAdminQuery(ctx context.Context, r *transport.Request) (any, error) {
	if err := m.checkAdmin(r); err != nil {
		return nil, err
	}
	q := new(protocol.LeagueQuery)
	if err := protocol.DecodeInto(r.Params, q); err != nil {
		return nil, err
	}
	if err := protocol.ValidateBody(q); err != nil {
		return nil, err
	}
	if err := m.ofThisLeague(q.Envelope); err != nil {
		return nil, err // the operator asked of another league: E008, as an agent would be
	}
	return m.Answer(q, "", ""), nil
}

// onGetStandings is api-reference §3.4's debug tool: for a registered agent
// with its token, or for the operator.
func (m *Manager) onGetStandings(ctx context.Context, r *transport.Request) (any, error) {
	if _, err := m.authenticate(r.Env, protocol.RolePlayer, protocol.RoleReferee); err != nil {
		if aerr := m.checkAdmin(r); aerr != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return map[string]any{"league_id": m.opts.LeagueID, "round_id": m.round, "standings": m.table.ranked()}, nil
}

// Answer answers a query asked by agent id of role (both "" for the
// operator). A player asking about "next match" or "stats" without a
// player_id means itself.
func (m *Manager) Answer(q *protocol.LeagueQuery, id string, role protocol.Role) *protocol.LeagueQueryResponse {
	resp := &protocol.LeagueQueryResponse{
		Envelope:  m.envelope(protocol.TypeLeagueQueryResponse, q.ConversationID, ""),
		QueryType: q.QueryType,
		Success:   true,
	}
	fail := func(code protocol.Code, format string, args ...any) *protocol.LeagueQueryResponse {
		resp.Success, resp.Error = false, &QueryError{ErrorCode: code, Message: fmt.Sprintf(format, args...)}
		return resp
	}
	player := ""
	if q.QueryParams != nil {
		player = q.QueryParams.PlayerID
	}
	if player == "" && role == protocol.RolePlayer {
		player = id
	}
	if q.QueryType == protocol.QuerySchedule {
		resp.Data = map[string]any{"rounds": m.schedule()}
		return resp
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch q.QueryType {
	case protocol.QueryStandings:
		// round_id is the round under way (its results so far counted);
		// rounds_completed the last whose end was announced.
		resp.Data = map[string]any{"round_id": m.round, "rounds_completed": m.closedRound, "standings": m.table.ranked()}
	case protocol.QueryNextMatch, protocol.QueryPlayerStats:
		if player == "" {
			return fail(protocol.ErrInvalidMessageFormat, "query_params.player_id is required")
		}
		if a := m.agents[player]; a == nil || a.role != protocol.RolePlayer {
			return fail(protocol.ErrAgentNotRegistered, "no player %q in league %s", protocol.Clip(player), m.opts.LeagueID)
		}
		if q.QueryType == protocol.QueryNextMatch {
			// state says why there is none: no schedule yet, or none left.
			resp.Data = map[string]any{"next_match": m.nextMatchLocked(player), "state": m.state}
			break
		}
		var row *protocol.StandingRow
		for _, r := range m.table.ranked() {
			if r.PlayerID == player {
				row = &r
				break
			}
		}
		var played []ScheduledMatch
		for _, ms := range m.rounds {
			for _, mt := range ms {
				if mt.A == player || mt.B == player {
					played = append(played, mt.scheduled())
				}
			}
		}
		resp.Data = map[string]any{"player": row, "matches": played}
	}
	return resp
}

// schedule is every round's matches as they stand, read a round at a time
// under the manager's lock, not all at once: at 1000 players the schedule
// is 499,500 matches, and reading it under one lock held every report and
// request of the league for 50–100 ms a query (a registered agent could
// ask for it again and again).
func (m *Manager) schedule() []ScheduledRound {
	rounds := []ScheduledRound{} // [] before the start, as before
	for i := 0; ; i++ {
		m.mu.Lock()
		if i >= len(m.rounds) {
			m.mu.Unlock()
			return rounds
		}
		ms := m.rounds[i]
		r := ScheduledRound{RoundID: i + 1, Matches: make([]ScheduledMatch, len(ms))}
		for j := range ms {
			r.Matches[j] = ms[j].scheduled()
		}
		m.mu.Unlock()
		rounds = append(rounds, r)
	}
}

func (m *Manager) nextMatchLocked(player string) *NextMatch {
	for _, ms := range m.rounds {
		for i, mt := range ms {
			if mt.result.known() || (mt.A != player && mt.B != player) {
				continue
			}
			nm := &NextMatch{MatchID: mt.MatchID, RoundID: mt.Round, OpponentID: mt.B, Role: protocol.PlayerA}
			if mt.B == player {
				nm.OpponentID, nm.Role = mt.A, protocol.PlayerB
			}
			// The referee it was handed to, or before that the one its
			// round's announcement names.
			if ref := m.agents[mt.referee]; ref != nil {
				nm.RefereeEndpoint = ref.endpoint
			} else {
				nm.RefereeEndpoint = plannedReferee(m.seatsLocked(), i)
			}
			return nm
		}
	}
	return nil
}

func (mt *match) scheduled() ScheduledMatch {
	s := ScheduledMatch{MatchID: mt.MatchID, RoundID: mt.Round, PlayerAID: mt.A, PlayerBID: mt.B,
		RefereeID: mt.referee, Status: mt.state}
	if mt.result.known() {
		s.Winner = mt.result.Winner
		s.Result = mt.result.StatusA + "-" + mt.result.StatusB
	}
	return s
}

// MethodGetLeagueResult is this implementation's tool for `leaguectl start
// --wait`: the LEAGUE_COMPLETED message once the league is over, waiting
// up to params.wait_seconds (at most MaxResultWait) for it, so that a
// client waits on the manager instead of polling it.
const MethodGetLeagueResult = "get_league_result"

// MaxResultWait bounds how long one get_league_result call waits.
const MaxResultWait = 50 * time.Second

// Result is the answer of get_league_result. Completed is set once the
// league is complete; Seed only for the operator, since a player who knew
// it could foresee every drawn number.
type Result struct {
	State     string                    `json:"state"`
	Completed *protocol.LeagueCompleted `json:"league_completed,omitzero"`
	Seed      *uint64                   `json:"seed,omitzero"`
}

func (m *Manager) onGetLeagueResult(ctx context.Context, r *transport.Request) (any, error) {
	var p struct {
		WaitSeconds int `json:"wait_seconds"`
	}
	if r.Params.Kind() == '{' {
		if err := protocol.DecodeInto(r.Params, &p); err != nil {
			return nil, err
		}
	}
	if wait := min(time.Duration(max(p.WaitSeconds, 0))*time.Second, MaxResultWait); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-m.finished:
		case <-t.C:
		case <-ctx.Done():
		case <-m.stopping:
			if m.Result() == nil {
				return nil, protocol.Errorf(protocol.ErrServiceUnavailable, "the manager is stopping")
			}
		}
	}
	res := Result{State: m.Status().State, Completed: m.Result()}
	if res.Completed != nil && m.checkAdmin(r) == nil {
		seed := m.opts.Seed
		res.Seed = &seed
	}
	return res, nil
}
