package check

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
)

// Player checks a player agent at opts.Target: it plays a referee
// (referee:REF01, or opts.RefereeID) and a league manager
// (league_manager:LM01, or opts.ManagerID) of league "leaguectl-check",
// sends every message as this implementation's own agents do, without an
// auth_token (the player does not know the checker), in matches no earlier
// run has used, and checks each answer. The player need not be registered
// anywhere.
//
// The error is ErrUnreachable, wrapped, when the player answers neither
// ping nor GET /health (the report says so, every later check not run);
// every other problem is a failed Check.
func Player(ctx context.Context, opts Options) (*Report, error) {
	return run(ctx, "player", opts, playerPlan(), func(c *checker) error {
		p := &playerRun{checker: c}
		p.run(ctx)
		return nil
	})
}

// match is one of the matches the player check plays.
type match struct {
	id    string // R<round>M<k>
	round int
}

// reply is an answer of the player that the conversation and envelope
// checks look at.
type reply struct {
	what string // the request, for the report: "GAME_INVITATION (handle_game_invitation)"
	conv string // the conversation_id sent
	// want is the message type of the answer; "" for an acknowledgement.
	want protocol.MessageType
	x    *exchange
}

type playerRun struct {
	*checker
	me, opp, opp2 string // the player's id, as it names itself; its opponents
	fromPing      bool   // me came from the ping's sender
	choice        string // its parity choice in the match tool, when valid
	mu            sync.Mutex
	replies       []reply

	// The run's matches, in its first three rounds.
	tool  match    // invited by tool name, then asked for its choice and told the result
	typ   match    // invited by message type
	two   [2]match // two matches at once
	oldV1 match    // invited with protocol league.v1
}

func (p *playerRun) setMatches() {
	m := func(n, k int) match { return match{id: p.matchID(n, k), round: p.round + n} }
	p.tool, p.typ = m(0, 1), m(0, 2)
	p.two = [2]match{m(1, 1), m(1, 2)}
	p.oldV1 = m(2, 1)
}

func conversation(matchID string) string { return "conv-check-" + strings.ToLower(matchID) }

func (p *playerRun) run(ctx context.Context) {
	p.setMatches()
	p.pingCheck()
	p.healthCheck()
	if id := senderID(p.ping, protocol.RolePlayer); id != "" {
		p.me, p.fromPing = id, true
	} else {
		p.me = "P01"
	}
	p.setOpponents()

	p.broadcast(ctx, "ROUND_ANNOUNCEMENT", ruleRound, protocol.MethodNotifyRound, &protocol.RoundAnnouncement{
		Envelope: envelope(protocol.TypeRoundAnnouncement, p.managerSender(), p.conv("announce")),
		RoundID:  p.round,
		Matches: []protocol.MatchRef{{MatchID: p.tool.id, GameType: protocol.GameEvenOdd, PlayerAID: p.me,
			PlayerBID: p.opp, RefereeEndpoint: "http://localhost:8001/mcp"}},
	})
	p.invitation(ctx, "invitation by tool name", ruleInviteTool, protocol.MethodHandleGameInvitation, p.tool)
	p.invitation(ctx, "invitation by message type", ruleInviteType, string(protocol.TypeGameInvitation), p.typ)
	p.parity(ctx)
	p.twoMatches(ctx)
	p.gameOver(ctx)
	standings := []protocol.StandingRow{
		{Rank: 1, PlayerID: p.me, Played: 1, Wins: 1, Points: 3},
		{Rank: 2, PlayerID: p.opp, Played: 1, Losses: 1},
	}
	p.broadcast(ctx, "LEAGUE_STANDINGS_UPDATE", ruleStandings, protocol.MethodUpdateStandings, &protocol.LeagueStandingsUpdate{
		Envelope: envelope(protocol.TypeLeagueStandingsUpdate, p.managerSender(), p.conv("standings")),
		RoundID:  p.round, Standings: standings,
	})
	p.broadcast(ctx, "ROUND_COMPLETED", ruleRoundDone, protocol.MethodNotifyRoundCompleted, &protocol.RoundCompleted{
		Envelope: envelope(protocol.TypeRoundCompleted, p.managerSender(), p.conv("round-completed")),
		RoundID:  p.round, MatchesCompleted: 1, Summary: &protocol.RoundSummary{TotalMatches: 1, Wins: 1},
	})
	p.broadcast(ctx, "LEAGUE_COMPLETED", ruleLeagueDone, protocol.MethodNotifyLeagueComplete, &protocol.LeagueCompleted{
		Envelope:    envelope(protocol.TypeLeagueCompleted, p.managerSender(), p.conv("league-completed")),
		TotalRounds: 1, TotalMatches: 1,
		Champion:       &protocol.Champion{PlayerID: p.me, DisplayName: p.me, Points: 3},
		FinalStandings: standings,
	})
	p.conversationCheck()
	p.envelopeCheck()
	p.oldProtocol(ctx)
	p.malformed(ctx)
}

