package protocol

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Spelling variants. The spec's documents and the other implementations do
// not agree on every field name, and keys are case-sensitive, so a field
// with two spellings has two struct fields: the spelling we send and the one
// we only accept. Accessor methods (PlayerA, Choices, …) return whichever
// came.

// RefereeMeta describes a referee at registration (spec §4.1.1). We send
// version, as the spec's referee example does, and protocol_version and
// agent_version beside it, as its player example does: a manager that
// checks the protocol version finds it either way.
type RefereeMeta struct {
	DisplayName          string   `json:"display_name"`
	Version              string   `json:"version"`
	ProtocolVersion      string   `json:"protocol_version,omitzero"`
	AgentVersion         string   `json:"agent_version,omitzero"`
	GameTypes            []string `json:"game_types"`
	ContactEndpoint      string   `json:"contact_endpoint"`
	MaxConcurrentMatches int      `json:"max_concurrent_matches"`
	// MatchTickets is this implementation's extension (absent when
	// false): the referee takes match tickets in START_MATCH
	// (StartMatch.PlayerATicket) and shows each player its own. Other
	// implementations send none, and are sent no ticket.
	MatchTickets bool `json:"match_tickets,omitzero"`
}

// RefereeRegisterRequest is REFEREE_REGISTER_REQUEST.
type RefereeRegisterRequest struct {
	Envelope
	RefereeMeta *RefereeMeta `json:"referee_meta"`
	// InstanceSecret is this implementation's extension (absent when
	// empty): a secret the agent drew when it started, which lets it
	// register again after a restart of its own (InstanceProof). Other
	// implementations ignore it.
	InstanceSecret string `json:"instance_secret,omitzero"`
}

// Type implements Message.
func (*RefereeRegisterRequest) Type() MessageType { return TypeRefereeRegisterRequest }

func (m *RefereeRegisterRequest) check(v *validator) {
	r := m.RefereeMeta
	if r == nil {
		v.missing("referee_meta")
		return
	}
	v.displayName("referee_meta.display_name", r.DisplayName)
	v.requireString("referee_meta.version", r.Version)
	v.gameTypes("referee_meta.game_types", r.GameTypes)
	v.endpoint("referee_meta.contact_endpoint", r.ContactEndpoint, true)
	if r.MaxConcurrentMatches < 1 {
		v.add(ErrInvalidMessageFormat, "referee_meta.max_concurrent_matches", "is required and must be at least 1")
	}
}

// PlayerMeta describes a player at registration (spec §4.2.1). Version may
// come as version, agent_version (protocol-v2.md) or not at all (dialect-b,
// which sends protocol_version only); we send protocol_version and
// agent_version, as protocol-v2.md's example does, and version too.
type PlayerMeta struct {
	DisplayName     string   `json:"display_name"`
	Version         string   `json:"version,omitzero"`
	AgentVersion    string   `json:"agent_version,omitzero"`
	ProtocolVersion string   `json:"protocol_version,omitzero"`
	GameTypes       []string `json:"game_types"`
	ContactEndpoint string   `json:"contact_endpoint"`
	// MatchTickets is this implementation's extension (absent when
	// false): the player answers the messages of its matches only with
	// a match ticket (Ticket), once its manager has said it issues them
	// (LeagueRegisterResponse.MatchTickets). A player that does not ask
	// is never sent one, nor anything else of the extension.
	MatchTickets bool `json:"match_tickets,omitzero"`
}

// LeagueRegisterRequest is LEAGUE_REGISTER_REQUEST.
type LeagueRegisterRequest struct {
	Envelope
	PlayerMeta *PlayerMeta `json:"player_meta"`
	// InstanceSecret: see RefereeRegisterRequest.
	InstanceSecret string `json:"instance_secret,omitzero"`
}

// Type implements Message.
func (*LeagueRegisterRequest) Type() MessageType { return TypeLeagueRegisterRequest }

func (m *LeagueRegisterRequest) check(v *validator) {
	p := m.PlayerMeta
	if p == nil {
		v.missing("player_meta")
		return
	}
	v.displayName("player_meta.display_name", p.DisplayName)
	v.gameTypes("player_meta.game_types", p.GameTypes)
	v.endpoint("player_meta.contact_endpoint", p.ContactEndpoint, true)
}

