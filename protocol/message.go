// Package protocol holds the league.v2 wire layer: message structs and their
// envelope, validation with field-level reasons, the E001–E018 error table,
// method aliases, and the JSON-RPC 2.0 codec. It uses only the standard
// library and the JSON codec.
package protocol

import "slices"

// Version is the only protocol value this implementation speaks.
const Version = "league.v2"

// SpecVersion is the protocol document version league.v2 stands for.
const SpecVersion = "2.1.0"

// GameEvenOdd is the only game type of this league.
const GameEvenOdd = "even_odd"

// MessageType names a league.v2 message.
type MessageType string

// The 18 message types of spec/message-structures.md §4.11, START_MATCH and
// START_MATCH_ACK of spec/api-reference.md §4.1, and MATCH_RESULT_REPORT_ACK.
const (
	TypeRefereeRegisterRequest  MessageType = "REFEREE_REGISTER_REQUEST"
	TypeRefereeRegisterResponse MessageType = "REFEREE_REGISTER_RESPONSE"
	TypeLeagueRegisterRequest   MessageType = "LEAGUE_REGISTER_REQUEST"
	TypeLeagueRegisterResponse  MessageType = "LEAGUE_REGISTER_RESPONSE"
	TypeRoundAnnouncement       MessageType = "ROUND_ANNOUNCEMENT"
	TypeRoundCompleted          MessageType = "ROUND_COMPLETED"
	TypeLeagueCompleted         MessageType = "LEAGUE_COMPLETED"
	TypeGameInvitation          MessageType = "GAME_INVITATION"
	TypeGameJoinAck             MessageType = "GAME_JOIN_ACK"
	TypeChooseParityCall        MessageType = "CHOOSE_PARITY_CALL"
	TypeChooseParityResponse    MessageType = "CHOOSE_PARITY_RESPONSE"
	TypeGameOver                MessageType = "GAME_OVER"
	TypeMatchResultReport       MessageType = "MATCH_RESULT_REPORT"
	TypeLeagueStandingsUpdate   MessageType = "LEAGUE_STANDINGS_UPDATE"
	TypeLeagueError             MessageType = "LEAGUE_ERROR"
	TypeGameError               MessageType = "GAME_ERROR"
	TypeLeagueQuery             MessageType = "LEAGUE_QUERY"
	TypeLeagueQueryResponse     MessageType = "LEAGUE_QUERY_RESPONSE"
	TypeStartMatch              MessageType = "START_MATCH"
	TypeStartMatchAck           MessageType = "START_MATCH_ACK"
	TypeMatchResultReportAck    MessageType = "MATCH_RESULT_REPORT_ACK"
)

// Role is the agent kind in a sender ("player:P01").
type Role string

// The three roles of a league.
const (
	RoleLeagueManager Role = "league_manager"
	RoleReferee       Role = "referee"
	RolePlayer        Role = "player"
)

// Parity choices, exactly as they go on the wire.
const (
	Even = "even"
	Odd  = "odd"
)

// Registration and acknowledgement statuses.
const (
	StatusAccepted  = "ACCEPTED"
	StatusRejected  = "REJECTED"
	StatusDuplicate = "DUPLICATE"
)

// Game result statuses (spec §4.6.1; LOSS is dialect-a's per-recipient
// status, accepted on input and never sent).
const (
	ResultWin           = "WIN"
	ResultDraw          = "DRAW"
	ResultLoss          = "LOSS"
	ResultTechnicalLoss = "TECHNICAL_LOSS"
)

// Known returns s as the package's constant when s is one of the parities
// or result statuses, and s itself otherwise: records kept for a whole
// league then hold each of these words once instead of once per message.
func Known(s string) string {
	switch s {
	case Even:
		return Even
	case Odd:
		return Odd
	case ResultWin:
		return ResultWin
	case ResultDraw:
		return ResultDraw
	case ResultLoss:
		return ResultLoss
	case ResultTechnicalLoss:
		return ResultTechnicalLoss
	}
	return s
}

