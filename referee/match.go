package referee

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaguectl/leaguectl/internal/rng"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// Match states.
const (
	statePending   = "PENDING"
	stateInviting  = "INVITING"
	stateChoosing  = "CHOOSING"
	stateReporting = "REPORTING"
	stateDone      = "DONE"
	// stateAbandoned: the referee stopped (Run's context ended) before the
	// match was decided; it reports nothing and blames nobody, and the
	// manager hands the match to another referee.
	stateAbandoned = "ABANDONED"
)

// side is one player of a match.
type side struct {
	id, endpoint, role string
	// ticket is the match ticket START_MATCH gave for the player, shown
	// it on every message of the match; "" when none was given.
	ticket string
	choice string
	fail   *failure
}

// failure is why a player gets a technical loss.
type failure struct {
	code     protocol.Code
	action   string // the answer that was expected
	reason   string
	attempts int // calls made, retries included
}

type match struct {
	id, conversation string
	round            int
	seed             uint64
	a, b             side
	// Guarded by the referee's mutex.
	state  string
	result *protocol.MatchResult
}

func newMatch(sm *protocol.StartMatch, seed uint64) *match {
	if sm.MatchSeed != nil {
		seed = *sm.MatchSeed
	} else {
		seed = rng.Derive(seed, "match", sm.MatchID)
	}
	conv := sm.ConversationID
	if conv == "" {
		conv = "conv-" + sm.MatchID
	}
	return &match{
		id: sm.MatchID, conversation: conv, round: sm.RoundID, seed: seed,
		a:     side{id: sm.PlayerA(), endpoint: sm.EndpointA(), role: protocol.PlayerA, ticket: sm.PlayerATicket},
		b:     side{id: sm.PlayerB(), endpoint: sm.EndpointB(), role: protocol.PlayerB, ticket: sm.PlayerBTicket},
		state: statePending,
	}
}

func (m *match) finished() bool { return m.state == stateDone }

func (m *match) snapshot() MatchState {
	return MatchState{MatchID: m.id, RoundID: m.round, PlayerA: m.a.id, PlayerB: m.b.id, State: m.state, Result: m.result}
}

func (r *Referee) setState(m *match, s string) {
	r.mu.Lock()
	m.state = s
	r.mu.Unlock()
}

// play runs one match from invitations to an acknowledged report.
func (r *Referee) play(life *lifetime, m *match) {
	ctx := life.ctx
	pair := newPartner()
	defer pair.stop()
	r.setState(m, stateInviting)
	pair.bothWithin(ctx, r.opts.JoinTimeout, func(ctx context.Context) { r.invite(ctx, m, &m.a, &m.b) },
		func(ctx context.Context) { r.invite(ctx, m, &m.b, &m.a) })
	if ctx.Err() != nil {
		r.abandon(ctx, m)
		return
	}
	if m.a.fail == nil && m.b.fail == nil {
		r.setState(m, stateChoosing)
		pair.bothWithin(ctx, r.opts.ChoiceTimeout, func(ctx context.Context) { r.askParity(ctx, m, &m.a, &m.b) },
			func(ctx context.Context) { r.askParity(ctx, m, &m.b, &m.a) })
		if ctx.Err() != nil {
			r.abandon(ctx, m)
			return
		}
	}
	result := r.decide(m)
	for _, s := range []*side{&m.a, &m.b} {
		if s.fail != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "technical loss", slog.String("match_id", m.id),
				slog.String("conversation_id", m.conversation), slog.String("player_id", s.id),
				slog.String("error_code", string(s.fail.code)), slog.String("reason", s.fail.reason))
		}
	}
	// The slot frees once the match is decided: the manager frees its own
	// view of it when it counts the report, which is before the report
	// call returns here, and may hand this referee a new match at once.
	r.mu.Lock()
	m.result, m.state = result, stateReporting
	r.active--
	r.mu.Unlock()
	// Both players are told at once, each a GAME_OVER within a call
	// timeout from now. The report goes once both have answered, or after
	// GameOverGrace if one has not yet: a player slow to acknowledge its
	// result delays no one else's round.
	told, cancel := context.WithTimeout(ctx, r.callTimeout())
	defer cancel()
	overA := r.gameOver(m, result)
	overB := overA
	if m.b.ticket != m.a.ticket {
		// Each player's own ticket: a copy of the top level for B.
		c := *overA
		r.mu.Lock()
		c.AuthToken = r.shownToLocked(&m.b)
		r.mu.Unlock()
		overB = &c
	}
	//
	// The one told second reports, unless the grace's timer, armed as the
	// GAME_OVERs go, fired first: then the report went from there,
	// whichever player, or both, are slow (this goroutine, inside A's
	// call, could not notice). A timer a match, not a select on a deadline
	// shared by the matches: a hundred matches waiting on one channel
	// contend for its lock.
	var pending atomic.Int32
	pending.Store(2)
	var reports sync.WaitGroup // the report, made by the timer or the second told
	reports.Add(1)
	grace := time.AfterFunc(r.gameOverGrace(), func() {
		r.log.LogAttrs(ctx, slog.LevelInfo, "reporting before every GAME_OVER was answered", slog.String("match_id", m.id))
		r.report(life, m)
		reports.Done()
	})
	toldOne := func() {
		if pending.Add(-1) == 0 && grace.Stop() {
			r.report(life, m)
			reports.Done()
		}
	}
	pair.both(func() { r.notifyEnd(ctx, told, m, &m.a, overA); toldOne() },
		func() { r.notifyEnd(ctx, told, m, &m.b, overB); toldOne() })
	reports.Wait()
}

