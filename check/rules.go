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

// grade is what failing a check costs. breaks: an agent that fails it
// would lose matches, be refused, or stop or falsify a league, ours or one
// of the known implementations' (../shared/interop's dialect-a and
// dialect-b). Otherwise the failure only departs from the documents: our
// league and the known implementations would still play with the agent.
// why says which, in one line, for the reader of the code and of
// docs/check.md.
type grade struct {
	breaks bool
	why    string
}

func breaks(why string) grade  { return grade{breaks: true, why: why} }
func departs(why string) grade { return grade{why: why} }

// The grades of every role's first three checks.
var (
	gradePing   = breaks("an agent that answers nothing plays nothing: every other call to it fails too")
	gradeHealth = departs("no agent of a league asks for /health: only operators and scripts wait on it")
	gradeRPC    = departs("our client reads answers leniently; a defect that changes what an answer says fails the check of that answer too")
)

// The grades of the checks of Player.
var (
	gradeInviteTool = breaks("a player that cannot be invited gets a technical loss in every match")
	gradeInviteType = breaks("dialect-a's referee invites by message type only: a player that refuses it loses every match there")
	gradeParity     = breaks("a choice that is not even or odd, late, or made as another player is a technical loss (E010, E001, E013)")
	gradeConcurrent = breaks("a referee takes an answer that names the other match for a wrong one (E013): a technical loss")
	gradeGameOver   = departs("the result is decided before GAME_OVER is sent; a referee logs a GAME_OVER that is not acknowledged and goes on")
	gradeBroadcast  = departs("a manager logs a broadcast that is not acknowledged and goes on: the player is still invited to its matches")
	gradeConvID     = breaks("our referee gives a technical loss for an answer in another conversation (E013)")
	gradeEnvelope   = departs("a referee reads a reply's match_id, conversation_id, player_id and choice, not its envelope: ours does")
	gradeProtocol   = departs("no league sends league.v1 messages")
	gradeParse      = departs("no league sends a body that is not JSON")
)

// The grades of the checks of Referee.
var (
	gradeRegister      = breaks("a referee that does not register, or not for even_odd, is given no match")
	gradeStartMatch    = breaks("a match the referee refuses is not played: the manager waits for its result")
	gradeInvitations   = breaks("a player not invited, or invited to another match or as another, loses a match it did not play")
	gradeParityCalls   = breaks("a player not asked, or asked as another, gives no choice and loses")
	gradeReport        = breaks("the standings count what the report says, and a report without the referee's token is refused")
	gradeGameOverBoth  = departs("the manager counts the report; a player only records GAME_OVER in its history (ours does)")
	gradeTechnicalLoss = breaks("a match with a silent player must still be reported, its opponent the winner, or the league waits for it or counts it wrong")
)

// The grades of the checks of Manager.
var (
	gradeRegReferee      = breaks("a referee the manager does not register is given no match")
	gradeRegPlayer       = breaks("a player the manager does not register plays no match")
	gradeTokens          = breaks("with another agent's token an agent can report and answer as it: results that were not played count")
	gradeDuplicate       = breaks("an id registered twice is two agents answering as one: the standings mix them")
	gradeMissingMeta     = departs("only a broken player registers without player_meta; a league of conforming agents never sees it")
	gradeQueryRefusals   = departs("a query only reads: the standings it would show are broadcast to every player anyway")
	gradeQuery           = departs("no agent needs a query to play: players are told the standings")
	gradeForgedReport    = breaks("a manager that counts a report without the referee's token counts results nobody played")
	gradeStartLeague     = breaks("the league does not start")
	gradeMgrStartMatch   = breaks("a referee not given the match, or given the wrong players, plays nothing or the wrong match")
	gradeReportAck       = breaks("a referee that is not answered ACCEPTED sends its report again (ours until it is)")
	gradeStandingsAfter  = breaks("the standings are the league's outcome")
	gradeDuplicateReport = breaks("a report sent again, as a referee does when an answer is lost, would count twice")
	gradeBroadcasts      = departs("players are invited by the referees whatever they heard of the round: ours play without it")
	gradeCompleted       = departs("every match is played and counted before it; without it the agents only go on waiting")
)