// Match roles.
const (
	PlayerA = "PLAYER_A"
	PlayerB = "PLAYER_B"
)

// Query types of LEAGUE_QUERY.
const (
	QueryStandings   = "GET_STANDINGS"
	QuerySchedule    = "GET_SCHEDULE"
	QueryNextMatch   = "GET_NEXT_MATCH"
	QueryPlayerStats = "GET_PLAYER_STATS"
	// QueryCrosstable is this implementation's: every player's record
	// against each opponent (league.Crosstable).
	QueryCrosstable = "GET_CROSSTABLE"
)

// Envelope is the part every league.v2 message shares (spec/protocol-v2.md).
// All fields are omitted when empty so that a body-only message encodes as
// the spec's body examples do; messages this implementation sends always
// fill protocol, message_type, sender, timestamp and conversation_id.
type Envelope struct {
	Protocol       string      `json:"protocol,omitzero"`
	MessageType    MessageType `json:"message_type,omitzero"`
	Sender         string      `json:"sender,omitzero"`
	Timestamp      string      `json:"timestamp,omitzero"`
	ConversationID string      `json:"conversation_id,omitzero"`
	LeagueID       string      `json:"league_id,omitzero"`
	AuthToken      string      `json:"auth_token,omitzero"`

	// of is the broadcast this message is a recipient's copy of
	// (Broadcast.To): its validation and encoding are the broadcast's.
	of *Broadcast
}

// Env returns the envelope; it makes every message a Message.
func (e *Envelope) Env() *Envelope { return e }

// Message is any league.v2 message struct of this package.
type Message interface {
	// Env gives access to the shared envelope.
	Env() *Envelope
	// Type is the canonical message type of the struct.
	Type() MessageType
	// check adds the body rules of the message to v.
	check(v *validator)
}

// typeInfo is everything the package knows about one message type.
type typeInfo struct {
	new func() Message
	// senders may send it (spec §4.11, api-reference §4.1); a message from
	// any other role is refused with E002.
	senders []Role
	// reply answers it; "" for a plain acknowledgement or a reply type.
	reply MessageType
	// tool is the method name we send it by (api-reference §2, DESIGN §4);
	// "" sends it by its type.
	tool string
}

var (
	fromReferee    = []Role{RoleReferee}
	fromPlayer     = []Role{RolePlayer}
	fromManager    = []Role{RoleLeagueManager}
	fromAgentRoles = []Role{RolePlayer, RoleReferee}
)

// typeOrder lists the types in the order of the spec's summary table,
// then the three extra types.
var typeOrder = [...]MessageType{
	TypeRefereeRegisterRequest, TypeRefereeRegisterResponse,
	TypeLeagueRegisterRequest, TypeLeagueRegisterResponse,
	TypeRoundAnnouncement, TypeRoundCompleted, TypeLeagueCompleted,
	TypeGameInvitation, TypeGameJoinAck,
	TypeChooseParityCall, TypeChooseParityResponse,
	TypeGameOver, TypeMatchResultReport, TypeLeagueStandingsUpdate,
	TypeLeagueError, TypeGameError, TypeLeagueQuery, TypeLeagueQueryResponse,
	TypeStartMatch, TypeStartMatchAck, TypeMatchResultReportAck,
}