// RefereeRegisterResponse is REFEREE_REGISTER_RESPONSE. The issued token
// travels in the envelope's auth_token.
type RefereeRegisterResponse struct {
	Envelope
	Status    string  `json:"status"`
	RefereeID string  `json:"referee_id,omitzero"`
	Reason    *string `json:"reason"`
	// SignsMessages is this implementation's extension (absent when
	// false): the manager sends every later message with the agent's own
	// token, so that one without it is a stranger's. Other
	// implementations ignore it.
	SignsMessages bool `json:"signs_messages,omitzero"`
	// MatchTickets is this implementation's extension (absent when
	// false), in the answer to an agent that asked for match tickets:
	// the manager gives its referees a ticket for each player that asked
	// for them, with every START_MATCH, after a restart of its own too.
	MatchTickets bool `json:"match_tickets,omitzero"`
}

// Type implements Message.
func (*RefereeRegisterResponse) Type() MessageType { return TypeRefereeRegisterResponse }

func (m *RefereeRegisterResponse) check(v *validator) {
	v.registrationStatus(m.Status, "referee_id", m.RefereeID)
}

// LeagueRegisterResponse is LEAGUE_REGISTER_RESPONSE. The issued token
// travels in the envelope's auth_token.
type LeagueRegisterResponse struct {
	Envelope
	Status   string  `json:"status"`
	PlayerID string  `json:"player_id,omitzero"`
	Reason   *string `json:"reason"`
	// ErrorCode is this implementation's extension (absent when zero): the
	// code of a rejection that has one of its own, E005 for a registration
	// after the league started, so that the player is not told E003.
	ErrorCode Code `json:"error_code,omitzero"`
	// SignsMessages: see RefereeRegisterResponse.
	SignsMessages bool `json:"signs_messages,omitzero"`
	// MatchTickets: see RefereeRegisterResponse. A player told so
	// refuses a message of its matches without a valid ticket.
	MatchTickets bool `json:"match_tickets,omitzero"`
}

// Type implements Message.
func (*LeagueRegisterResponse) Type() MessageType { return TypeLeagueRegisterResponse }

func (m *LeagueRegisterResponse) check(v *validator) {
	v.registrationStatus(m.Status, "player_id", m.PlayerID)
}

// CheckRegistration reads a registration response: accepted with an id and
// a token, or the reason why not (REJECTED: code, or E003 when it has
// none; E002, an acceptance without an id or a token).
func CheckRegistration(status string, code Code, reason *string, id, token string) error {
	if status != StatusAccepted {
		why := "no reason given"
		if reason != nil {
			why = *reason
		}
		if code == "" {
			code = ErrAuthenticationFailed
		}
		return &Error{Code: code, Detail: "registration rejected: " + why}
	}
	if id == "" || token == "" {
		return &Error{Code: ErrInvalidMessageFormat, Detail: "registration accepted without an id or an auth_token"}
	}
	return nil
}

// MatchRef is one match of a ROUND_ANNOUNCEMENT.
type MatchRef struct {
	MatchID         string `json:"match_id"`
	GameType        string `json:"game_type"`
	PlayerAID       string `json:"player_A_id"`
	PlayerBID       string `json:"player_B_id"`
	RefereeEndpoint string `json:"referee_endpoint"`
	// RefereeID and TicketlessAssignment are this implementation's
	// extension, sent only to a player that asked for match tickets
	// (PlayerMeta.MatchTickets), signed with its token: the match has
	// been handed to referee RefereeID, in the assignment numbered
	// TicketlessAssignment, and that referee carries no tickets (one of
	// another implementation). The player then answers its messages for
	// the match without a ticket, until a ticket of a later assignment
	// comes (whatever referee their sender names: it proves nothing). Absent (0) in every other announcement. (Dialect-a sends
	// referee_id of its own accord, without ticketless_assignment: it
	// means nothing to a player then, and is not checked.)
	RefereeID            string `json:"referee_id,omitzero"`
	TicketlessAssignment uint64 `json:"ticketless_assignment,omitzero"`
}

