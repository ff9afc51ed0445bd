package check

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/internal/rng"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// The referee check's players and their choices.
const (
	playerA, playerB = "P01", "P02"
	choiceA, choiceB = protocol.Even, protocol.Odd
	// checkSeed is the league seed whose match_seed the checker sends.
	checkSeed = 20250115
)

// Referee checks a referee agent at opts.Target: the checker serves a
// league manager (league_manager:LM01, or opts.ManagerID) and two players
// of its own, has the referee register with its manager (through the
// manual_register tool, or, for a referee without it, by asking the user
// on opts.Notice to start the referee with --manager and waiting
// opts.Wait), and hands it two matches of a round no earlier run has
// used: one played to the end, and one whose player B never answers.
//
// The error is ErrUnreachable, wrapped, when the referee answers neither
// ping nor GET /health (the report says so, every later check not run), or
// an error of the checker's own listeners; every other problem is a failed
// Check.
func Referee(ctx context.Context, opts Options) (*Report, error) {
	return run(ctx, "referee", opts, refereePlan(), func(c *checker) error {
		r, err := newRefereeRun(c)
		if err != nil {
			return err
		}
		c.pingCheck()
		c.healthCheck()
		if !r.register(ctx) {
			c.notRun("the referee did not register with the checker's manager", "START_MATCH accepted",
				"invitations", "parity calls", "result report", "GAME_OVER to both players", "technical loss for a timeout")
			return nil
		}
		r.playMatch(ctx)
		r.silentMatch(ctx)
		return nil
	})
}

// fakePlayer is one of the checker's players in a referee check.
type fakePlayer struct {
	id, choice string
	f          *fake
	invites    *inbox[invited]
	calls      *inbox[received[*protocol.ChooseParityCall]]
	overs      *inbox[received[*protocol.GameOver]]
	errs       *inbox[received[*protocol.GameError]]
}

// invited is an invitation a fake player got, and whether the other
// player's invitation to the same match had arrived before it answered.
type invited struct {
	received[*protocol.GameInvitation]
	together bool
}

type refereeRun struct {
	*checker
	mgr     *fake
	regs    *inbox[received[*protocol.RefereeRegisterRequest]]
	reports *inbox[received[*protocol.MatchResultReport]]
	a, b    *fakePlayer
	token   string // the token the checker's manager issues to the referee
	// played is played to the end; in silent, P02 never answers its
	// invitation. Both are of the run's first round.
	played, silent string

	mu       sync.Mutex
	refID    string                   // the id it assigned
	arrivals map[string]chan struct{} // per match: closed once both invitations arrived
	arrived  map[string]int
}

func newToken(role, id string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "tok_" + role + "_" + id + "_" + hex.EncodeToString(b[:])
}

func newRefereeRun(c *checker) (*refereeRun, error) {
	r := &refereeRun{checker: c,
		regs:    newInbox[received[*protocol.RefereeRegisterRequest]](),
		reports: newInbox[received[*protocol.MatchResultReport]](),
		token:   newToken("referee", "checked"),
		played:  c.matchID(0, 1), silent: c.matchID(0, 2),
		arrivals: map[string]chan struct{}{}, arrived: map[string]int{},
	}
	mux := transport.NewMux(c.opts.Logger)
	mux.HandleFunc(string(protocol.TypeRefereeRegisterRequest), r.onRegister)
	mux.HandleFunc(string(protocol.TypeMatchResultReport), r.onReport)
	var err error
	if r.mgr, err = c.serve("manager", mux); err != nil {
		return nil, err
	}
	if r.a, err = r.fakePlayer(playerA, choiceA); err != nil {
		return nil, err
	}
	if r.b, err = r.fakePlayer(playerB, choiceB); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *refereeRun) onRegister(_ context.Context, req *transport.Request) (any, error) {
	reg := keep(r.regs, req)
	r.mu.Lock()
	if r.refID == "" {
		r.refID = "REF01"
		if s, err := protocol.ParseSender(reg.Sender); err == nil && s.ID != "" && s.ID != "pending" {
			r.refID = s.ID // a requested id is kept
		}
	}
	id := r.refID
	r.mu.Unlock()
	e := envelope(protocol.TypeRefereeRegisterResponse, r.managerSender(), reg.ConversationID)
	e.AuthToken = r.token
	return &protocol.RefereeRegisterResponse{Envelope: e, Status: protocol.StatusAccepted, RefereeID: id}, nil
}

