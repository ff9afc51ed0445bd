package protocol

// Method names. A league message may be called by its message type
// (GAME_INVITATION, dialect-a), by its tool name (handle_game_invitation,
// api-reference §2, the names we send), by the tool names of dialect-b
// (receive_game_invitation), or through MCP tools/call with the tool name in
// params.name. When params.message_type is present it decides.
const (
	MethodRegisterReferee      = "register_referee"
	MethodRegisterPlayer       = "register_player"
	MethodReportMatchResult    = "report_match_result"
	MethodLeagueQuery          = "league_query"
	MethodStartMatch           = "start_match"
	MethodHandleGameInvitation = "handle_game_invitation"
	MethodChooseParity         = "choose_parity"
	MethodNotifyMatchResult    = "notify_match_result"
	MethodNotifyGameError      = "notify_game_error"
	MethodNotifyRound          = "notify_round"
	MethodUpdateStandings      = "update_standings"
	MethodNotifyRoundCompleted = "notify_round_completed"
	MethodNotifyLeagueComplete = "notify_league_completed"

	// Tools that are not league messages.
	MethodPing                  = "ping"
	MethodStartLeague           = "start_league"
	MethodGetLeagueStatus       = "get_league_status"
	MethodGetStandings          = "get_standings"
	MethodGetPlayerState        = "get_player_state"
	MethodGetRegistrationStatus = "get_registration_status"
	MethodGetMatchState         = "get_match_state"

	// MethodToolsCall is MCP's generic tool invocation.
	MethodToolsCall = "tools/call"
	// MethodMCPMessage is implementation-guide §5.11.2's generic method,
	// whose params.message_type names the message.
	MethodMCPMessage = "mcp_message"
)

// methodTypes maps every accepted method name to its message type; it is
// read-only data.
var methodTypes = map[string]MessageType{
	// api-reference §2 tool names.
	MethodRegisterReferee:      TypeRefereeRegisterRequest,
	MethodRegisterPlayer:       TypeLeagueRegisterRequest,
	MethodReportMatchResult:    TypeMatchResultReport,
	MethodHandleGameInvitation: TypeGameInvitation,
	MethodChooseParity:         TypeChooseParityCall,
	MethodNotifyMatchResult:    TypeGameOver,
	MethodLeagueQuery:          TypeLeagueQuery,
	// api-reference §4.1 and DESIGN §4 broadcast and tool names.
	MethodStartMatch:           TypeStartMatch,
	MethodNotifyGameError:      TypeGameError,
	MethodNotifyRound:          TypeRoundAnnouncement,
	MethodUpdateStandings:      TypeLeagueStandingsUpdate,
	MethodNotifyRoundCompleted: TypeRoundCompleted,
	MethodNotifyLeagueComplete: TypeLeagueCompleted,
	// dialect-b tool names.
	"receive_game_invitation": TypeGameInvitation,
	"receive_game_over":       TypeGameOver,
	"notify_standings":        TypeLeagueStandingsUpdate,
	// protocol-v2.md's name for the standings broadcast.
	"STANDINGS_NOTIFICATION": TypeLeagueStandingsUpdate,
}

// MethodType resolves a method name to a message type. Every message type
// is its own method name. ok is false for names that are not league
// messages (tools such as ping, or unknown names).
func MethodType(method string) (MessageType, bool) {
	if t, ok := methodTypes[method]; ok {
		return t, true
	}
	if New(MessageType(method)) != nil {
		return MessageType(method), true
	}
	return "", false
}

// Canonical returns the message type t stands for: itself, or the type an
// alias such as STANDINGS_NOTIFICATION names. Unknown types come back as
// they are.
func Canonical(t MessageType) MessageType {
	if c, ok := MethodType(string(t)); ok {
		return c
	}
	return t
}

// Aliases returns every method name that resolves to a message type,
// including the message types themselves.
func Aliases() map[string]MessageType {
	out := make(map[string]MessageType, len(methodTypes)+21)
	for k, v := range methodTypes {
		out[k] = v
	}
	for _, t := range MessageTypes() {
		out[string(t)] = t
	}
	return out
}

// ToolName is the method name we send for a message type: the tool name of
// api-reference §2 and DESIGN §4 where there is one, else the type itself.
func ToolName(t MessageType) string {
	switch t {
	case TypeRefereeRegisterRequest:
		return MethodRegisterReferee
	case TypeLeagueRegisterRequest:
		return MethodRegisterPlayer
	case TypeMatchResultReport:
		return MethodReportMatchResult
	case TypeLeagueQuery:
		return MethodLeagueQuery
	case TypeGameInvitation:
		return MethodHandleGameInvitation
	case TypeChooseParityCall:
		return MethodChooseParity
	case TypeGameOver:
		return MethodNotifyMatchResult
	case TypeGameError:
		return MethodNotifyGameError
	case TypeRoundAnnouncement:
		return MethodNotifyRound
	case TypeLeagueStandingsUpdate:
		return MethodUpdateStandings
	case TypeRoundCompleted:
		return MethodNotifyRoundCompleted
	case TypeLeagueCompleted:
		return MethodNotifyLeagueComplete
	}
	return string(t)
}