// valid reports whether the checks of RoundAnnouncement.check all pass
// for r.
func (r *MatchRef) valid() bool {
	return validID(r.MatchID) && validID(r.PlayerAID) && validID(r.PlayerBID) &&
		(r.GameType == "" || r.GameType == GameEvenOdd) &&
		(r.RefereeEndpoint == "" || CheckEndpoint(r.RefereeEndpoint) == nil) &&
		(r.TicketlessAssignment == 0 || validID(r.RefereeID))
}

// RoundAnnouncement is ROUND_ANNOUNCEMENT.
type RoundAnnouncement struct {
	Envelope
	RoundID int        `json:"round_id"`
	Matches []MatchRef `json:"matches"`
}

// Type implements Message.
func (*RoundAnnouncement) Type() MessageType { return TypeRoundAnnouncement }

func (m *RoundAnnouncement) check(v *validator) {
	v.roundID("round_id", m.RoundID)
	if m.Matches == nil {
		v.missing("matches")
	}
	for i, mr := range m.Matches {
		if mr.valid() {
			continue // no field paths to build for a match that is fine
		}
		p := "matches[" + strconv.Itoa(i) + "]"
		v.requireID(p+".match_id", mr.MatchID)
		v.requireID(p+".player_A_id", mr.PlayerAID)
		v.requireID(p+".player_B_id", mr.PlayerBID)
		v.gameType(p+".game_type", mr.GameType)
		v.endpoint(p+".referee_endpoint", mr.RefereeEndpoint, false)
		if mr.TicketlessAssignment != 0 {
			v.requireID(p+".referee_id", mr.RefereeID) // whose messages go without a ticket
		}
	}
}

// Ticketless reports whether every match of the announcement is a
// manager's word that a referee carries no tickets
// (MatchRef.TicketlessAssignment): an amendment of the round's
// announcement, not another announcement.
func (m *RoundAnnouncement) Ticketless() bool {
	for i := range m.Matches {
		if m.Matches[i].TicketlessAssignment == 0 {
			return false
		}
	}
	return len(m.Matches) > 0
}

// RoundSummary is the statistics part of ROUND_COMPLETED.
type RoundSummary struct {
	TotalMatches    int `json:"total_matches"`
	Wins            int `json:"wins"`
	Draws           int `json:"draws"`
	TechnicalLosses int `json:"technical_losses"`
}

// RoundCompleted is ROUND_COMPLETED.
type RoundCompleted struct {
	Envelope
	RoundID          int           `json:"round_id"`
	MatchesCompleted int           `json:"matches_completed"`
	NextRoundID      *int          `json:"next_round_id"`
	Summary          *RoundSummary `json:"summary,omitzero"`
}

// Type implements Message.
func (*RoundCompleted) Type() MessageType { return TypeRoundCompleted }

func (m *RoundCompleted) check(v *validator) {
	v.roundID("round_id", m.RoundID)
	v.nonNegative("matches_completed", m.MatchesCompleted)
	if m.NextRoundID != nil && *m.NextRoundID <= m.RoundID {
		v.add(ErrInvalidMessageFormat, "next_round_id", "must be null or greater than round_id")
	}
}

// Champion is the winner of the league in LEAGUE_COMPLETED.
type Champion struct {
	PlayerID    string `json:"player_id"`
	DisplayName string `json:"display_name"`
	Points      int    `json:"points"`
}

// StandingRow is one row of a standings table. Dialect-a names played
// matches_played; both are accepted, played is sent.
type StandingRow struct {
	Rank            int    `json:"rank,omitzero"`
	PlayerID        string `json:"player_id"`
	DisplayName     string `json:"display_name,omitzero"`
	Played          int    `json:"played"`
	MatchesPlayed   int    `json:"matches_played,omitzero"`
	Wins            int    `json:"wins"`
	Draws           int    `json:"draws"`
	Losses          int    `json:"losses"`
	TechnicalLosses int    `json:"technical_losses"`
	Points          int    `json:"points"`
}

// valid reports whether the checks of a table of standings all pass for r.
func (r *StandingRow) valid() bool {
	return validID(r.PlayerID) && !r.negative()
}

func (r *StandingRow) negative() bool {
	return r.Rank < 0 || r.Wins < 0 || r.Draws < 0 || r.Losses < 0 || r.Played < 0 || r.TechnicalLosses < 0
}

// Games is the number of matches played whichever spelling carried it.
func (r *StandingRow) Games() int {
	if r.Played == 0 {
		return r.MatchesPlayed
	}
	return r.Played
}