func (r *refereeRun) onReport(_ context.Context, req *transport.Request) (any, error) {
	rep := keep(r.reports, req)
	e := envelope(protocol.TypeMatchResultReportAck, r.managerSender(), rep.ConversationID)
	e.AuthToken = r.token
	return &protocol.MatchResultReportAck{Envelope: e, MatchID: rep.MatchID, Status: protocol.StatusAccepted}, nil
}

func (r *refereeRun) fakePlayer(id, choice string) (*fakePlayer, error) {
	p := &fakePlayer{id: id, choice: choice,
		invites: newInbox[invited](),
		calls:   newInbox[received[*protocol.ChooseParityCall]](),
		overs:   newInbox[received[*protocol.GameOver]](),
		errs:    newInbox[received[*protocol.GameError]](),
	}
	sender := "player:" + id
	mux := transport.NewMux(r.opts.Logger)
	mux.HandleFunc(string(protocol.TypeGameInvitation), func(ctx context.Context, req *transport.Request) (any, error) {
		inv := req.Msg.(*protocol.GameInvitation)
		together := r.rendezvous(ctx, inv.MatchID)
		p.invites.put(invited{received[*protocol.GameInvitation]{inv, append([]byte(nil), req.Params...)}, together})
		if id == playerB && inv.MatchID == r.silent {
			select {
			case <-ctx.Done():
			case <-r.stop:
			}
			return nil, protocol.Errorf(protocol.ErrTimeout, "the checker's player never answers this match")
		}
		e := envelope(protocol.TypeGameJoinAck, sender, inv.ConversationID)
		return &protocol.GameJoinAck{Envelope: e, MatchID: inv.MatchID, PlayerID: id, ArrivalTimestamp: e.Timestamp,
			Accept: ptr(true)}, nil
	})
	mux.HandleFunc(string(protocol.TypeChooseParityCall), func(_ context.Context, req *transport.Request) (any, error) {
		call := keep(p.calls, req)
		return &protocol.ChooseParityResponse{Envelope: envelope(protocol.TypeChooseParityResponse, sender, call.ConversationID),
			MatchID: call.MatchID, PlayerID: id, ParityChoice: choice}, nil
	})
	mux.HandleFunc(string(protocol.TypeGameOver), func(_ context.Context, req *transport.Request) (any, error) {
		keep(p.overs, req)
		return ack(sender, req), nil
	})
	mux.HandleFunc(string(protocol.TypeGameError), func(_ context.Context, req *transport.Request) (any, error) {
		keep(p.errs, req)
		return ack(sender, req), nil
	})
	var err error
	p.f, err = r.serve("player-"+id, mux)
	return p, err
}

// rendezvous holds an invitation's answer until the other player's
// invitation to the same match has arrived too, at most half the answer
// timeout: a referee that invites one player after the other's answer is
// seen, and still gets its answers in time.
func (r *refereeRun) rendezvous(ctx context.Context, matchID string) bool {
	r.mu.Lock()
	all, ok := r.arrivals[matchID]
	if !ok {
		all = make(chan struct{})
		r.arrivals[matchID] = all
	}
	r.arrived[matchID]++
	if r.arrived[matchID] == 2 {
		close(all)
	}
	r.mu.Unlock()
	t := time.NewTimer(r.opts.Timeout / 2)
	defer t.Stop()
	select {
	case <-all:
		return true
	case <-t.C:
	case <-ctx.Done():
	case <-r.stop:
	}
	return false
}

