package league

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
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

// ScheduleData is the data of GET_SCHEDULE: the rounds asked for, and,
// when there are more, the round to ask for next (query_params.round_id).
type ScheduleData struct {
	Rounds      []ScheduledRound `json:"rounds"`
	NextRoundID int              `json:"next_round_id,omitzero"`
	// State is the league's state when it has no schedule yet
	// (REGISTRATION or STARTING), so that an empty answer says why.
	State string `json:"state,omitzero"`
}

// MaxScheduleMatches bounds the matches of a GET_SCHEDULE answer of the
// whole schedule: it holds the first rounds whose matches fit (at least
// one round), and NextRoundID. At 1000 players the whole schedule is
// 499,500 matches, 48 MB of JSON, beyond what clients read (ours, 8 MiB);
// this is about 1 MB.
const MaxScheduleMatches = 10000

// MaxScheduleAnswers bounds the GET_SCHEDULE answers built at once, each
// up to MaxScheduleMatches matches (a few MB while it is built): a client
// that asks again and again, or many at once, cannot take the manager's
// memory. An answer over the bound waits for its turn, up to
// scheduleAnswerWait, then is refused with E016, which is retryable.
const MaxScheduleAnswers = 4

// scheduleAnswerWait is how long a GET_SCHEDULE waits for its turn.
const scheduleAnswerWait = 5 * time.Second

// answerSlots are the turns of MaxScheduleAnswers; the zero value is
// ready.
type answerSlots struct {
	once  sync.Once
	slots chan struct{}
	// building is how many answers are being built, and peak the most
	// there ever were at once.
	building, peak atomic.Int64
}

// acquire waits for a turn, until ctx ends or wait passes: E016 then.
func (s *answerSlots) acquire(ctx context.Context, wait time.Duration) error {
	s.once.Do(func() { s.slots = make(chan struct{}, MaxScheduleAnswers) })
	select {
	case s.slots <- struct{}{}:
	default:
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case s.slots <- struct{}{}:
		case <-t.C:
			return busy()
		case <-ctx.Done():
			return busy()
		}
	}
	n := s.building.Add(1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			return nil
		}
	}
}

// busy is the refusal of a schedule answer that got no turn.
func busy() error {
	return protocol.Errorf(protocol.ErrServiceUnavailable, "the manager is building %d schedule answers already: ask again", MaxScheduleAnswers)
}

