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
	// MethodManualRegister is the referee tool of api-reference.md §4
	// that registers the referee with the manager its params name.
	MethodManualRegister = "manual_register"

	// MethodToolsCall is MCP's generic tool invocation.
	MethodToolsCall = "tools/call"
	// MethodMCPMessage is implementation-guide §5.11.2's generic method,
	// whose params.message_type names the message.
	MethodMCPMessage = "mcp_message"
)

// methodAliases are the names accepted beyond the types themselves and
// the tool names of typeTable: read-only data.
var methodAliases = map[string]MessageType{
	// api-reference §4.1.
	MethodStartMatch: TypeStartMatch,
	// dialect-b tool names.
	"receive_game_invitation": TypeGameInvitation,
	"receive_game_over":       TypeGameOver,
	"notify_standings":        TypeLeagueStandingsUpdate,
	// protocol-v2.md's name for the standings broadcast.
	"STANDINGS_NOTIFICATION": TypeLeagueStandingsUpdate,
}

// methodTypes maps every accepted method name to its message type.
var methodTypes = func() map[string]MessageType {
	m := make(map[string]MessageType, len(typeTable)*2+len(methodAliases))
	for t, info := range typeTable {
		m[string(t)] = t
		if info.tool != "" {
			m[info.tool] = t
		}
	}
	for k, v := range methodAliases {
		m[k] = v
	}
	return m
}()

// MethodType resolves a method name to a message type. Every message type
// is its own method name. ok is false for names that are not league
// messages (tools such as ping, or unknown names).
func MethodType(method string) (MessageType, bool) {
	t, ok := methodTypes[method]
	return t, ok
}

// infoOf is t's row of typeTable.
func infoOf(t MessageType) (*typeInfo, bool) {
	info, ok := typeTable[t]
	return &info, ok
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
	out := make(map[string]MessageType, len(methodTypes))
	for k, v := range methodTypes {
		out[k] = v
	}
	return out
}