func (p *playerRun) setOpponents() {
	p.opp, p.opp2 = "P98", "P99"
	if p.me == p.opp || p.me == p.opp2 {
		p.opp, p.opp2 = "P96", "P97"
	}
}

func (p *playerRun) keep(r reply) {
	p.mu.Lock()
	p.replies = append(p.replies, r)
	p.mu.Unlock()
}

func (p *playerRun) invitationMsg(m match, opponent string) *protocol.GameInvitation {
	return &protocol.GameInvitation{
		Envelope:    envelope(protocol.TypeGameInvitation, p.refereeSender(), conversation(m.id)),
		RoundID:     m.round,
		MatchID:     m.id,
		GameType:    protocol.GameEvenOdd,
		RoleInMatch: protocol.PlayerA,
		OpponentID:  opponent,
	}
}

func (p *playerRun) parityMsg(m match, opponent string) *protocol.ChooseParityCall {
	return &protocol.ChooseParityCall{
		Envelope: envelope(protocol.TypeChooseParityCall, p.refereeSender(), conversation(m.id)),
		MatchID:  m.id,
		PlayerID: p.me,
		GameType: protocol.GameEvenOdd,
		Context:  &protocol.ParityContext{OpponentID: opponent, RoundID: m.round},
		Deadline: protocol.FormatTimestamp(time.Now().Add(p.opts.Timeout)),
	}
}

// joinProblem checks an answer to an invitation for matchID that names
// opponent; me is the player's id when known ("" before it has said one).
func joinProblem(x *exchange, matchID, me, opponent string) (problem string, ack *protocol.GameJoinAck) {
	if !x.ok() {
		return "not answered with a result: " + x.describe(), nil
	}
	ack = new(protocol.GameJoinAck)
	if err := x.decode(ack); err != nil {
		return "the answer is not a GAME_JOIN_ACK: " + err.Error(), nil
	}
	switch {
	case ack.MessageType != "" && protocol.Canonical(ack.MessageType) != protocol.TypeGameJoinAck:
		return fmt.Sprintf("answered %s, not GAME_JOIN_ACK", protocol.Clip(string(ack.MessageType))), ack
	case ack.Accept == nil && ack.Status == "":
		return "the GAME_JOIN_ACK says neither accept: true nor a status", ack
	case !ack.Accepted():
		return "the invitation was declined", ack
	case ack.MatchID != "" && ack.MatchID != matchID:
		return fmt.Sprintf("the GAME_JOIN_ACK is for match %q, not %q", protocol.Clip(ack.MatchID), matchID), ack
	case ack.PlayerID != "" && ack.PlayerID == opponent:
		return fmt.Sprintf("the GAME_JOIN_ACK accepts as player %q, the opponent the invitation named (a referee takes it for another player's answer: E013)",
			protocol.Clip(ack.PlayerID)), ack
	case ack.PlayerID != "" && me != "" && ack.PlayerID != me:
		return fmt.Sprintf("the GAME_JOIN_ACK accepts as player %q, but the player answered ping as %q (a referee takes it for another player's answer: E013)",
			protocol.Clip(ack.PlayerID), me), ack
	}
	return "", ack
}