// typeTable is read-only data: one row per message type.
var typeTable = map[MessageType]typeInfo{
	TypeRefereeRegisterRequest:  {func() Message { return new(RefereeRegisterRequest) }, fromReferee, TypeRefereeRegisterResponse, MethodRegisterReferee},
	TypeRefereeRegisterResponse: {func() Message { return new(RefereeRegisterResponse) }, fromManager, "", ""},
	TypeLeagueRegisterRequest:   {func() Message { return new(LeagueRegisterRequest) }, fromPlayer, TypeLeagueRegisterResponse, MethodRegisterPlayer},
	TypeLeagueRegisterResponse:  {func() Message { return new(LeagueRegisterResponse) }, fromManager, "", ""},
	TypeRoundAnnouncement:       {func() Message { return new(RoundAnnouncement) }, fromManager, "", MethodNotifyRound},
	TypeRoundCompleted:          {func() Message { return new(RoundCompleted) }, fromManager, "", MethodNotifyRoundCompleted},
	TypeLeagueCompleted:         {func() Message { return new(LeagueCompleted) }, fromManager, "", MethodNotifyLeagueComplete},
	TypeGameInvitation:          {func() Message { return new(GameInvitation) }, fromReferee, TypeGameJoinAck, MethodHandleGameInvitation},
	TypeGameJoinAck:             {func() Message { return new(GameJoinAck) }, fromPlayer, "", ""},
	TypeChooseParityCall:        {func() Message { return new(ChooseParityCall) }, fromReferee, TypeChooseParityResponse, MethodChooseParity},
	TypeChooseParityResponse:    {func() Message { return new(ChooseParityResponse) }, fromPlayer, "", ""},
	TypeGameOver:                {func() Message { return new(GameOver) }, fromReferee, "", MethodNotifyMatchResult},
	TypeMatchResultReport:       {func() Message { return new(MatchResultReport) }, fromReferee, TypeMatchResultReportAck, MethodReportMatchResult},
	TypeLeagueStandingsUpdate:   {func() Message { return new(LeagueStandingsUpdate) }, fromManager, "", MethodUpdateStandings},
	TypeLeagueError:             {func() Message { return new(LeagueError) }, fromManager, "", ""},
	TypeGameError:               {func() Message { return new(GameError) }, fromReferee, "", MethodNotifyGameError},
	TypeLeagueQuery:             {func() Message { return new(LeagueQuery) }, fromAgentRoles, TypeLeagueQueryResponse, MethodLeagueQuery},
	TypeLeagueQueryResponse:     {func() Message { return new(LeagueQueryResponse) }, fromManager, "", ""},
	TypeStartMatch:              {func() Message { return new(StartMatch) }, fromManager, TypeStartMatchAck, ""},
	TypeStartMatchAck:           {func() Message { return new(StartMatchAck) }, fromReferee, "", ""},
	TypeMatchResultReportAck:    {func() Message { return new(MatchResultReportAck) }, fromManager, "", ""},
}

// SentToAgentInPlay reports whether a message of type t goes from the
// manager or a referee to an agent taking part in the league (invitations,
// parity calls, results, broadcasts, START_MATCH), as opposed to a message
// to the manager (registration, report, query).
func SentToAgentInPlay(t MessageType) bool {
	switch t {
	case TypeGameInvitation, TypeChooseParityCall, TypeGameOver, TypeGameError, TypeStartMatch,
		TypeRoundAnnouncement, TypeLeagueStandingsUpdate, TypeRoundCompleted, TypeLeagueCompleted:
		return true
	}
	return false
}

// New returns a new empty message struct for t, or nil for an unknown type.
func New(t MessageType) Message {
	if info, ok := infoOf(t); ok {
		return info.new()
	}
	return nil
}

// MessageTypes lists every message type New knows, in the order of the spec
// summary table followed by the three extra types.
func MessageTypes() []MessageType { return slices.Clone(typeOrder[:]) }

// ReplyType is the message type that answers a request of type t, or ""
// when the answer is a plain acknowledgement (broadcasts, GAME_OVER,
// GAME_ERROR) or t is not a request.
func ReplyType(t MessageType) MessageType {
	if info, ok := infoOf(t); ok {
		return info.reply
	}
	return ""
}

// ToolName is the method name we send for a message type: the tool name of
// api-reference §2 and DESIGN §4 where there is one, else the type itself.
func ToolName(t MessageType) string {
	if info, ok := infoOf(t); ok && info.tool != "" {
		return info.tool
	}
	return string(t)
}