// gameOverGrace is GameOverGrace, at most a call timeout.
func (r *Referee) gameOverGrace() time.Duration { return min(GameOverGrace, r.callTimeout()) }

// abandon gives up a match because the referee is stopping: the calls of
// the phase failed because of that, not because of the players, so nobody
// gets a technical loss and nothing is reported (a report could not be
// sent anyway).
func (r *Referee) abandon(ctx context.Context, m *match) {
	r.mu.Lock()
	m.state = stateAbandoned
	r.active--
	r.mu.Unlock()
	r.log.LogAttrs(ctx, slog.LevelWarn, "match abandoned: the referee is stopping", slog.String("match_id", m.id))
}

// partner is a match's second goroutine. A match talks to its two
// players at once, phase after phase (invitations, parity calls, the
// result): to one on the match's own goroutine, to the other on its
// partner, one goroutine for the whole match rather than one a phase.
type partner chan func()

func newPartner() partner {
	p := make(partner)
	go func() {
		for f := range p {
			f()
		}
	}()
	return p
}

// stop ends the partner's goroutine once it is done with what it runs.
func (p partner) stop() { close(p) }

// both runs f here and g on the partner, and waits for both.
func (p partner) both(f, g func()) {
	done := make(chan struct{})
	p <- func() { defer close(done); g() }
	f()
	<-done
}

// bothWithin runs f and g at once, with one context of timeout d from
// now, and waits for both: the two players of a phase share one deadline.
func (p partner) bothWithin(ctx context.Context, d time.Duration, f, g func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	p.both(func() { f(ctx) }, func() { g(ctx) })
}

// invite sends the invitation, within the join timeout of ctx, and records
// a failure to join.
func (r *Referee) invite(ctx context.Context, m *match, s, opp *side) {
	inv := &protocol.GameInvitation{
		Envelope:    r.playerEnvelope(s, protocol.TypeGameInvitation, m.conversation),
		RoundID:     m.round,
		MatchID:     m.id,
		GameType:    protocol.GameEvenOdd,
		RoleInMatch: s.role,
		OpponentID:  opp.id,
	}
	var ack protocol.GameJoinAck
	err := r.caller.Call(ctx, s.endpoint, protocol.MethodHandleGameInvitation, inv, &ack)
	switch {
	case err != nil:
		s.fail = callFailure(err, protocol.TypeGameJoinAck)
	case ack.Accept == nil && ack.Status == "":
		// Neither yes nor no: not a GAME_JOIN_ACK ({} or null).
		s.fail = &failure{protocol.ErrInvalidMessageFormat, string(protocol.TypeGameJoinAck),
			"the answer to the invitation says neither accept nor a status", 1}
	case !ack.Accepted():
		s.fail = &failure{protocol.ErrPlayerNotAvailable, string(protocol.TypeGameJoinAck), "declined the invitation", 1}
	default:
		s.fail = mismatch(m, s, ack.MatchID, ack.ConversationID, ack.PlayerID, protocol.TypeGameJoinAck)
	}
}