// LeagueCompleted is LEAGUE_COMPLETED.
type LeagueCompleted struct {
	Envelope
	TotalRounds    int           `json:"total_rounds"`
	TotalMatches   int           `json:"total_matches"`
	Champion       *Champion     `json:"champion"`
	FinalStandings []StandingRow `json:"final_standings"`
}

// Type implements Message.
func (*LeagueCompleted) Type() MessageType { return TypeLeagueCompleted }

func (m *LeagueCompleted) check(v *validator) {
	v.nonNegative("total_rounds", m.TotalRounds)
	v.nonNegative("total_matches", m.TotalMatches)
	if m.Champion == nil {
		v.missing("champion")
	} else {
		v.requireID("champion.player_id", m.Champion.PlayerID)
	}
	if m.FinalStandings == nil {
		v.missing("final_standings")
	}
	v.standings("final_standings", m.FinalStandings)
}

// GameInvitation is GAME_INVITATION. player_id appears only in
// protocol-v2.md's example; it is accepted and not sent.
type GameInvitation struct {
	Envelope
	RoundID     int    `json:"round_id"`
	MatchID     string `json:"match_id"`
	GameType    string `json:"game_type"`
	RoleInMatch string `json:"role_in_match,omitzero"`
	PlayerID    string `json:"player_id,omitzero"`
	OpponentID  string `json:"opponent_id"`
}

// Type implements Message.
func (*GameInvitation) Type() MessageType { return TypeGameInvitation }

func (m *GameInvitation) check(v *validator) {
	v.roundID("round_id", m.RoundID)
	v.requireID("match_id", m.MatchID)
	v.requireID("opponent_id", m.OpponentID)
	v.gameType("game_type", m.GameType)
	if m.RoleInMatch != "" && m.RoleInMatch != PlayerA && m.RoleInMatch != PlayerB {
		v.add(ErrInvalidMessageFormat, "role_in_match", `must be "PLAYER_A" or "PLAYER_B"`)
	}
	v.optionalID("player_id", m.PlayerID)
}

// GameJoinAck is GAME_JOIN_ACK. protocol-v2.md's example answers with
// status "READY" instead of accept; both are understood, accept is sent.
type GameJoinAck struct {
	Envelope
	MatchID          string `json:"match_id"`
	PlayerID         string `json:"player_id"`
	ArrivalTimestamp string `json:"arrival_timestamp,omitzero"`
	Accept           *bool  `json:"accept,omitzero"`
	Status           string `json:"status,omitzero"`
}

// Type implements Message.
func (*GameJoinAck) Type() MessageType { return TypeGameJoinAck }

func (m *GameJoinAck) check(v *validator) {
	v.requireID("match_id", m.MatchID)
	v.requireID("player_id", m.PlayerID)
	if m.Accept == nil && m.Status == "" {
		v.add(ErrInvalidMessageFormat, "accept", "is required (true or false)")
	}
	v.timestamp("arrival_timestamp", m.ArrivalTimestamp)
}

// Accepted reports whether the player joins: accept true, or without
// accept a status that says yes.
func (m *GameJoinAck) Accepted() bool {
	if m.Accept != nil {
		return *m.Accept
	}
	return JoinStatusAccepts(m.Status)
}

// JoinStatusAccepts reports whether a free-text join status means yes. It
// covers the statuses seen in the spec and the interop captures.
func JoinStatusAccepts(s string) bool {
	switch s {
	case "READY", "ACCEPTED", "ACK", "ack", "OK", "ok", "JOINED", "acknowledged":
		return true
	}
	return false
}

// YourStandings is the player's own record inside a parity call's context.
type YourStandings struct {
	Wins   int `json:"wins"`
	Losses int `json:"losses"`
	Draws  int `json:"draws"`
}

// ParityContext is the context of a CHOOSE_PARITY_CALL.
type ParityContext struct {
	OpponentID    string         `json:"opponent_id"`
	RoundID       int            `json:"round_id"`
	YourStandings *YourStandings `json:"your_standings,omitzero"`
}