// invitation invites the player to match m by method: its tool name,
// which a player that does not know it is asked again the other ways a
// league tries (the check still fails: the spec's peers call the method),
// or its message type, which is asked only as such.
func (p *playerRun) invitation(ctx context.Context, name, rule, method string, m match) {
	var x *exchange
	if method == string(protocol.TypeGameInvitation) {
		x = p.callDirect(ctx, method, p.invitationMsg(m, p.opp), p.opts.Timeout)
	} else {
		x = p.call(ctx, method, p.invitationMsg(m, p.opp), p.opts.Timeout)
	}
	p.keep(reply{what: "GAME_INVITATION (" + method + ")", conv: conversation(m.id), want: protocol.TypeGameJoinAck, x: x})
	me := ""
	if p.fromPing {
		me = p.me
	}
	problem, ack := joinProblem(x, m.id, me, p.opp)
	var g *grade
	if problem == "" && x.detour != "" {
		problem = method + " is not a method of this player: a peer that calls it so, as the spec does, gets -32601"
		g = &gradeInviteDetour
	}
	detail := ""
	if ack != nil {
		if _, err := protocol.ParseSender("player:" + ack.PlayerID); !p.fromPing && err == nil {
			p.me, p.fromPing = ack.PlayerID, true // the player's own name for itself, for the parity call
			p.setOpponents()
		}
		detail = fmt.Sprintf("accepted %s as %s in %s", m.id, orDash(ack.PlayerID), round(x.took))
	}
	p.resultGraded(name, rule, x, problem, detail, g)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// parityProblem checks an answer to a parity call for matchID to player
// me.
func parityProblem(x *exchange, matchID, me string, timeout time.Duration) (problem string, resp *protocol.ChooseParityResponse) {
	if !x.ok() {
		return "not answered with a result: " + x.describe(), nil
	}
	resp = new(protocol.ChooseParityResponse)
	if err := x.decode(resp); err != nil {
		return "the answer is not a CHOOSE_PARITY_RESPONSE: " + err.Error(), nil
	}
	switch {
	case resp.MessageType != "" && protocol.Canonical(resp.MessageType) != protocol.TypeChooseParityResponse:
		return fmt.Sprintf("answered %s, not CHOOSE_PARITY_RESPONSE", protocol.Clip(string(resp.MessageType))), resp
	case protocol.CheckParity(resp.ParityChoice) != nil:
		return "parity_choice " + protocol.CheckParity(resp.ParityChoice).Error(), resp
	case resp.MatchID != "" && resp.MatchID != matchID:
		return fmt.Sprintf("the choice is for match %q, not %q", protocol.Clip(resp.MatchID), matchID), resp
	case resp.PlayerID != "" && resp.PlayerID != me:
		return fmt.Sprintf("the choice is made as player %q, not %q, the call's player_id (a referee takes it for another player's answer: E013)",
			protocol.Clip(resp.PlayerID), me), resp
	case x.took > timeout:
		return fmt.Sprintf("answered after %s, past the %s deadline", round(x.took), timeout), resp
	}
	return "", resp
}

func (p *playerRun) parity(ctx context.Context) {
	x := p.call(ctx, protocol.MethodChooseParity, p.parityMsg(p.tool, p.opp), p.opts.Timeout)
	p.keep(reply{what: "CHOOSE_PARITY_CALL (choose_parity)", conv: conversation(p.tool.id), want: protocol.TypeChooseParityResponse, x: x})
	problem, resp := parityProblem(x, p.tool.id, p.me, p.opts.Timeout)
	detail := ""
	if problem == "" {
		p.choice = resp.ParityChoice
		detail = fmt.Sprintf("chose %q in %s (deadline %s)", resp.ParityChoice, round(x.took), p.opts.Timeout)
	}
	p.result("parity choice", ruleParity, x, problem, detail)
}

// twoMatches invites the player to two matches at once and asks for both
// choices at once; each answer must be its own match's. The choices
// themselves are the parity check's business.
func (p *playerRun) twoMatches(ctx context.Context) {
	ids := [2]string{p.two[0].id, p.two[1].id}
	opps := [2]string{p.opp, p.opp2}
	var joins, choices [2]*exchange
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			joins[i] = p.call(ctx, protocol.MethodHandleGameInvitation, p.invitationMsg(p.two[i], opps[i]), p.opts.Timeout)
		})
	}
	wg.Wait()
	for i := range ids {
		wg.Go(func() {
			choices[i] = p.call(ctx, protocol.MethodChooseParity, p.parityMsg(p.two[i], opps[i]), p.opts.Timeout)
		})
	}
	wg.Wait()
	problem := ""
	var shown *exchange
	for i, id := range ids {
		other := ids[1-i]
		for _, x := range []*exchange{joins[i], choices[i]} {
			if problem != "" {
				break
			}
			if problem = ownMatch(x, id, other); problem != "" {
				shown = x
			}
		}
		p.keep(reply{what: "GAME_INVITATION " + id, conv: conversation(id), want: protocol.TypeGameJoinAck, x: joins[i]})
		p.keep(reply{what: "CHOOSE_PARITY_CALL " + id, conv: conversation(id), want: protocol.TypeChooseParityResponse, x: choices[i]})
	}
	if shown == nil {
		shown = choices[0]
	}
	p.result("two matches at once", ruleConcurrent, shown, problem,
		fmt.Sprintf("invitations and parity calls of %s and %s sent at once; each answer was its own match's", ids[0], ids[1]))
}