// askParity asks for a choice, within the choice timeout of ctx, and
// records it, or a failure.
func (r *Referee) askParity(ctx context.Context, m *match, s, opp *side) {
	deadline := r.clock().Add(r.opts.ChoiceTimeout)
	call := &protocol.ChooseParityCall{
		Envelope: r.playerEnvelope(s, protocol.TypeChooseParityCall, m.conversation),
		MatchID:  m.id,
		PlayerID: s.id,
		GameType: protocol.GameEvenOdd,
		Context:  &protocol.ParityContext{OpponentID: opp.id, RoundID: m.round},
		Deadline: protocol.FormatTimestamp(deadline),
	}
	var resp protocol.ChooseParityResponse
	err := r.caller.Call(ctx, s.endpoint, protocol.MethodChooseParity, call, &resp)
	if err != nil {
		s.fail = callFailure(err, protocol.TypeChooseParityResponse)
		return
	}
	if f := mismatch(m, s, resp.MatchID, resp.ConversationID, resp.PlayerID, protocol.TypeChooseParityResponse); f != nil {
		s.fail = f
		return
	}
	if err := protocol.CheckParity(resp.ParityChoice); err != nil {
		s.fail = &failure{protocol.ErrInvalidMove, string(protocol.TypeChooseParityResponse), "parity_choice " + err.Error(), 1}
		return
	}
	s.choice = resp.ParityChoice
}

// callFailure classifies a failed call to a player.
func callFailure(err error, expected protocol.MessageType) *failure {
	code := protocol.ErrPlayerNotAvailable
	if e, ok := errors.AsType[*transport.Error](err); ok {
		switch e.Kind {
		case transport.KindTimeout:
			code = protocol.ErrTimeout
		case transport.KindBadResponse:
			code = protocol.ErrInvalidMessageFormat
			if c := protocol.CodeOf(e.Err); c != "" {
				code = c
			}
		case transport.KindBadEndpoint:
			// An endpoint that cannot work: a malformed URL, a host name
			// that does not resolve (error-codes.md's E018 example).
			code = protocol.ErrInvalidEndpoint
		case transport.KindOpen:
			// The player failed too often of late: its breaker is open and
			// it is not called at all (error-codes.md §5.2).
			code = protocol.ErrServiceUnavailable
		case transport.KindStatus:
			// An HTTP error status without a JSON-RPC answer: what the
			// status says (500 E015, 503 E016, 404 E018, …).
			if c := protocol.CodeOf(err); c != "" {
				code = c
			}
		case transport.KindRemote:
			// JSON-RPC's own internal error is the player's server failing:
			// E015. Any other JSON-RPC error is a refusal to answer: E006;
			// its league code is the player's own numbering, information
			// only (DESIGN §4), and stays in the reason.
			if e.RPC != nil && e.RPC.Code == protocol.CodeInternalError {
				code = protocol.ErrInternal
			}
		}
	} else if errors.Is(err, context.DeadlineExceeded) {
		code = protocol.ErrTimeout
	}
	f := &failure{code: code, action: string(expected), reason: err.Error(), attempts: 1}
	if e, ok := errors.AsType[*transport.Error](err); ok && e.Attempts > 0 {
		f.attempts = e.Attempts
	}
	return f
}