// The grades of milder forms of failures whose check breaks a league.
var (
	// ping answered, but not with a result.
	gradePingRefused = departs("our manager takes any answer to its ping, an error too, as alive; no match needs ping")
	// The invitation answered only through tools/call.
	gradeInviteDetour = departs("our referee asks a player again the way it answered (tools/call): it plays its matches")
	// A report whose number is said nowhere.
	gradeNoNumber = departs("the winner cannot be verified, but the manager counts the winner the report names")
	// The silent player's loss reported, but not as a technical loss.
	gradeRightWinner = departs("the winner is right, and so are the standings; only the reason of the loss is not said")
	// A requested id not kept.
	gradeOtherID = departs("the agent plays under the id it is given; keeping a free requested id is DESIGN §5's, not the spec's")
	// A refusal with another code than the one the check names.
	gradeOtherCode = departs("refused all the same: a peer reads the refusal, whatever its code")
)

// playerPlan is every check of Player, in the order reported.
func playerPlan() []planned {
	return []planned{
		{"ping", rulePing, gradePing}, {"GET /health", ruleHealth, gradeHealth}, {nameRPC, ruleRPC, gradeRPC},
		{"ROUND_ANNOUNCEMENT", ruleRound, gradeBroadcast}, {"invitation by tool name", ruleInviteTool, gradeInviteTool},
		{"invitation by message type", ruleInviteType, gradeInviteType}, {"parity choice", ruleParity, gradeParity},
		{"two matches at once", ruleConcurrent, gradeConcurrent}, {"GAME_OVER", ruleGameOver, gradeGameOver},
		{"LEAGUE_STANDINGS_UPDATE", ruleStandings, gradeBroadcast}, {"ROUND_COMPLETED", ruleRoundDone, gradeBroadcast},
		{"LEAGUE_COMPLETED", ruleLeagueDone, gradeBroadcast}, {"conversation_id echoed", ruleConvID, gradeConvID},
		{"reply envelope", ruleEnvelope, gradeEnvelope}, {"league.v1 refused (E011)", ruleProtocol, gradeProtocol},
		{"malformed JSON refused (-32700)", ruleParse, gradeParse},
	}
}

// refereePlan is every check of Referee, in the order reported.
func refereePlan() []planned {
	return []planned{
		{"ping", rulePing, gradePing}, {"GET /health", ruleHealth, gradeHealth}, {nameRPC, ruleRPC, gradeRPC},
		{"registration", ruleRegister, gradeRegister}, {"START_MATCH accepted", ruleStartMatch, gradeStartMatch},
		{"invitations", ruleInvitations, gradeInvitations}, {"parity calls", ruleParityCalls, gradeParityCalls},
		{"result report", ruleReport, gradeReport}, {"GAME_OVER to both players", ruleGameOverBoth, gradeGameOverBoth},
		{"technical loss for a timeout", ruleTechnicalLoss, gradeTechnicalLoss},
	}
}

// managerPlan is every check of Manager, in the order reported.
func managerPlan() []planned {
	return []planned{
		{"ping", rulePing, gradePing}, {"GET /health", ruleHealth, gradeHealth}, {nameRPC, ruleRPC, gradeRPC},
		{"referee registration", ruleRegReferee, gradeRegReferee},
		{"player registration (requested id)", ruleRegPlayerID, gradeRegPlayer},
		{"player registration (assigned id)", ruleRegPlayerNoID, gradeRegPlayer}, {"distinct tokens", ruleTokens, gradeTokens},
		{"duplicate registration (E017)", ruleDuplicate, gradeDuplicate},
		{"registration without player_meta (E002)", ruleMissingMeta, gradeMissingMeta},
		{"query without token (E003)", ruleNoToken, gradeQueryRefusals},
		{"query with a wrong token (E012)", ruleWrongToken, gradeQueryRefusals},
		{"query from an unknown sender (E004)", ruleUnknownSender, gradeQueryRefusals},
		{"query with the token", ruleQuery, gradeQuery},
		{"report with a wrong token refused", ruleReportWrongTok, gradeForgedReport},
		{"start_league", ruleStartLeague, gradeStartLeague},
		{"START_MATCH to the referee", ruleMgrStartMatch, gradeMgrStartMatch},
		{"report acknowledged", ruleReportAck, gradeReportAck},
		{"standings after the result", ruleStandingsAfter, gradeStandingsAfter},
		{"duplicate report not counted twice", ruleDuplicateReport, gradeDuplicateReport},
		{"round broadcasts to players", ruleBroadcasts, gradeBroadcasts},
		{"LEAGUE_COMPLETED to everyone", ruleCompleted, gradeCompleted},
	}
}