func (s *answerSlots) release() {
	s.building.Add(-1)
	<-s.slots
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
	resp, err := m.Answer(ctx, r.Msg.(*protocol.LeagueQuery), a.id, a.role)
	if err != nil {
		return nil, err
	}
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
	return m.Answer(ctx, q, "", "")
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
// player_id means itself. Its error is a GET_SCHEDULE that waited for
// its turn in vain (E016, see MaxScheduleAnswers); an answer that says
// the query failed is not an error.
func (m *Manager) Answer(ctx context.Context, q *protocol.LeagueQuery, id string, role protocol.Role) (*protocol.LeagueQueryResponse, error) {
	resp := &protocol.LeagueQueryResponse{
		Envelope:  m.envelope(protocol.TypeLeagueQueryResponse, q.ConversationID, ""),
		QueryType: q.QueryType,
		Success:   true,
	}
	fail := func(code protocol.Code, format string, args ...any) *protocol.LeagueQueryResponse {
		resp.Success, resp.Error = false, &QueryError{ErrorCode: code, Message: fmt.Sprintf(format, args...)}
		return resp
	}
	var params protocol.QueryParams
	if q.QueryParams != nil {
		params = *q.QueryParams
	}
	if q.QueryType == protocol.QuerySchedule {
		// The whole schedule whoever asks, as the spec has it, unless a
		// player is named.
		if err := m.scheduleAnswers.acquire(ctx, scheduleAnswerWait); err != nil {
			return nil, err
		}
		defer m.scheduleAnswers.release()
		d, qerr := m.schedule(params.RoundID, params.PlayerID)
		if qerr != nil {
			return fail(qerr.ErrorCode, "%s", qerr.Message), nil
		}
		resp.Data = d
		return resp, nil
	}
	player := params.PlayerID
	if player == "" && role == protocol.RolePlayer {
		player = id
	}
	// The ratings are computed outside the lock (see ratingInput).
	switch q.QueryType {
	case protocol.QueryStandings:
		// round_id is the round under way (its results so far counted);
		// rounds_completed the last whose end was announced.
		in, rated := m.rated()
		resp.Data = map[string]any{"round_id": in.round, "rounds_completed": in.closed, "standings": rated}
		return resp, nil
	case QueryCrosstable:
		d, qerr := m.crosstableAnswer(params.PlayerID) // a player asking means the whole table
		if qerr != nil {
			return fail(qerr.ErrorCode, "%s", qerr.Message), nil
		}
		resp.Data = d
		return resp, nil
	}
	var rated []Standing
	if q.QueryType == protocol.QueryPlayerStats {
		rated, _ = m.Report()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch q.QueryType {
	case protocol.QueryNextMatch, protocol.QueryPlayerStats:
		if player == "" {
			return fail(protocol.ErrInvalidMessageFormat, "query_params.player_id is required"), nil
		}
		if qerr := m.noPlayerLocked(player); qerr != nil {
			return fail(qerr.ErrorCode, "%s", qerr.Message), nil
		}
		if q.QueryType == protocol.QueryNextMatch {
			// state says why there is none: no schedule yet, or none left.
			resp.Data = map[string]any{"next_match": m.nextMatchLocked(player), "state": m.state}
			break
		}
		var row *Standing
		for _, r := range rated {
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
	return resp, nil
}

// noPlayerLocked is the error of a query about player when no player of
// that id is registered; nil otherwise.
func (m *Manager) noPlayerLocked(player string) *QueryError {
	if a := m.agents[player]; a == nil || a.role != protocol.RolePlayer {
		return &QueryError{ErrorCode: protocol.ErrAgentNotRegistered,
			Message: fmt.Sprintf("no player %q in league %s", protocol.Clip(player), m.opts.LeagueID)}
	}
	return nil
}

// schedule is GET_SCHEDULE's data: round (0: the whole schedule, as many
// of its rounds as MaxScheduleMatches lets one answer hold), with only
// the matches of player if one is named, as they stand. Its rounds are
// read one at a time under the manager's lock, not all at once: at 1000
// players the schedule is 499,500 matches, and reading it under one lock
// held every report and request of the league for 50–100 ms a query.
func (m *Manager) schedule(round int, player string) (*ScheduleData, *QueryError) {
	m.mu.Lock()
	total := len(m.rounds) // it only grows once the league runs (a swiss league's, round by round)
	state := m.state
	var qerr *QueryError
	if player != "" {
		qerr = m.noPlayerLocked(player)
	}
	m.mu.Unlock()
	switch {
	case qerr != nil:
		return nil, qerr
	case round < 0 || round > total:
		msg := fmt.Sprintf("query_params.round_id must be from 1 to %d (the league's rounds), got %d", total, round)
		if total == 0 {
			msg = fmt.Sprintf("query_params.round_id %d: the league has not started, and has no schedule yet", round)
		}
		return nil, &QueryError{ErrorCode: protocol.ErrInvalidMessageFormat, Message: msg}
	}
	first, last := 1, total
	if round > 0 {
		first, last = round, round
	}
	d := &ScheduleData{Rounds: []ScheduledRound{}} // [] before the start
	if total == 0 {
		d.State = state
	}
	held := 0
	for r := first; r <= last; r++ {
		m.mu.Lock()
		ms := m.rounds[r-1]
		n := len(ms)
		if player != "" {
			n = 0
			for _, mt := range ms {
				if mt.A == player || mt.B == player {
					n++
				}
			}
		}
		if len(d.Rounds) > 0 && held+n > MaxScheduleMatches {
			m.mu.Unlock()
			d.NextRoundID = r
			return d, nil
		}
		sr := ScheduledRound{RoundID: r, Matches: make([]ScheduledMatch, 0, n)}
		for _, mt := range ms {
			if player == "" || mt.A == player || mt.B == player {
				sr.Matches = append(sr.Matches, mt.scheduled())
			}
		}
		m.mu.Unlock()
		d.Rounds = append(d.Rounds, sr)
		held += n
	}
	if last < total {
		d.NextRoundID = last + 1
	}
	return d, nil
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
	// Standings are the final standings with ratings, and Crosstable the
	// league's (absent above MaxCrosstablePlayers), once it is complete:
	// leaguectl's own output, beside the spec's message.
	Standings  []Standing `json:"standings,omitzero"`
	Crosstable Crosstable `json:"crosstable,omitzero"`
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
	if res.Completed != nil {
		res.Standings, res.Crosstable = m.Report()
	}
	if res.Completed != nil && m.checkAdmin(r) == nil {
		seed := m.opts.Seed
		res.Seed = &seed
	}
	return res, nil
}
