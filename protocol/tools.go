package protocol

// toolDescriptions are what an MCP client is told of each tool an agent
// serves (tools/list): api-reference.md's description, who calls it, and
// what it answers, so that an assistant or an inspector can call it
// without the spec at hand. Read-only data.
var toolDescriptions = map[string]string{
	MethodRegisterReferee: "Referee registration (REFEREE_REGISTER_REQUEST), sent by a referee to the league manager " +
		"with referee_meta (display_name, version, game_types, contact_endpoint, max_concurrent_matches). " +
		"Answers REFEREE_REGISTER_RESPONSE with the referee's id and auth_token.",
	MethodRegisterPlayer: "Player registration (LEAGUE_REGISTER_REQUEST), sent by a player to the league manager " +
		"with player_meta (display_name, version, game_types, contact_endpoint). " +
		"Answers LEAGUE_REGISTER_RESPONSE with the player's id and auth_token.",
	MethodReportMatchResult: "A referee reports a match's result (MATCH_RESULT_REPORT) to the league manager: " +
		"league_id, round_id, match_id, game_type and result (winner, score, details). " +
		"Only the referee the match was assigned to, with its auth_token. Answers MATCH_RESULT_REPORT_ACK.",
	MethodLeagueQuery: "A registered agent asks the league manager about the league (LEAGUE_QUERY): query_type " +
		"GET_STANDINGS, GET_SCHEDULE (query_params round_id, player_id), GET_NEXT_MATCH or GET_PLAYER_STATS " +
		"(query_params player_id). Answers LEAGUE_QUERY_RESPONSE.",
	MethodGetStandings:    "The league's current standings (a debug tool of the league manager); auth_token of a registered agent.",
	MethodGetLeagueStatus: "The league's state: registration, rounds played and to play, whether it is over.",
	MethodStartLeague:     "Starts the league now (an operator's tool): with the admin token as auth_token, or from the manager's host when it has none.",
	MethodStartMatch: "The league manager assigns a match to this referee (START_MATCH): match_id, round_id, " +
		"player_a_id, player_b_id and their endpoints. Answers START_MATCH_ACK; the referee then runs the match.",
	MethodGetMatchState:         "The state of the matches this referee runs or has run.",
	MethodGetRegistrationStatus: "Whether this agent is registered with its league manager, and its id.",
	MethodManualRegister:        "Registers this agent with the league manager whose endpoint the params name.",
	MethodHandleGameInvitation: "A referee invites this player to a match (GAME_INVITATION): match_id, round_id, " +
		"game_type, role_in_match, opponent_id. Answers GAME_JOIN_ACK (accept true or false).",
	MethodChooseParity: "A referee asks this player for its choice (CHOOSE_PARITY_CALL): match_id, player_id, " +
		"game_type, context, deadline. Answers CHOOSE_PARITY_RESPONSE with parity_choice \"even\" or \"odd\".",
	MethodNotifyMatchResult:    "A referee tells this player a match's result (GAME_OVER): match_id, game_result.",
	MethodNotifyGameError:      "A referee tells this player of an error in a match (GAME_ERROR), such as a technical loss.",
	MethodNotifyRound:          "The league manager announces a round (ROUND_ANNOUNCEMENT): round_id and its matches.",
	MethodUpdateStandings:      "The league manager sends the standings after a round (LEAGUE_STANDINGS_UPDATE).",
	MethodNotifyRoundCompleted: "The league manager says a round is over (ROUND_COMPLETED).",
	MethodNotifyLeagueComplete: "The league manager says the league is over (LEAGUE_COMPLETED), with its champion and final standings.",
	MethodGetPlayerState:       "This player's state: its registration, statistics, round and standings, and, unless its league issues match tickets and is not over, its strategy and history.",
	MethodPing:                 "Is this agent alive: answers with its id and status.",
	string(TypeLeagueError):    "The league manager tells this agent of an error (LEAGUE_ERROR): error_code, error_description, context.",
	"admin_query":              "An operator's LEAGUE_QUERY (query_type, query_params) with the admin token as auth_token, needing no agent identity.",
	"get_league_result":        "Waits until the league is over and answers its result: champion, final standings and seed (the seed only with the admin token).",
}

// ToolDescription is what an MCP client is told of the tool name: a
// league message's or another tool's; "" for a name it does not know.
func ToolDescription(name string) string { return toolDescriptions[name] }

// ToolNameOf is the MCP tool name of a message an agent serves: its tool
// name, and start_match for START_MATCH (api-reference.md §4.1), which
// we send by its type.
func ToolNameOf(t MessageType) string {
	if t == TypeStartMatch {
		return MethodStartMatch
	}
	return ToolName(t)
}