// ChooseParityCall is CHOOSE_PARITY_CALL.
type ChooseParityCall struct {
	Envelope
	MatchID  string         `json:"match_id"`
	PlayerID string         `json:"player_id"`
	GameType string         `json:"game_type,omitzero"`
	Context  *ParityContext `json:"context,omitzero"`
	Deadline string         `json:"deadline,omitzero"`
}

// Type implements Message.
func (*ChooseParityCall) Type() MessageType { return TypeChooseParityCall }

func (m *ChooseParityCall) check(v *validator) {
	v.requireID("match_id", m.MatchID)
	v.requireID("player_id", m.PlayerID)
	v.gameType("game_type", m.GameType)
	v.timestamp("deadline", m.Deadline)
}

// ChooseParityResponse is CHOOSE_PARITY_RESPONSE.
type ChooseParityResponse struct {
	Envelope
	MatchID      string `json:"match_id"`
	PlayerID     string `json:"player_id,omitzero"`
	ParityChoice string `json:"parity_choice"`
}

// Type implements Message.
func (*ChooseParityResponse) Type() MessageType { return TypeChooseParityResponse }

func (m *ChooseParityResponse) check(v *validator) {
	v.requireID("match_id", m.MatchID)
	v.optionalID("player_id", m.PlayerID)
	if err := CheckParity(m.ParityChoice); err != nil {
		v.add(ErrInvalidMove, "parity_choice", err.Error())
	}
}

// GameResult is the game_result of GAME_OVER (spec §4.6.1). Choices come as
// choices (spec, dialect-b) or player_choices (api-reference, dialect-a).
type GameResult struct {
	Status         string            `json:"status"`
	WinnerPlayerID *string           `json:"winner_player_id"`
	DrawnNumber    *int              `json:"drawn_number"`
	NumberParity   string            `json:"number_parity,omitzero"`
	Choices        map[string]string `json:"choices,omitzero"`
	PlayerChoices  map[string]string `json:"player_choices,omitzero"`
	OpponentID     string            `json:"opponent_id,omitzero"`
	PointsAwarded  *int              `json:"points_awarded,omitzero"`
	Reason         string            `json:"reason,omitzero"`
}

// AllChoices returns the players' choices whichever spelling carried them.
func (g *GameResult) AllChoices() map[string]string {
	if g.Choices != nil {
		return g.Choices
	}
	return g.PlayerChoices
}

// GameOver is GAME_OVER. protocol-v2.md's example carries winner, score and
// details at the top level instead of game_result; both forms are accepted.
type GameOver struct {
	Envelope
	RoundID    int            `json:"round_id,omitzero"`
	MatchID    string         `json:"match_id"`
	GameType   string         `json:"game_type,omitzero"`
	PlayerID   string         `json:"player_id,omitzero"`
	GameResult *GameResult    `json:"game_result,omitzero"`
	Reason     string         `json:"reason,omitzero"`
	Winner     *string        `json:"winner,omitzero"`
	Score      map[string]any `json:"score,omitzero"`
	Details    *ResultDetails `json:"details,omitzero"`
}

// Type implements Message.
func (*GameOver) Type() MessageType { return TypeGameOver }

func (m *GameOver) check(v *validator) {
	v.requireID("match_id", m.MatchID)
	v.gameType("game_type", m.GameType)
	switch {
	case m.GameResult != nil:
		g := m.GameResult
		switch g.Status {
		case ResultWin, ResultDraw, ResultTechnicalLoss, ResultLoss:
		case "":
			v.missing("game_result.status")
		default:
			v.add(ErrInvalidMessageFormat, "game_result.status", `must be "WIN", "DRAW" or "TECHNICAL_LOSS"`)
		}
		if g.NumberParity != "" && CheckParity(g.NumberParity) != nil {
			v.add(ErrInvalidMessageFormat, "game_result.number_parity", `must be "even" or "odd"`)
		}
	case m.Winner != nil || m.Details != nil:
		m.Details.check(v, "details")
	default:
		v.missing("game_result")
	}
}

// ResultDetails is the details object of a result. TechnicalLosses is this
// implementation's record of which player failed and why.
type ResultDetails struct {
	DrawnNumber     *int              `json:"drawn_number,omitzero"`
	Parity          string            `json:"parity,omitzero"`
	Outcome         string            `json:"outcome,omitzero"`
	Choices         map[string]string `json:"choices,omitzero"`
	Reason          string            `json:"reason,omitzero"`
	TechnicalLosses []TechnicalLoss   `json:"technical_losses,omitzero"`
}