// mismatch reports an answer for another match, conversation or player.
// Absent fields are not held against the player: other implementations
// leave some of them out. Nor are the envelope's sender and message_type:
// the endpoint that was called answered, and a dialect-b player signs its
// answers with the name it gives itself, which need not be the id the
// manager gave it (interop's TestMixedDialectsLeague).
func mismatch(m *match, s *side, matchID, conversation, playerID string, expected protocol.MessageType) *failure {
	switch {
	case matchID != "" && matchID != m.id:
		return &failure{protocol.ErrConversationMismatch, string(expected),
			fmt.Sprintf("answered for match %q instead of %q", protocol.Clip(matchID), m.id), 1}
	case conversation != "" && conversation != m.conversation:
		return &failure{protocol.ErrConversationMismatch, string(expected),
			fmt.Sprintf("answered in conversation %q instead of %q", protocol.Clip(conversation), m.conversation), 1}
	case playerID != "" && playerID != s.id:
		return &failure{protocol.ErrConversationMismatch, string(expected),
			fmt.Sprintf("answered as player %q instead of %q", protocol.Clip(playerID), s.id), 1}
	}
	return nil
}

// decide applies the even/odd rule (implementation-guide §5.4.3), or the
// technical losses.
func (r *Referee) decide(m *match) *protocol.MatchResult {
	sc := r.opts.Scoring
	res := &protocol.MatchResult{Details: &protocol.ResultDetails{Choices: map[string]string{}}}
	for _, s := range []*side{&m.a, &m.b} {
		if s.choice != "" {
			res.Details.Choices[s.id] = s.choice
		}
		if s.fail != nil {
			res.Details.TechnicalLosses = append(res.Details.TechnicalLosses, protocol.TechnicalLoss{
				PlayerID: s.id, ErrorCode: s.fail.code, Action: s.fail.action, Reason: s.fail.reason})
		}
	}
	set := func(winner *side, statusA, statusB string, pointsA, pointsB int, outcome, reason string) {
		if winner != nil {
			res.Winner = &winner.id
		}
		res.PlayerAStatus, res.PlayerBStatus = statusA, statusB
		// float64, as JSON numbers decode into any: a manager in this
		// process reads the same values as one that decoded them.
		res.Score = map[string]any{m.a.id: float64(pointsA), m.b.id: float64(pointsB)}
		res.Details.Outcome, res.Details.Reason = outcome, reason
	}
	switch {
	case m.a.fail != nil && m.b.fail != nil:
		res.MatchStatus = protocol.ResultTechnicalLoss
		set(nil, protocol.ResultTechnicalLoss, protocol.ResultTechnicalLoss, sc.Loss, sc.Loss, "BOTH_TECHNICAL_LOSS",
			fmt.Sprintf("both players failed: %s %s, %s %s", m.a.id, m.a.fail.code, m.b.id, m.b.fail.code))
	case m.a.fail != nil:
		res.MatchStatus = protocol.ResultTechnicalLoss
		set(&m.b, protocol.ResultTechnicalLoss, protocol.ResultWin, sc.Loss, sc.Win, "PLAYER_B_WIN",
			fmt.Sprintf("%s failed (%s %s)", m.a.id, m.a.fail.code, m.a.fail.code.Name()))
	case m.b.fail != nil:
		res.MatchStatus = protocol.ResultTechnicalLoss
		set(&m.a, protocol.ResultWin, protocol.ResultTechnicalLoss, sc.Win, sc.Loss, "PLAYER_A_WIN",
			fmt.Sprintf("%s failed (%s %s)", m.b.id, m.b.fail.code, m.b.fail.code.Name()))
	default:
		n := rng.IntN(m.seed, 10, "drawn_number") + 1
		parity := protocol.Odd
		if n%2 == 0 {
			parity = protocol.Even
		}
		res.MatchStatus = "COMPLETED"
		res.Details.DrawnNumber, res.Details.Parity = &n, parity
		aRight, bRight := m.a.choice == parity, m.b.choice == parity
		// fmt.Sprintf("%s chose %s, %s chose %s, number was %d (%s)", …), in one allocation.
		why := m.a.id + " chose " + m.a.choice + ", " + m.b.id + " chose " + m.b.choice +
			", number was " + strconv.Itoa(n) + " (" + parity + ")"
		switch {
		case aRight && !bRight:
			set(&m.a, protocol.ResultWin, protocol.ResultLoss, sc.Win, sc.Loss, "PLAYER_A_WIN", why)
		case bRight && !aRight:
			set(&m.b, protocol.ResultLoss, protocol.ResultWin, sc.Loss, sc.Win, "PLAYER_B_WIN", why)
		default:
			set(nil, protocol.ResultDraw, protocol.ResultDraw, sc.Draw, sc.Draw, "DRAW", why)
		}
	}
	return res
}

