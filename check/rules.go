package check

// The rules of ../shared/spec/ each check enforces, as the report names
// them.
const (
	rulePing   = "implementation-guide.md §5.12.2: an agent answers a JSON-RPC ping at POST /mcp"
	ruleHealth = "error-codes.md §4 (E001, E006, E018): an agent answers GET /health"

	// Player.
	ruleInviteTool = "api-reference.md §5.1, message-structures.md §4.4: handle_game_invitation is answered with a GAME_JOIN_ACK that accepts, for the invitation's match_id"
	ruleInviteType = "api-reference.md §2, message-structures.md §4.4: GAME_INVITATION as the method is answered with a GAME_JOIN_ACK that accepts, for the invitation's match_id"
	ruleParity     = `message-structures.md §4.5.2, §4.12.2: parity_choice is exactly "even" or "odd", answered before the call's deadline`
	ruleConcurrent = "message-structures.md §4.12.1, error-codes.md E013: two matches at once are answered each with its own match_id and conversation_id"
	ruleGameOver   = "implementation-guide.md §5.3.1, message-structures.md §4.6.1: notify_match_result (GAME_OVER) is answered with a result"
	ruleRound      = "message-structures.md §4.3.1: notify_round (ROUND_ANNOUNCEMENT) is answered with a result"
	ruleStandings  = "message-structures.md §4.7.1: update_standings (LEAGUE_STANDINGS_UPDATE) is answered with a result"
	ruleRoundDone  = "message-structures.md §4.8.1: notify_round_completed (ROUND_COMPLETED) is answered with a result"
	ruleLeagueDone = "message-structures.md §4.8.2: notify_league_completed (LEAGUE_COMPLETED) is answered with a result"
	ruleConvID     = "error-codes.md E013: a reply's conversation_id is its request's"
	ruleEnvelope   = "protocol-v2.md (Base Envelope), message-structures.md §4.12: a reply's protocol is league.v2, its sender player:<id>, its timestamp ISO-8601 UTC, and it holds its message's mandatory fields"
	ruleProtocol   = "error-codes.md E011, §7.3: a message whose protocol is not league.v2 is refused with E011 (JSON-RPC -32600)"
	ruleParse      = "JSON-RPC 2.0 §5.1: invalid JSON is answered -32700 Parse error with id null"

	// Every role.
	ruleRPC = `JSON-RPC 2.0 §5: every answer has "jsonrpc": "2.0", its request's id byte for byte (null for a request that could not be read), and exactly one of "result" and "error", an error being an object with an integer "code" and a string "message"`

	// Referee.
	ruleRegister      = "message-structures.md §4.1.1, implementation-guide.md §5.4.2: the referee registers with REFEREE_REGISTER_REQUEST and its referee_meta (display_name, version, game_types with even_odd, contact_endpoint, max_concurrent_matches)"
	ruleStartMatch    = "api-reference.md §4.1: START_MATCH from the manager is accepted"
	ruleInvitations   = "message-structures.md §4.4.1: the referee invites both players, each to the match with its role and its opponent"
	ruleParityCalls   = "message-structures.md §4.5.1: CHOOSE_PARITY_CALL goes to both players, for the match, each with its own player_id"
	ruleReport        = "message-structures.md §4.6.2, implementation-guide.md §5.4.3, protocol-v2.md (Authentication): MATCH_RESULT_REPORT carries the referee's token and the winner the choices and the drawn number give"
	ruleGameOverBoth  = "message-structures.md §4.6.1: GAME_OVER goes to both players, with the match's winner"
	ruleTechnicalLoss = "protocol-v2.md (Timeouts), implementation-guide.md §5.8.2: a player that does not answer in time gets a technical loss and its opponent wins"

	// Manager.
	ruleRegReferee      = "message-structures.md §4.1.2, api-reference.md §3.1: register_referee is ACCEPTED with a referee_id and an auth_token (DESIGN §5: a requested id is kept when free)"
	ruleRegPlayerID     = "message-structures.md §4.2.2, api-reference.md §3.2: register_player is ACCEPTED with a player_id and an auth_token (DESIGN §5: a requested id is kept when free)"
	ruleRegPlayerNoID   = "message-structures.md §4.2.2: the manager assigns a player_id to a player that asks for none (player:pending)"
	ruleTokens          = "protocol-v2.md (Authentication): every agent gets its own auth_token"
	ruleDuplicate       = "error-codes.md E017: registering an id that is registered already is DUPLICATE_REGISTRATION"
	ruleMissingMeta     = "message-structures.md §4.2.1, error-codes.md E002: a registration without player_meta is INVALID_MESSAGE_FORMAT"
	ruleNoToken         = "protocol-v2.md (Authentication), error-codes.md E003: a query without auth_token is refused"
	ruleWrongToken      = "error-codes.md E012: a query with a wrong auth_token is AUTH_TOKEN_INVALID"
	ruleUnknownSender   = "error-codes.md E004: a query from an agent that is not registered is AGENT_NOT_REGISTERED"
	ruleQuery           = "message-structures.md §4.9: LEAGUE_QUERY GET_STANDINGS with the sender's token succeeds"
	ruleReportWrongTok  = "protocol-v2.md (Authentication), error-codes.md E012: a MATCH_RESULT_REPORT with a wrong auth_token is refused"
	ruleStartLeague     = "api-reference.md §3 (start_league): start_league starts the league"
	ruleMgrStartMatch   = "api-reference.md §4.1: the manager hands the match to the referee with START_MATCH, naming both players and their endpoints"
	ruleReportAck       = "api-reference.md §3.3: a report is acknowledged with MATCH_RESULT_REPORT_ACK, status ACCEPTED"
	ruleDuplicateReport = "DESIGN §5: the first report of a match counts; the same report again (DUPLICATE) is not counted twice"
	ruleStandingsAfter  = "message-structures.md §4.7, implementation-guide.md §5.7: the standings count the reported result: one win and the win's points for the winner, one loss for the loser"
	ruleBroadcasts      = "message-structures.md §4.3.1, §4.7.1, §4.8.1: ROUND_ANNOUNCEMENT, LEAGUE_STANDINGS_UPDATE and ROUND_COMPLETED reach every player"
	ruleCompleted       = "message-structures.md §4.8.2: LEAGUE_COMPLETED reaches every player and referee"
)