func (d *ResultDetails) check(v *validator, path string) {
	if d == nil {
		return
	}
	if d.Parity != "" && CheckParity(d.Parity) != nil {
		v.add(ErrInvalidMessageFormat, path+".parity", `must be "even" or "odd"`)
	}
	for i, tl := range d.TechnicalLosses {
		p := path + ".technical_losses[" + strconv.Itoa(i) + "]"
		v.requireID(p+".player_id", tl.PlayerID)
		v.errorCode(p+".error_code", tl.ErrorCode, false)
	}
}

// TechnicalLoss records one player's technical loss in a match result.
type TechnicalLoss struct {
	PlayerID  string `json:"player_id"`
	ErrorCode Code   `json:"error_code"`
	Action    string `json:"action,omitzero"`
	Reason    string `json:"reason"`
}

// MatchResult is the result object of MATCH_RESULT_REPORT. Statuses say
// what each side got (WIN, LOSS, DRAW, TECHNICAL_LOSS); score holds points
// (api-reference) or choices (protocol-v2.md), so its values are kept as
// they came.
type MatchResult struct {
	Winner        *string        `json:"winner"`
	Score         map[string]any `json:"score"`
	MatchStatus   string         `json:"match_status,omitzero"`
	PlayerAStatus string         `json:"player_a_status,omitzero"`
	PlayerBStatus string         `json:"player_b_status,omitzero"`
	Details       *ResultDetails `json:"details,omitzero"`
}

// MatchResultReport is MATCH_RESULT_REPORT.
type MatchResultReport struct {
	Envelope
	RoundID  int          `json:"round_id"`
	MatchID  string       `json:"match_id"`
	GameType string       `json:"game_type,omitzero"`
	Result   *MatchResult `json:"result"`
}

// Type implements Message.
func (*MatchResultReport) Type() MessageType { return TypeMatchResultReport }

func (m *MatchResultReport) check(v *validator) {
	v.roundID("round_id", m.RoundID)
	v.requireID("match_id", m.MatchID)
	v.gameType("game_type", m.GameType)
	if m.Result == nil {
		v.missing("result")
		return
	}
	r := m.Result
	if r.Winner != nil && *r.Winner != "" && *r.Winner != "DRAW" {
		v.optionalID("result.winner", *r.Winner)
	}
	v.sideStatus("result.player_a_status", r.PlayerAStatus)
	v.sideStatus("result.player_b_status", r.PlayerBStatus)
	r.Details.check(v, "result.details")
}

// LeagueStandingsUpdate is LEAGUE_STANDINGS_UPDATE (and protocol-v2.md's
// STANDINGS_NOTIFICATION, which is the same message under another name).
type LeagueStandingsUpdate struct {
	Envelope
	RoundID   int           `json:"round_id"`
	Standings []StandingRow `json:"standings"`
}

// Type implements Message.
func (*LeagueStandingsUpdate) Type() MessageType { return TypeLeagueStandingsUpdate }

func (m *LeagueStandingsUpdate) check(v *validator) {
	v.roundID("round_id", m.RoundID)
	if m.Standings == nil {
		v.missing("standings")
	}
	v.standings("standings", m.Standings)
}

// LeagueError is LEAGUE_ERROR. protocol-v2.md names the description
// error_message; both spellings are accepted, error_description is sent.
type LeagueError struct {
	Envelope
	ErrorCode           Code           `json:"error_code"`
	ErrorDescription    string         `json:"error_description,omitzero"`
	ErrorMessage        string         `json:"error_message,omitzero"`
	OriginalMessageType MessageType    `json:"original_message_type,omitzero"`
	Context             map[string]any `json:"context,omitzero"`
}

// Type implements Message.
func (*LeagueError) Type() MessageType { return TypeLeagueError }

func (m *LeagueError) check(v *validator) {
	v.errorCode("error_code", m.ErrorCode, true)
}

// RetryInfo tells a player about retries in a GAME_ERROR.
type RetryInfo struct {
	RetryCount    int    `json:"retry_count"`
	MaxRetries    int    `json:"max_retries"`
	NextRetryAt   string `json:"next_retry_at,omitzero"`
	TotalDelaySec *int   `json:"total_delay_sec,omitzero"`
}