// gameOver is the GAME_OVER of m, with player A's ticket: the same message
// for both players, who only read it, but for the ticket.
func (r *Referee) gameOver(m *match, res *protocol.MatchResult) *protocol.GameOver {
	status := protocol.ResultWin
	switch {
	case res.MatchStatus == protocol.ResultTechnicalLoss:
		status = protocol.ResultTechnicalLoss
	case res.Winner == nil:
		status = protocol.ResultDraw
	}
	over := &protocol.GameOver{
		Envelope: r.playerEnvelope(&m.a, protocol.TypeGameOver, m.conversation),
		RoundID:  m.round,
		MatchID:  m.id,
		GameType: protocol.GameEvenOdd,
		GameResult: &protocol.GameResult{
			Status:         status,
			WinnerPlayerID: res.Winner,
			DrawnNumber:    res.Details.DrawnNumber,
			NumberParity:   res.Details.Parity,
			Choices:        res.Details.Choices,
		},
		Reason: res.Details.Reason, // beside game_result: message-structures §4.6.1
	}
	return over
}

// notifyEnd sends GAME_ERROR to a player that failed, then GAME_OVER
// (over). Neither changes the result; a player that cannot be told is
// logged. A player that did not fail is sent GAME_OVER within told, whose
// deadline is a call timeout. One that failed is sent each message within
// a call timeout of its own (from ctx), and one that did not answer at all
// gets a short deadline, so that telling it does not cost a second full
// timeout.
func (r *Referee) notifyEnd(ctx, told context.Context, m *match, s *side, over any) {
	var patience time.Duration // 0: told's deadline
	if s.fail != nil {
		patience = r.callTimeout()
		if s.fail.code == protocol.ErrPlayerNotAvailable || s.fail.code == protocol.ErrTimeout {
			patience = min(patience, time.Second)
		}
		told = ctx
		r.tell(told, patience, s.endpoint, protocol.MethodNotifyGameError, &protocol.GameError{
			Envelope:         r.playerEnvelope(s, protocol.TypeGameError, m.conversation),
			MatchID:          m.id,
			ErrorCode:        s.fail.code,
			ErrorDescription: s.fail.code.Name(),
			AffectedPlayer:   s.id,
			ActionRequired:   s.fail.action,
			RetryInfo:        &protocol.RetryInfo{RetryCount: max(s.fail.attempts-1, 0), MaxRetries: max(r.opts.Retry.MaxRetries, 0)},
			Consequence:      "Technical loss awarded to " + s.id,
			Context:          map[string]any{"reason": s.fail.reason},
		})
	}
	r.tell(told, patience, s.endpoint, protocol.MethodNotifyMatchResult, over)
}

// tell sends a message whose reply is only an acknowledgement, within
// patience from now (0: within ctx's deadline).
func (r *Referee) tell(ctx context.Context, patience time.Duration, endpoint, method string, msg any) {
	if patience > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, patience)
		defer cancel()
	}
	if err := r.caller.Call(ctx, endpoint, method, msg, nil); err != nil {
		r.log.LogAttrs(ctx, slog.LevelInfo, "player not told", slog.String("method", method), slog.String("error", err.Error()))
	}
}