// ownMatch checks that an answer in match id is not one of match other.
func ownMatch(x *exchange, id, other string) string {
	if !x.ok() {
		return fmt.Sprintf("%s: not answered with a result: %s", id, x.describe())
	}
	var r struct {
		MatchID        string `json:"match_id"`
		ConversationID string `json:"conversation_id"`
	}
	if err := x.decode(&r); err != nil {
		return fmt.Sprintf("%s: the answer does not decode: %s", id, err)
	}
	switch {
	case r.MatchID != "" && r.MatchID != id:
		return fmt.Sprintf("the answer in %s is for match %q", id, protocol.Clip(r.MatchID))
	case r.ConversationID == conversation(other):
		return fmt.Sprintf("the answer in %s is in %s's conversation", id, other)
	case r.MatchID == "" && r.ConversationID != conversation(id):
		return fmt.Sprintf("the answer in %s carries neither its match_id nor its conversation_id", id)
	}
	return ""
}

func (p *playerRun) gameOver(ctx context.Context) {
	gr := &protocol.GameResult{Status: protocol.ResultTechnicalLoss, WinnerPlayerID: ptr(p.opp),
		Choices: map[string]string{p.opp: protocol.Odd}, Reason: p.me + " gave no valid choice"}
	if p.choice != "" {
		// The player wins: the number has its parity.
		n := 8
		if p.choice == protocol.Odd {
			n = 7
		}
		gr = &protocol.GameResult{Status: protocol.ResultWin, WinnerPlayerID: ptr(p.me), DrawnNumber: &n,
			NumberParity: p.choice, Choices: map[string]string{p.me: p.choice, p.opp: other(p.choice)},
			Reason: fmt.Sprintf("%s chose %s, number was %d (%s)", p.me, p.choice, n, p.choice)}
	}
	p.broadcast(ctx, "GAME_OVER", ruleGameOver, protocol.MethodNotifyMatchResult, &protocol.GameOver{
		Envelope: envelope(protocol.TypeGameOver, p.refereeSender(), conversation(p.tool.id)),
		RoundID:  p.tool.round, MatchID: p.tool.id, GameType: protocol.GameEvenOdd, GameResult: gr,
	})
}

func other(parity string) string {
	if parity == protocol.Even {
		return protocol.Odd
	}
	return protocol.Even
}

// broadcast sends a message that expects no response; the check passes
// when it is answered with a result.
func (p *playerRun) broadcast(ctx context.Context, name, rule, method string, msg protocol.Message) {
	x := p.call(ctx, method, msg, p.opts.Timeout)
	p.keep(reply{what: string(msg.Type()) + " (" + method + ")", conv: msg.Env().ConversationID, x: x})
	problem := ""
	if !x.ok() {
		problem = "not answered with a result: " + x.describe()
	}
	p.result(name, rule, x, problem, fmt.Sprintf("%s answered in %s", method, round(x.took)))
}

// objectReplies are the replies whose result is an object: those the
// conversation and envelope checks can look at.
func (p *playerRun) objectReplies() []reply {
	var out []reply
	for _, r := range p.replies {
		if r.x.ok() && r.x.resp.Result.Kind() == '{' {
			out = append(out, r)
		}
	}
	return out
}

// nothingToLook is why the conversation and envelope checks are not run:
// no answer was a result object.
func (p *playerRun) nothingToLook() string {
	return fmt.Sprintf("none of the %d answers was a result object, so there was nothing to look at (the checks that sent them say why)", len(p.replies))
}

// conversationCheck: every answer that carries a conversation_id carries
// its request's. Without a result object to look at, it is not run.
func (p *playerRun) conversationCheck() {
	objects := p.objectReplies()
	if len(objects) == 0 {
		p.notRun(p.nothingToLook(), "conversation_id echoed")
		return
	}
	carried := 0
	for _, r := range objects {
		var e struct {
			ConversationID string `json:"conversation_id"`
		}
		if r.x.decode(&e) != nil || e.ConversationID == "" {
			continue
		}
		carried++
		if e.ConversationID != r.conv {
			p.result("conversation_id echoed", ruleConvID, r.x, fmt.Sprintf("the answer to %s is in conversation %q, not %q",
				r.what, protocol.Clip(e.ConversationID), r.conv), "")
			return
		}
	}
	detail := fmt.Sprintf("%d of %d answers carried conversation_id, each its request's", carried, len(objects))
	if carried == 0 {
		detail = fmt.Sprintf("none of the %d answers carried a conversation_id (allowed; the spec's examples leave it out)", len(objects))
	}
	p.result("conversation_id echoed", ruleConvID, nil, "", detail)
}