// GameError is GAME_ERROR.
type GameError struct {
	Envelope
	MatchID          string         `json:"match_id"`
	ErrorCode        Code           `json:"error_code"`
	ErrorDescription string         `json:"error_description,omitzero"`
	AffectedPlayer   string         `json:"affected_player,omitzero"`
	ActionRequired   string         `json:"action_required,omitzero"`
	RetryInfo        *RetryInfo     `json:"retry_info,omitzero"`
	Consequence      string         `json:"consequence,omitzero"`
	Context          map[string]any `json:"context,omitzero"`
}

// Type implements Message.
func (*GameError) Type() MessageType { return TypeGameError }

func (m *GameError) check(v *validator) {
	v.requireID("match_id", m.MatchID)
	v.errorCode("error_code", m.ErrorCode, true)
	v.optionalID("affected_player", m.AffectedPlayer)
	if m.RetryInfo != nil {
		v.timestamp("retry_info.next_retry_at", m.RetryInfo.NextRetryAt)
	}
}

// QueryParams are the parameters of a LEAGUE_QUERY.
type QueryParams struct {
	PlayerID string `json:"player_id,omitzero"`
	// RoundID names one round of GET_SCHEDULE (an extension of this
	// implementation; 0 for none).
	RoundID int `json:"round_id,omitzero"`
}

// LeagueQuery is LEAGUE_QUERY. A missing player_id in a player's
// GET_NEXT_MATCH or GET_PLAYER_STATS means the sender itself.
type LeagueQuery struct {
	Envelope
	QueryType   string       `json:"query_type"`
	QueryParams *QueryParams `json:"query_params,omitzero"`
}

// Type implements Message.
func (*LeagueQuery) Type() MessageType { return TypeLeagueQuery }

func (m *LeagueQuery) check(v *validator) {
	switch m.QueryType {
	case QueryStandings, QuerySchedule, QueryNextMatch, QueryPlayerStats, QueryCrosstable:
	case "":
		v.missing("query_type")
	default:
		v.add(ErrInvalidMessageFormat, "query_type", "must be one of GET_STANDINGS, GET_SCHEDULE, GET_NEXT_MATCH, GET_PLAYER_STATS, GET_CROSSTABLE")
	}
	if m.QueryParams != nil {
		v.optionalID("query_params.player_id", m.QueryParams.PlayerID)
	}
}

// LeagueQueryResponse is LEAGUE_QUERY_RESPONSE. On input Data and Error
// decode as generic JSON values (numbers as float64); a caller that needs
// exact values decodes the raw result itself.
type LeagueQueryResponse struct {
	Envelope
	QueryType string `json:"query_type"`
	Success   bool   `json:"success"`
	Data      any    `json:"data,omitzero"`
	Error     any    `json:"error,omitzero"`
}

// Type implements Message.
func (*LeagueQueryResponse) Type() MessageType { return TypeLeagueQueryResponse }

func (m *LeagueQueryResponse) check(v *validator) {
	v.requireString("query_type", m.QueryType)
}