// register has the referee register with the checker's manager.
func (r *refereeRun) register(ctx context.Context) bool {
	x := r.call(ctx, protocol.MethodManualRegister, map[string]string{"manager_endpoint": r.mgr.ep}, r.opts.Timeout)
	wait, how := r.opts.Timeout, "through manual_register"
	if !x.ok() {
		fmt.Fprintf(r.opts.Notice, "check: the referee did not register through %s (%s)\n"+
			"check: start the referee with --manager %s ; waiting %s for its registration\n",
			protocol.MethodManualRegister, x.describe(), r.mgr.ep, r.opts.Wait)
		wait, how = r.opts.Wait, "after --manager "+r.mgr.ep
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	reg, ok := r.regs.find(wctx, func(received[*protocol.RefereeRegisterRequest]) bool { return true })
	if !ok {
		got, why := r.mgr.why()
		ch := Check{Name: "registration", Rule: ruleRegister, Sent: abbrev(x.sent), Got: got,
			Detail: fmt.Sprintf("no REFEREE_REGISTER_REQUEST reached the checker's manager within %s (manual_register: %s)%s",
				wait, x.describe(), why)}
		if got == "" {
			ch.Got = x.gotText()
		}
		r.add(ch)
		return false
	}
	problem := ""
	meta := reg.msg.RefereeMeta
	if !slices.Contains(meta.GameTypes, protocol.GameEvenOdd) {
		problem = "referee_meta.game_types does not list even_odd"
	}
	r.mu.Lock()
	id := r.refID
	r.mu.Unlock()
	r.add(Check{Name: "registration", Rule: ruleRegister, Passed: problem == "", Sent: abbrev(x.sent), Got: abbrev(reg.raw),
		Detail: firstOf(problem, fmt.Sprintf("registered %s as referee:%s, contact_endpoint %s, max_concurrent_matches %d",
			how, id, meta.ContactEndpoint, meta.MaxConcurrentMatches))})
	return true
}

func firstOf(problem, detail string) string {
	if problem != "" {
		return problem
	}
	return detail
}

// matchSeed is the match_seed the checker sends for a match, as our
// manager derives it.
func matchSeed(matchID string) uint64 { return rng.Derive(checkSeed, "match", matchID) }

// startMatch is START_MATCH as our manager sends it: both spellings of the
// players and their endpoints, the match seed, and the referee's token.
func (r *refereeRun) startMatch(matchID string) *protocol.StartMatch {
	e := envelope(protocol.TypeStartMatch, r.managerSender(), conversation(matchID))
	e.AuthToken = r.token
	seed := matchSeed(matchID)
	return &protocol.StartMatch{
		Envelope: e, MatchID: matchID, RoundID: r.round, GameType: protocol.GameEvenOdd,
		PlayerAID: playerA, PlayerBID: playerB, PlayerAEndpoint: r.a.f.ep, PlayerBEndpoint: r.b.f.ep,
		AltPlayerAID: playerA, AltPlayerBID: playerB, AltPlayerAEndpoint: r.a.f.ep, AltPlayerBEndpoint: r.b.f.ep,
		LeagueManagerEndpoint: r.mgr.ep, MatchSeed: &seed,
	}
}

// started sends START_MATCH in the background: a referee may answer it
// only when the match is over. The context it returns ends when the match
// may no longer be waited for: at MatchTimeout, or at once when START_MATCH
// is refused. wait returns START_MATCH's exchange.
func (r *refereeRun) started(ctx context.Context, matchID string) (context.Context, func() *exchange, func()) {
	matchCtx, cancelMatch := context.WithTimeout(ctx, r.opts.MatchTimeout)
	pctx, cancelPlay := context.WithCancel(matchCtx)
	var x *exchange
	done := make(chan struct{})
	r.wg.Go(func() {
		defer close(done)
		x = r.call(matchCtx, protocol.ToolName(protocol.TypeStartMatch), r.startMatch(matchID), r.opts.MatchTimeout)
		if startProblem(x) != "" {
			cancelPlay()
		}
	})
	return pctx, func() *exchange { <-done; return x }, func() { cancelPlay(); cancelMatch() }
}

func startProblem(x *exchange) string {
	if !x.ok() {
		return "START_MATCH not accepted: " + x.describe()
	}
	var a protocol.StartMatchAck
	if err := x.decode(&a); err == nil && a.Status == protocol.StatusRejected {
		return "START_MATCH rejected: " + orDash(a.Reason)
	}
	return ""
}

// playMatch hands the referee a match both players play.
func (r *refereeRun) playMatch(ctx context.Context) {
	mctx, startX, cancel := r.started(ctx, r.played)
	defer cancel()
	invA, okA := r.a.invites.find(mctx, func(v invited) bool { return v.msg.MatchID == r.played })
	invB, okB := r.b.invites.find(mctx, func(v invited) bool { return v.msg.MatchID == r.played })
	var callA, callB received[*protocol.ChooseParityCall]
	var okCallA, okCallB bool
	if okA && okB {
		callA, okCallA = r.a.calls.find(mctx, func(v received[*protocol.ChooseParityCall]) bool { return v.msg.MatchID == r.played })
		callB, okCallB = r.b.calls.find(mctx, func(v received[*protocol.ChooseParityCall]) bool { return v.msg.MatchID == r.played })
	}
	rep, okRep := r.reports.find(mctx, func(v received[*protocol.MatchResultReport]) bool { return v.msg.MatchID == r.played })
	// GAME_OVER may come after the report: it gets one answer timeout more.
	octx, ocancel := context.WithTimeout(ctx, r.opts.Timeout)
	overA, okOverA := r.a.overs.find(octx, func(v received[*protocol.GameOver]) bool { return v.msg.MatchID == r.played })
	overB, okOverB := r.b.overs.find(octx, func(v received[*protocol.GameOver]) bool { return v.msg.MatchID == r.played })
	ocancel()
	sx := startX()

	// START_MATCH.
	r.result("START_MATCH accepted", ruleStartMatch, sx, startProblem(sx), "START_MATCH "+r.played+" accepted")

	// Invitations.
	problem := ""
	switch {
	case !okA || !okB:
		missing := missingOf(okA)
		got, why := r.playerOf(missing).f.why()
		problem = fmt.Sprintf("no GAME_INVITATION for %s reached %s%s", r.played, missing, why)
		r.add(Check{Name: "invitations", Rule: ruleInvitations, Sent: abbrev(sx.sent), Got: got, Detail: problem})
	default:
		problem = firstOf(invitationProblem(invA.msg, protocol.PlayerA, playerB), invitationProblem(invB.msg, protocol.PlayerB, playerA))
		// The spec asks for both invitations, not for them at once (that
		// is DESIGN §5's, ours): one after the other is said, not failed.
		how := "at once"
		if !(invA.together && invB.together) {
			how = "one after the other (the spec allows it; inviting both at once halves the join time a match takes)"
		}
		r.add(Check{Name: "invitations", Rule: ruleInvitations, Passed: problem == "", Sent: abbrev(sx.sent),
			Got: abbrev(invA.raw), Detail: firstOf(problem, "both players invited to "+r.played+" "+how+", with their roles and opponents")})
	}

	// Parity calls.
	switch {
	case !okA || !okB:
		r.add(Check{Name: "parity calls", Rule: ruleParityCalls, Detail: "not run: the invitations did not arrive"})
	case !okCallA || !okCallB:
		missing := missingOf(okCallA)
		got, why := r.playerOf(missing).f.why()
		r.add(Check{Name: "parity calls", Rule: ruleParityCalls, Got: got,
			Detail: fmt.Sprintf("no CHOOSE_PARITY_CALL for %s reached %s after both accepted%s", r.played, missing, why)})
	default:
		problem := firstOf(callProblem(callA.msg, playerA), callProblem(callB.msg, playerB))
		r.add(Check{Name: "parity calls", Rule: ruleParityCalls, Passed: problem == "", Got: abbrev(callA.raw),
			Detail: firstOf(problem, fmt.Sprintf("both asked; %s chose %s, %s chose %s", playerA, choiceA, playerB, choiceB))})
	}

	// The report.
	var drawn *int
	if !okRep {
		got, why := r.mgr.why()
		r.add(Check{Name: "result report", Rule: ruleReport, Got: got,
			Detail: fmt.Sprintf("no MATCH_RESULT_REPORT for %s within %s%s", r.played, r.opts.MatchTimeout, why)})
	} else {
		var over *protocol.GameOver
		if okOverA {
			over = overA.msg
		}
		var problem, detail string
		problem, detail, drawn = r.reportProblem(rep.msg, over)
		var g *grade
		if problem == problemNoNumber {
			g = &gradeNoNumber
		}
		r.add(Check{Name: "result report", Rule: ruleReport, Passed: problem == "", Got: abbrev(rep.raw), Detail: firstOf(problem, detail), grade: g})
	}

	// GAME_OVER.
	switch {
	case !okOverA || !okOverB:
		missing := missingOf(okOverA)
		got, why := r.playerOf(missing).f.why()
		r.add(Check{Name: "GAME_OVER to both players", Rule: ruleGameOverBoth, Got: got,
			Detail: fmt.Sprintf("no GAME_OVER for %s reached %s%s", r.played, missing, why)})
	default:
		problem := firstOf(gameOverProblem(overA.msg, drawn), gameOverProblem(overB.msg, drawn))
		r.add(Check{Name: "GAME_OVER to both players", Rule: ruleGameOverBoth, Passed: problem == "", Got: abbrev(overA.raw),
			Detail: firstOf(problem, "both players told the result")})
	}
}

// missingOf is the player something did not reach, given whether it
// reached player A.
func missingOf(reachedA bool) string {
	if reachedA {
		return playerB
	}
	return playerA
}

func (r *refereeRun) playerOf(id string) *fakePlayer {
	if id == playerA {
		return r.a
	}
	return r.b
}

func invitationProblem(inv *protocol.GameInvitation, role, opponent string) string {
	switch {
	case inv.OpponentID != opponent:
		return fmt.Sprintf("the invitation's opponent_id is %q, want %q", protocol.Clip(inv.OpponentID), opponent)
	case inv.RoleInMatch != "" && inv.RoleInMatch != role:
		return fmt.Sprintf("the invitation's role_in_match is %q, want %q", inv.RoleInMatch, role)
	}
	return ""
}

func callProblem(call *protocol.ChooseParityCall, id string) string {
	if call.PlayerID != id {
		return fmt.Sprintf("the parity call to %s names player_id %q", id, protocol.Clip(call.PlayerID))
	}
	return ""
}

func parityOf(n int) string {
	if n%2 == 0 {
		return protocol.Even
	}
	return protocol.Odd
}

// reportProblem checks the report of the match both played: the
// referee's token and sender, the choices, and a winner that the drawn
// number it states (or GAME_OVER states) gives (implementation-guide
// §5.4.3). A foreign referee's number cannot be foreseen; ours follows
// match_seed, which the detail says.
func (r *refereeRun) reportProblem(rep *protocol.MatchResultReport, over *protocol.GameOver) (problem, detail string, drawn *int) {
	r.mu.Lock()
	refID := r.refID
	r.mu.Unlock()
	res := rep.Result
	if res.Details != nil {
		drawn = res.Details.DrawnNumber
	}
	if drawn == nil && over != nil {
		switch {
		case over.GameResult != nil:
			drawn = over.GameResult.DrawnNumber
		case over.Details != nil:
			drawn = over.Details.DrawnNumber
		}
	}
	if rep.AuthToken != r.token {
		return "the report does not carry the token the manager issued to the referee", "", drawn
	}
	if s, err := protocol.ParseSender(rep.Sender); rep.Sender != "" && (err != nil || s.ID != refID) {
		return fmt.Sprintf("the report's sender is %q, not referee:%s", protocol.Clip(rep.Sender), refID), "", drawn
	}
	if drawn == nil {
		return problemNoNumber, "", nil
	}
	n := *drawn
	winner, loser := playerA, playerB
	if parityOf(n) != choiceA {
		winner, loser = playerB, playerA
	}
	if res.Winner == nil || *res.Winner != winner {
		got := "none"
		if res.Winner != nil {
			got = protocol.Clip(*res.Winner)
		}
		return fmt.Sprintf("%s chose %s and %s %s, the number was %d (%s): the winner is %s, the report says %s",
			playerA, choiceA, playerB, choiceB, n, parityOf(n), winner, got), "", drawn
	}
	if res.Details != nil {
		for id, want := range map[string]string{playerA: choiceA, playerB: choiceB} {
			if c, ok := res.Details.Choices[id]; ok && c != want {
				return fmt.Sprintf("the report gives %s the choice %q; it chose %q", id, protocol.Clip(c), want), "", drawn
			}
		}
	}
	statusOf := map[string]string{playerA: res.PlayerAStatus, playerB: res.PlayerBStatus}
	if s := statusOf[winner]; s != "" && s != protocol.ResultWin {
		return fmt.Sprintf("the winner %s has status %s", winner, s), "", drawn
	}
	if s := statusOf[loser]; s != "" && s != protocol.ResultLoss {
		return fmt.Sprintf("the loser %s has status %s", loser, s), "", drawn
	}
	if w, l := points(res.Score[winner]), points(res.Score[loser]); w != nil && l != nil && *w <= *l {
		return fmt.Sprintf("the score gives the winner %s %g points and the loser %g", winner, *w, *l), "", drawn
	}
	seeded := "not the number match_seed gives: the referee draws its own"
	if n == rng.IntN(matchSeed(r.played), 10, "drawn_number")+1 {
		seeded = "the number match_seed gives"
	}
	return "", fmt.Sprintf("%s chose %s, %s chose %s, number %d (%s, %s): %s wins, as reported", playerA, choiceA,
		playerB, choiceB, n, parityOf(n), seeded, winner), drawn
}

// problemNoNumber is the report check's problem when the winner cannot be
// verified: the match's number is said nowhere.
const problemNoNumber = "neither the report nor GAME_OVER states the drawn number"

// points reads a score value that is a number.
func points(v any) *float64 {
	if f, ok := v.(float64); ok {
		return &f
	}
	return nil
}

// gameOverProblem checks a GAME_OVER of the match both played.
func gameOverProblem(g *protocol.GameOver, drawn *int) string {
	var winner *string
	var n *int
	switch {
	case g.GameResult != nil:
		winner, n = g.GameResult.WinnerPlayerID, g.GameResult.DrawnNumber
	default:
		winner = g.Winner
		if g.Details != nil {
			n = g.Details.DrawnNumber
		}
	}
	if drawn == nil {
		return ""
	}
	want := playerA
	if parityOf(*drawn) != choiceA {
		want = playerB
	}
	switch {
	case n != nil && *n != *drawn:
		return fmt.Sprintf("GAME_OVER says the number was %d, the report %d", *n, *drawn)
	case winner != nil && *winner != want:
		return fmt.Sprintf("GAME_OVER names the winner %q, want %s", protocol.Clip(*winner), want)
	}
	return ""
}

// silentMatch hands the referee a match whose player B never answers its
// invitation: B must get a technical loss and A the win.
func (r *refereeRun) silentMatch(ctx context.Context) {
	mctx, startX, cancel := r.started(ctx, r.silent)
	defer cancel()
	rep, ok := r.reports.find(mctx, func(v received[*protocol.MatchResultReport]) bool { return v.msg.MatchID == r.silent })
	cancel()
	sx := startX()
	if !ok {
		got, why := r.mgr.why()
		detail := fmt.Sprintf("no MATCH_RESULT_REPORT for %s within %s of START_MATCH%s", r.silent, r.opts.MatchTimeout, why)
		if p := startProblem(sx); p != "" {
			detail, got = p, sx.gotText()
		}
		r.add(Check{Name: "technical loss for a timeout", Rule: ruleTechnicalLoss, Sent: abbrev(sx.sent), Got: got, Detail: detail})
		return
	}
	res := rep.msg.Result
	problem := ""
	blamed := res.PlayerBStatus == protocol.ResultTechnicalLoss || res.MatchStatus == protocol.ResultTechnicalLoss
	if res.Details != nil {
		for _, tl := range res.Details.TechnicalLosses {
			blamed = blamed || tl.PlayerID == playerB
		}
	}
	var g *grade
	switch {
	case res.Winner == nil || *res.Winner != playerA:
		got := "none"
		if res.Winner != nil {
			got = protocol.Clip(*res.Winner)
		}
		problem = fmt.Sprintf("%s never answered: the winner is %s, the report says %s", playerB, playerA, got)
	case !blamed:
		problem = fmt.Sprintf("the report does not give %s a technical loss (player_b_status %q)", playerB, res.PlayerBStatus)
		g = &gradeRightWinner
	}
	detail := fmt.Sprintf("%s never answered the invitation: technical loss, %s wins", playerB, playerA)
	if ge, ok := r.b.errs.find(doneCtx(), func(received[*protocol.GameError]) bool { return true }); ok {
		detail += fmt.Sprintf("; GAME_ERROR %s to %s", ge.msg.ErrorCode, playerB)
	}
	r.add(Check{Name: "technical loss for a timeout", Rule: ruleTechnicalLoss, Passed: problem == "", Sent: abbrev(sx.sent),
		Got: abbrev(rep.raw), Detail: firstOf(problem, detail), grade: g})
}

// doneCtx is a context that has ended: find with it looks without waiting.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