// playerPlan is every check of Player, in the order reported.
func playerPlan() []planned {
	return []planned{
		{"ping", rulePing}, {"GET /health", ruleHealth}, {nameRPC, ruleRPC},
		{"ROUND_ANNOUNCEMENT", ruleRound}, {"invitation by tool name", ruleInviteTool},
		{"invitation by message type", ruleInviteType}, {"parity choice", ruleParity},
		{"two matches at once", ruleConcurrent}, {"GAME_OVER", ruleGameOver},
		{"LEAGUE_STANDINGS_UPDATE", ruleStandings}, {"ROUND_COMPLETED", ruleRoundDone},
		{"LEAGUE_COMPLETED", ruleLeagueDone}, {"conversation_id echoed", ruleConvID},
		{"reply envelope", ruleEnvelope}, {"league.v1 refused (E011)", ruleProtocol},
		{"malformed JSON refused (-32700)", ruleParse},
	}
}

// refereePlan is every check of Referee, in the order reported.
func refereePlan() []planned {
	return []planned{
		{"ping", rulePing}, {"GET /health", ruleHealth}, {nameRPC, ruleRPC},
		{"registration", ruleRegister}, {"START_MATCH accepted", ruleStartMatch},
		{"invitations", ruleInvitations}, {"parity calls", ruleParityCalls},
		{"result report", ruleReport}, {"GAME_OVER to both players", ruleGameOverBoth},
		{"technical loss for a timeout", ruleTechnicalLoss},
	}
}

// managerPlan is every check of Manager, in the order reported.
func managerPlan() []planned {
	return []planned{
		{"ping", rulePing}, {"GET /health", ruleHealth}, {nameRPC, ruleRPC},
		{"referee registration", ruleRegReferee}, {"player registration (requested id)", ruleRegPlayerID},
		{"player registration (assigned id)", ruleRegPlayerNoID}, {"distinct tokens", ruleTokens},
		{"duplicate registration (E017)", ruleDuplicate}, {"registration without player_meta (E002)", ruleMissingMeta},
		{"query without token (E003)", ruleNoToken}, {"query with a wrong token (E012)", ruleWrongToken},
		{"query from an unknown sender (E004)", ruleUnknownSender}, {"query with the token", ruleQuery},
		{"report with a wrong token refused", ruleReportWrongTok}, {"start_league", ruleStartLeague},
		{"START_MATCH to the referee", ruleMgrStartMatch}, {"report acknowledged", ruleReportAck},
		{"standings after the result", ruleStandingsAfter}, {"duplicate report not counted twice", ruleDuplicateReport},
		{"round broadcasts to players", ruleBroadcasts}, {"LEAGUE_COMPLETED to everyone", ruleCompleted},
	}
}