// envelopeCheck: every answer's envelope fields, where present, are valid
// and say it comes from the same player; typed answers hold their
// message's mandatory fields. parity_choice is the parity check's. Without
// a result object to look at, it is not run.
func (p *playerRun) envelopeCheck() {
	objects := p.objectReplies()
	if len(objects) == 0 {
		p.notRun(p.nothingToLook(), "reply envelope")
		return
	}
	senders := map[string]bool{}
	for _, r := range objects {
		problems, sender := replyProblems(r)
		if sender != "" {
			senders[sender] = true
		}
		if len(senders) > 1 {
			problems = append(problems, "the answers name more than one sender")
		}
		if len(problems) > 0 {
			p.result("reply envelope", ruleEnvelope, r.x, "the answer to "+r.what+": "+strings.Join(problems, "; "), "")
			return
		}
	}
	detail := fmt.Sprintf("%d answers checked", len(objects))
	for s := range senders {
		detail += ", all from " + s
	}
	p.result("reply envelope", ruleEnvelope, nil, "", detail)
}

// replyProblems lists what is wrong with one answer, and its sender.
func replyProblems(r reply) (problems []string, sender string) {
	var env *protocol.Envelope
	var err error
	if r.want != "" {
		m := protocol.New(r.want)
		if derr := r.x.decode(m); derr != nil {
			err = derr
		} else {
			err = protocol.ValidateBody(m)
		}
		env = m.Env()
	} else {
		env = new(protocol.Envelope)
		if derr := r.x.decode(env); derr != nil {
			err = derr
		} else {
			err = protocol.ValidateEnvelope(env)
		}
	}
	if pe, ok := errors.AsType[*protocol.Error](err); ok {
		for _, f := range pe.Fields {
			if f.Field != "parity_choice" {
				problems = append(problems, f.String())
			}
		}
	} else if err != nil {
		problems = append(problems, err.Error())
	}
	if env.Sender != "" {
		if s, perr := protocol.ParseSender(env.Sender); perr == nil {
			if s.Role != protocol.RolePlayer {
				problems = append(problems, fmt.Sprintf("sender is a %s, not player:<id>", s.Role))
			}
			sender = s.String()
		}
	}
	return problems, sender
}

// oldProtocol sends an invitation of league.v1.
func (p *playerRun) oldProtocol(ctx context.Context) {
	inv := p.invitationMsg(p.oldV1, p.opp)
	inv.Protocol = "league.v1"
	x := p.call(ctx, protocol.MethodHandleGameInvitation, inv, p.opts.Timeout)
	problem := ""
	switch {
	case x.err != nil:
		problem = "no JSON-RPC answer: " + x.describe()
	case x.resp.Error == nil:
		problem = "a league.v1 invitation was answered with a result, not refused"
	case x.resp.Error.LeagueCode() != protocol.ErrProtocolMismatch || x.resp.Error.Code != protocol.CodeInvalidRequest:
		problem = "refused with " + rpcText(x.resp.Error) + ", want -32600 with data.error_code E011"
	}
	p.result("league.v1 refused (E011)", ruleProtocol, x, problem, "refused with "+x.describe())
}

// malformed sends a body that is not JSON: a request cut short.
func (p *playerRun) malformed(ctx context.Context) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"handle_game_invitation","params":{"protocol":"league.v2","match_id":"R1M1"`)
	x := p.send(ctx, "a request cut short", body, []byte("null"), p.opts.Timeout)
	problem := ""
	switch {
	case x.err != nil:
		problem = "no JSON-RPC answer: " + x.describe()
	case x.resp.Error == nil:
		problem = "invalid JSON was answered with a result"
	case x.resp.Error.Code != protocol.CodeParseError:
		problem = "answered " + rpcText(x.resp.Error) + ", want -32700"
	case string(x.resp.ID) != "null":
		problem = fmt.Sprintf("the error's id is %s, want null", orDash(string(x.resp.ID)))
	}
	p.result("malformed JSON refused (-32700)", ruleParse, x, problem, "answered "+x.describe()+" with id null")
}