// StartMatch is START_MATCH (api-reference §4.1): the manager hands a match
// to a referee. api-reference and dialect-a spell the players player_a_id,
// dialect-b player_A_id; both are accepted, and the endpoints of the
// players come along so that a referee needs no other source for them.
type StartMatch struct {
	Envelope
	MatchID               string `json:"match_id"`
	RoundID               int    `json:"round_id"`
	GameType              string `json:"game_type,omitzero"`
	PlayerAID             string `json:"player_a_id,omitzero"`
	PlayerBID             string `json:"player_b_id,omitzero"`
	PlayerAEndpoint       string `json:"player_a_endpoint,omitzero"`
	PlayerBEndpoint       string `json:"player_b_endpoint,omitzero"`
	AltPlayerAID          string `json:"player_A_id,omitzero"`
	AltPlayerBID          string `json:"player_B_id,omitzero"`
	AltPlayerAEndpoint    string `json:"player_A_endpoint,omitzero"`
	AltPlayerBEndpoint    string `json:"player_B_endpoint,omitzero"`
	LeagueManagerEndpoint string `json:"league_manager_endpoint,omitzero"`
	// MatchSeed is this implementation's extension: the seed of the drawn
	// number, derived from the league seed and the match id, so a league
	// split across processes draws what a simulated one does. Other
	// implementations ignore it; without it a referee uses its own seed.
	MatchSeed *uint64 `json:"match_seed,omitzero"`
	// PlayerAInstance and PlayerBInstance are this implementation's
	// extension too: a value that changes when the player registers
	// again after a restart of its own, so that a referee whose circuit
	// breaker shut the player out while it was down calls it again at
	// once, rather than after the breaker's reset timeout.
	PlayerAInstance string `json:"player_a_instance,omitzero"`
	PlayerBInstance string `json:"player_b_instance,omitzero"`
	// PlayerATicket and PlayerBTicket are this implementation's
	// extension, sent only to a referee that asked for match tickets
	// (RefereeMeta.MatchTickets), each for a player that asked for them:
	// the auth_token the referee puts on every message to that player
	// for this match (Ticket). Absent for a player that did not ask; the
	// referee then shows it the token it shows every player.
	PlayerATicket string `json:"player_a_ticket,omitzero"`
	PlayerBTicket string `json:"player_b_ticket,omitzero"`
}

// Type implements Message.
func (*StartMatch) Type() MessageType { return TypeStartMatch }

// PlayerA is player A's id whichever spelling carried it.
func (m *StartMatch) PlayerA() string { return firstNonEmpty(m.PlayerAID, m.AltPlayerAID) }

// PlayerB is player B's id whichever spelling carried it.
func (m *StartMatch) PlayerB() string { return firstNonEmpty(m.PlayerBID, m.AltPlayerBID) }

// EndpointA is player A's endpoint whichever spelling carried it.
func (m *StartMatch) EndpointA() string {
	return firstNonEmpty(m.PlayerAEndpoint, m.AltPlayerAEndpoint)
}

// EndpointB is player B's endpoint whichever spelling carried it.
func (m *StartMatch) EndpointB() string {
	return firstNonEmpty(m.PlayerBEndpoint, m.AltPlayerBEndpoint)
}

func (m *StartMatch) check(v *validator) {
	v.requireID("match_id", m.MatchID)
	v.roundID("round_id", m.RoundID)
	v.gameType("game_type", m.GameType)
	v.requireID("player_a_id", m.PlayerA())
	v.requireID("player_b_id", m.PlayerB())
	if a, b := m.PlayerA(), m.PlayerB(); a != "" && a == b {
		v.add(ErrInvalidMessageFormat, "player_b_id", "must differ from player_a_id")
	}
	v.endpoint("player_a_endpoint", m.EndpointA(), false)
	v.endpoint("player_b_endpoint", m.EndpointB(), false)
	v.endpoint("league_manager_endpoint", m.LeagueManagerEndpoint, false)
}

// StartMatchAck is START_MATCH_ACK, the referee's answer to START_MATCH.
type StartMatchAck struct {
	Envelope
	MatchID string `json:"match_id,omitzero"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitzero"`
}

// Type implements Message.
func (*StartMatchAck) Type() MessageType { return TypeStartMatchAck }

func (m *StartMatchAck) check(v *validator) {
	v.requireString("status", m.Status)
	v.optionalID("match_id", m.MatchID)
}

// MatchResultReportAck is MATCH_RESULT_REPORT_ACK, the manager's answer to
// MATCH_RESULT_REPORT: ACCEPTED the first time, DUPLICATE after.
type MatchResultReportAck struct {
	Envelope
	MatchID string `json:"match_id,omitzero"`
	Status  string `json:"status"`
	Message string `json:"message,omitzero"`
}

// Type implements Message.
func (*MatchResultReportAck) Type() MessageType { return TypeMatchResultReportAck }

func (m *MatchResultReportAck) check(v *validator) {
	v.requireString("status", m.Status)
	v.optionalID("match_id", m.MatchID)
}

// Ack is the reply of an agent to a message that expects no response
// (broadcasts, GAME_OVER, GAME_ERROR): the request's type and conversation
// with status ACK, as the interop captures answer them.
type Ack struct {
	Envelope
	Status string `json:"status"`
}

// RawJSON is a JSON value kept as it came.
type RawJSON = jsontext.Value

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