// report sends the result to the manager until it is acknowledged, the
// manager refuses it for good, or ctx ends.
func (r *Referee) report(life *lifetime, m *match) {
	ctx := life.ctx
	r.mu.Lock()
	res := m.result
	r.mu.Unlock()
	rep := &protocol.MatchResultReport{
		Envelope: r.envelope(protocol.TypeMatchResultReport, m.conversation),
		RoundID:  m.round,
		MatchID:  m.id,
		GameType: protocol.GameEvenOdd,
		Result:   res,
	}
	retry := r.opts.Retry.Forever()
	retry.MaxElapsed = 0
	err := retry.Do(ctx, func(context.Context) error {
		var ack protocol.MatchResultReportAck
		to := r.managerEndpoint()
		err := r.callWithin(ctx, to, protocol.MethodReportMatchResult, rep, &ack)
		if moved := r.movedManager(to, err); moved != "" {
			merr := r.callWithin(ctx, moved, protocol.MethodReportMatchResult, rep, &ack)
			if merr == nil && ack.Status != protocol.StatusRejected && (ack.MatchID == "" || ack.MatchID == m.id) {
				r.adoptManager(to, moved)
				return nil
			}
			r.log.LogAttrs(ctx, slog.LevelInfo, "result report to the endpoint START_MATCH names failed too", slog.String("match_id", m.id),
				slog.String("endpoint", moved), slog.Any("error", merr), slog.String("status", ack.Status))
		}
		return err
	}, func(err error, next time.Duration) {
		r.log.LogAttrs(ctx, slog.LevelInfo, "result report failed, retrying", slog.String("match_id", m.id),
			slog.String("error", err.Error()), slog.Duration("next", next))
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// The referee is stopping: at the end of a league in one process,
		// the manager may have counted the report and ended the league
		// before its acknowledgement got back. Not an error of the league.
		r.log.LogAttrs(ctx, slog.LevelInfo, "result report given up: the referee is stopping", slog.String("match_id", m.id),
			slog.String("error", err.Error()))
	default:
		r.log.LogAttrs(ctx, slog.LevelError, "result not reported", slog.String("match_id", m.id), slog.String("error", err.Error()))
	}
	r.finish(m)
}

// movedManager is where else to report after a report to the manager at
// to failed with err: the endpoint that the START_MATCH last signed with
// the token of the referee's present registration named, when it is
// another and to did not answer at all (down, hung, or its host gone). A
// manager restarted on its store at another address, or on another
// machine, so gets the reports of the referees that registered with it
// before; a manager that answers, even with a refusal, is never left. A
// loopback endpoint is taken only from a manager on loopback: said by a
// manager on another host, it names a server on the referee's own, which
// must not be sent the token. "" when there is nowhere else.
func (r *Referee) movedManager(to string, err error) string {
	e, ok := errors.AsType[*transport.Error](err)
	if !ok || (e.Kind != transport.KindUnreachable && e.Kind != transport.KindTimeout &&
		e.Kind != transport.KindOpen && e.Kind != transport.KindBadEndpoint) {
		return ""
	}
	r.mu.Lock()
	moved := r.announced
	r.mu.Unlock()
	if moved == to || (isLoopback(moved) && !isLoopback(to)) {
		return ""
	}
	return moved
}

// isLoopback reports whether endpoint's host is a loopback address or
// localhost (a mem:// endpoint is not: the bus has no hosts).
func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if h := strings.ToLower(u.Hostname()); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(u.Hostname())
	return err == nil && ip.IsLoopback()
}

// adoptManager makes moved, which took a report when the manager at was
// did not answer, the referee's manager.
func (r *Referee) adoptManager(was, moved string) {
	r.mu.Lock()
	changed := r.manager == was
	if changed {
		r.manager = moved
	}
	r.mu.Unlock()
	if changed {
		r.log.LogAttrs(context.Background(), slog.LevelWarn, "the manager moved: reports go to the endpoint its START_MATCH names",
			slog.String("was", was), slog.String("now", moved))
	}
}

// finish marks m done and forgets the oldest finished match beyond
// KeepFinished.
func (r *Referee) finish(m *match) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.state == stateDone {
		return // a report sent again
	}
	m.state = stateDone
	r.finished = append(r.finished, m.id)
	if len(r.finished) > r.opts.KeepFinished {
		delete(r.matches, r.finished[0])
		r.finished[0] = ""
		r.finished = r.finished[1:]
	}
}

// callWithin makes a call within a call timeout from now.
func (r *Referee) callWithin(ctx context.Context, endpoint, method string, params, reply any) error {
	ctx, cancel := context.WithTimeout(ctx, r.callTimeout())
	defer cancel()
	return r.caller.Call(ctx, endpoint, method, params, reply)
}
