package check

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// The ids the manager check asks for: mgrRefereeID unless
// Options.RefereeID says another.
const (
	mgrRefereeID = "CHKREF"
	mgrPlayerID  = "CHKP1"
	mgrStranger  = "CHKNOBODY"
)

// Manager checks a league manager at opts.Target. It registers a referee
// (asking for the id CHKREF, or opts.RefereeID) and two players of its
// own (served on the checker's listeners), checks registration and
// authentication, then starts the league with start_league
// (opts.AdminToken, if set) and plays it: its referee reports player A
// winning the one match. The manager thus runs a small league of the
// checker's agents: check a fresh manager, not one holding a real league.
//
// The error is ErrUnreachable, wrapped, when the manager answers neither
// ping nor GET /health (the report says so, every later check not run), or
// an error of the checker's own listeners; every other problem is a failed
// Check.
func Manager(ctx context.Context, opts Options) (*Report, error) {
	refID := cmp.Or(opts.RefereeID, mgrRefereeID)
	return run(ctx, "manager", opts, managerPlan(), func(c *checker) error {
		m, err := newManagerRun(c)
		if err != nil {
			return err
		}
		m.refID = refID
		c.pingCheck()
		c.healthCheck()
		m.run(ctx)
		return nil
	})
}

// fakeAgent is a referee or player of the manager check: it keeps every
// message and acknowledges it (START_MATCH with START_MATCH_ACK).
type fakeAgent struct {
	f      *fake
	got    *inbox[received[protocol.Message]]
	name   string // in a report: "the referee", "the first player"
	id     string // assigned at registration
	token  string
	sender func() string
}

type managerRun struct {
	*checker
	ref, p1, p2 *fakeAgent
	refID       string // the id the referee asks for
	leagueID    string // the manager's, from its registration answers
}

func newManagerRun(c *checker) (*managerRun, error) {
	m := &managerRun{checker: c}
	var err error
	if m.ref, err = m.fakeAgent("referee", "the referee", protocol.RoleReferee); err != nil {
		return nil, err
	}
	if m.p1, err = m.fakeAgent("player-1", "the first player", protocol.RolePlayer); err != nil {
		return nil, err
	}
	if m.p2, err = m.fakeAgent("player-2", "the second player", protocol.RolePlayer); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *managerRun) fakeAgent(name, shown string, role protocol.Role) (*fakeAgent, error) {
	a := &fakeAgent{name: shown, got: newInbox[received[protocol.Message]]()}
	a.sender = func() string { return string(role) + ":" + orDash(a.id) }
	mux := transport.NewMux(m.opts.Logger)
	take := func(_ context.Context, r *transport.Request) (any, error) {
		msg := keep(a.got, r)
		if sm, ok := msg.(*protocol.StartMatch); ok {
			return &protocol.StartMatchAck{Envelope: envelope(protocol.TypeStartMatchAck, a.sender(), sm.ConversationID),
				MatchID: sm.MatchID, Status: protocol.StatusAccepted}, nil
		}
		return ack(a.sender(), r), nil
	}
	types := []protocol.MessageType{protocol.TypeLeagueCompleted}
	if role == protocol.RoleReferee {
		types = append(types, protocol.TypeStartMatch)
	} else {
		types = append(types, protocol.TypeRoundAnnouncement, protocol.TypeLeagueStandingsUpdate, protocol.TypeRoundCompleted,
			protocol.TypeGameInvitation, protocol.TypeChooseParityCall, protocol.TypeGameOver, protocol.TypeGameError)
	}
	for _, t := range types {
		mux.HandleFunc(string(t), take)
	}
	var err error
	a.f, err = m.serve(name, mux)
	return a, err
}

// env is an envelope of the manager check: in the manager's league once
// known (a manager refuses another league's registrations, E008).
func (m *managerRun) env(t protocol.MessageType, sender, conv, token string) protocol.Envelope {
	e := envelope(t, sender, conv)
	e.LeagueID, e.AuthToken = m.leagueID, token
	return e
}

func (m *managerRun) run(ctx context.Context) {
	m.registrations(ctx)
	m.refusals(ctx)
	var missing []string
	for _, a := range []*fakeAgent{m.ref, m.p1, m.p2} {
		if a.token == "" {
			missing = append(missing, a.name)
		}
	}
	if len(missing) > 0 {
		m.notRun(strings.Join(missing, " and ")+" of the checker did not register", "start_league", "START_MATCH to the referee",
			"report acknowledged", "standings after the result", "duplicate report not counted twice", "round broadcasts to players",
			"LEAGUE_COMPLETED to everyone")
		return
	}
	if !m.startLeague(ctx) {
		m.notRun("the league did not start", "START_MATCH to the referee", "report acknowledged", "standings after the result",
			"duplicate report not counted twice", "round broadcasts to players", "LEAGUE_COMPLETED to everyone")
		return
	}
	m.league(ctx)
}

// registrations registers the referee and both players, and checks the
// answers; an agent that registered has its id and token.
func (m *managerRun) registrations(ctx context.Context) {
	x := m.call(ctx, protocol.MethodRegisterReferee, &protocol.RefereeRegisterRequest{
		Envelope: m.env(protocol.TypeRefereeRegisterRequest, "referee:"+m.refID, m.conv("register-referee"), m.opts.RefereeToken),
		RefereeMeta: &protocol.RefereeMeta{DisplayName: "leaguectl check referee", Version: "1.0.0",
			GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: m.ref.f.ep, MaxConcurrentMatches: 1},
	}, m.opts.Timeout)
	m.registration("referee registration", ruleRegReferee, x, m.refID, m.ref)

	p1 := m.registerPlayer(ctx, "player:"+mgrPlayerID, m.p1.f.ep, "1")
	m.registration("player registration (requested id)", ruleRegPlayerID, p1, mgrPlayerID, m.p1)
	p2 := m.registerPlayer(ctx, "player:pending", m.p2.f.ep, "2")
	m.registration("player registration (assigned id)", ruleRegPlayerNoID, p2, "", m.p2)

	// Tokens are compared among the agents that got one. One that got
	// none failed its registration check, which is graded for it: with
	// no two tokens alike, the comparison is not run.
	var missing []string
	shared := false
	seen := map[string]bool{}
	for _, a := range []*fakeAgent{m.ref, m.p1, m.p2} {
		switch {
		case a.token == "":
			missing = append(missing, a.sender())
		case seen[a.token]:
			shared = true
		}
		seen[a.token] = true
	}
	switch {
	case shared:
		m.add(Check{Name: "distinct tokens", Rule: ruleTokens, Detail: "two agents got the same token"})
	case len(missing) > 0:
		m.notRun(strings.Join(missing, " and ")+" got no token", "distinct tokens")
	default:
		m.add(Check{Name: "distinct tokens", Rule: ruleTokens, Passed: true, Detail: "3 registrations, 3 different tokens"})
	}
}

func (m *managerRun) registerPlayer(ctx context.Context, sender, endpoint, n string) *exchange {
	return m.call(ctx, protocol.MethodRegisterPlayer, &protocol.LeagueRegisterRequest{
		Envelope: m.env(protocol.TypeLeagueRegisterRequest, sender, m.conv("register-player-"+n), m.opts.RegistrationToken),
		PlayerMeta: &protocol.PlayerMeta{DisplayName: "leaguectl check player " + n, Version: "1.0.0",
			GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: endpoint},
	}, m.opts.Timeout)
}

// registrationAnswer is REFEREE_REGISTER_RESPONSE or
// LEAGUE_REGISTER_RESPONSE.
type registrationAnswer struct {
	protocol.Envelope
	Status    string `json:"status"`
	RefereeID string `json:"referee_id"`
	PlayerID  string `json:"player_id"`
}

// registration checks a registration answer and keeps the id and token
// in a. requested is the id asked for ("" for none).
func (m *managerRun) registration(name, rule string, x *exchange, requested string, a *fakeAgent) {
	var r registrationAnswer
	problem := ""
	if !x.ok() {
		problem = "not answered with a result: " + x.describe()
		if c := x.resp.Error; c != nil && (c.LeagueCode() == protocol.ErrAuthenticationFailed || c.LeagueCode() == protocol.ErrAuthTokenInvalid) {
			if a == m.ref {
				problem += " (a manager that admits only its own referees: give its referee token with --referee-token)"
			} else {
				problem += " (a manager that admits only the players given its registration token: give it with --registration-token)"
			}
		}
	} else if err := x.decode(&r); err != nil {
		problem = "the answer is not a registration response: " + err.Error()
	}
	id := r.PlayerID + r.RefereeID
	var g *grade
	switch {
	case problem != "":
	case r.Status != protocol.StatusAccepted:
		problem = fmt.Sprintf("status %q, want ACCEPTED", protocol.Clip(r.Status))
	case id == "":
		problem = "accepted without an id"
	case r.AuthToken == "":
		problem = "accepted without an auth_token"
	case requested != "" && id != requested:
		problem = fmt.Sprintf("asked for the free id %s, got %s", requested, protocol.Clip(id))
		g = &gradeOtherID
	}
	if r.Status == protocol.StatusAccepted && id != "" && r.AuthToken != "" {
		a.id, a.token = id, r.AuthToken
		if r.LeagueID != "" {
			m.leagueID = r.LeagueID
		}
	}
	m.resultGraded(name, rule, x, problem, fmt.Sprintf("ACCEPTED as %s, with a token", orDash(id)), g)
}

// refusal checks that a request was refused, with code when code is set.
func (m *managerRun) refusal(name, rule string, x *exchange, code protocol.Code) {
	got, refused := x.refusal()
	problem, detail := "", "refused"
	if got != "" {
		detail += " with " + string(got)
	}
	var g *grade
	switch {
	case !refused:
		problem = "not refused: " + x.describe()
	case code != "" && got != code:
		problem = fmt.Sprintf("refused with %s, want %s", orDash(string(got)), code)
		g = &gradeOtherCode
	}
	m.resultGraded(name, rule, x, problem, detail, g)
}

func (m *managerRun) query(ctx context.Context, sender, token string) *exchange {
	return m.call(ctx, protocol.ToolName(protocol.TypeLeagueQuery), &protocol.LeagueQuery{
		Envelope:  m.env(protocol.TypeLeagueQuery, sender, m.conv("query"), token),
		QueryType: protocol.QueryStandings,
	}, m.opts.Timeout)
}

// refusals: a duplicate, an invalid registration, and queries and a
// report without the right token. A refusal of a registered agent's
// request is only one of its token when the agent registered: the checks
// that need the first player or the referee are not run without them.
func (m *managerRun) refusals(ctx context.Context) {
	p1 := m.p1.token != ""
	const p1Missing = "the first player of the checker did not register"
	if p1 {
		x := m.registerPlayer(ctx, "player:"+m.p1.id, m.p1.f.ep, "1-again")
		m.refusal("duplicate registration (E017)", ruleDuplicate, x, protocol.ErrDuplicateRegistration)
	} else {
		m.notRun(p1Missing, "duplicate registration (E017)")
	}

	x := m.call(ctx, protocol.MethodRegisterPlayer, &struct{ protocol.Envelope }{
		m.env(protocol.TypeLeagueRegisterRequest, "player:pending", m.conv("register-player-3"), ""),
	}, m.opts.Timeout)
	m.refusal("registration without player_meta (E002)", ruleMissingMeta, x, protocol.ErrInvalidMessageFormat)

	player := "player:" + m.p1.id
	if p1 {
		m.refusal("query without token (E003)", ruleNoToken, m.query(ctx, player, ""), "")
		m.refusal("query with a wrong token (E012)", ruleWrongToken, m.query(ctx, player, newToken("player", "wrong")), protocol.ErrAuthTokenInvalid)
	} else {
		m.notRun(p1Missing, "query without token (E003)", "query with a wrong token (E012)")
	}
	m.refusal("query from an unknown sender (E004)", ruleUnknownSender,
		m.query(ctx, "player:"+mgrStranger, newToken("player", mgrStranger)), protocol.ErrAgentNotRegistered)

	if p1 {
		x = m.query(ctx, player, m.p1.token)
		problem := ""
		var resp protocol.LeagueQueryResponse
		switch {
		case !x.ok():
			problem = "not answered with a result: " + x.describe()
		case x.decode(&resp) != nil:
			problem = "the answer is not a LEAGUE_QUERY_RESPONSE: " + x.decode(&resp).Error()
		case !resp.Success:
			problem = "success is false"
		}
		m.result("query with the token", ruleQuery, x, problem, "GET_STANDINGS answered with success")
	} else {
		m.notRun(p1Missing, "query with the token")
	}

	if m.ref.token == "" || m.p1.token == "" || m.p2.token == "" {
		// The forged report is of a match between the registered players.
		m.notRun("the referee or a player of the checker did not register", "report with a wrong token refused")
		return
	}
	rep := m.report(m.ref.id, newToken("referee", "wrong"), m.matchID(0, 1), m.round, m.p1.id, m.p2.id, m.conv("report-forged"))
	m.refusal("report with a wrong token refused", ruleReportWrongTok, m.call(ctx, protocol.MethodReportMatchResult, rep, m.opts.Timeout), "")
}

// report is the checker's referee's report: winner beat loser, even
// against odd, 4 drawn.
func (m *managerRun) report(refID, token, matchID string, round int, winner, loser, conv string) *protocol.MatchResultReport {
	n := 4
	return &protocol.MatchResultReport{
		Envelope: m.env(protocol.TypeMatchResultReport, "referee:"+refID, conv, token),
		RoundID:  round, MatchID: matchID, GameType: protocol.GameEvenOdd,
		Result: &protocol.MatchResult{
			Winner: &winner, Score: map[string]any{winner: 3, loser: 0}, MatchStatus: "COMPLETED",
			PlayerAStatus: protocol.ResultWin, PlayerBStatus: protocol.ResultLoss,
			Details: &protocol.ResultDetails{DrawnNumber: &n, Parity: protocol.Even, Outcome: "PLAYER_A_WIN",
				Choices: map[string]string{winner: protocol.Even, loser: protocol.Odd},
				Reason:  fmt.Sprintf("%s chose even, %s chose odd, number was 4 (even)", winner, loser)},
		},
	}
}

func (m *managerRun) startLeague(ctx context.Context) bool {
	params := map[string]string{"protocol": protocol.Version}
	if m.opts.AdminToken != "" {
		params["auth_token"] = m.opts.AdminToken
	}
	x := m.call(ctx, protocol.MethodStartLeague, params, m.opts.Timeout)
	problem := ""
	if !x.ok() {
		problem = "not started: " + x.describe()
		if c := x.resp.Error; c != nil && (c.LeagueCode() == protocol.ErrAuthenticationFailed || c.LeagueCode() == protocol.ErrAuthTokenInvalid) {
			problem += " (give the manager's admin token with --admin-token, or run the check on the manager's host)"
		}
	}
	m.result("start_league", ruleStartLeague, x, problem, "started")
	return problem == ""
}

// league waits for the match, reports it as the checker's referee, and
// checks the acknowledgements, the standings and the broadcasts.
func (m *managerRun) league(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, m.opts.MatchTimeout)
	defer cancel()
	got, ok := m.ref.got.find(lctx, func(v received[protocol.Message]) bool {
		_, is := v.msg.(*protocol.StartMatch)
		return is
	})
	if !ok {
		gotRaw, why := m.ref.f.why()
		m.add(Check{Name: "START_MATCH to the referee", Rule: ruleMgrStartMatch, Got: gotRaw,
			Detail: fmt.Sprintf("no START_MATCH reached the checker's referee within %s%s", m.opts.MatchTimeout, why)})
		m.notRun("no match was handed out", "report acknowledged", "duplicate report not counted twice",
			"standings after the result", "round broadcasts to players", "LEAGUE_COMPLETED to everyone")
		return
	}
	sm := got.msg.(*protocol.StartMatch)
	endpoints := map[string]string{m.p1.id: m.p1.f.ep, m.p2.id: m.p2.f.ep}
	problem := ""
	switch {
	case !(sm.PlayerA() == m.p1.id && sm.PlayerB() == m.p2.id) && !(sm.PlayerA() == m.p2.id && sm.PlayerB() == m.p1.id):
		problem = fmt.Sprintf("the match is %s against %s, not the two registered players %s and %s",
			protocol.Clip(sm.PlayerA()), protocol.Clip(sm.PlayerB()), m.p1.id, m.p2.id)
	case sm.EndpointA() != endpoints[sm.PlayerA()] || sm.EndpointB() != endpoints[sm.PlayerB()]:
		problem = "the players' endpoints are not those they registered"
	case sm.AuthToken != "" && sm.AuthToken != m.ref.token:
		problem = "START_MATCH carries a token that is not the referee's"
	}
	m.add(Check{Name: "START_MATCH to the referee", Rule: ruleMgrStartMatch, Passed: problem == "", Got: abbrev(got.raw),
		Detail: firstOf(problem, fmt.Sprintf("%s: %s against %s", sm.MatchID, sm.PlayerA(), sm.PlayerB()))})

	winner, loser := sm.PlayerA(), sm.PlayerB()
	rep := m.report(m.ref.id, m.ref.token, sm.MatchID, sm.RoundID, winner, loser, sm.ConversationID)
	first := m.call(ctx, protocol.MethodReportMatchResult, rep, m.opts.Timeout)
	var ack protocol.MatchResultReportAck
	problem = ""
	switch {
	case !first.ok():
		problem = "not answered with a result: " + first.describe()
	case first.decode(&ack) != nil:
		problem = "the answer is not a MATCH_RESULT_REPORT_ACK: " + first.decode(&ack).Error()
	case ack.Status != protocol.StatusAccepted:
		problem = fmt.Sprintf("status %q, want ACCEPTED", protocol.Clip(ack.Status))
	}
	m.result("report acknowledged", ruleReportAck, first, problem, fmt.Sprintf("%s won by %s: ACCEPTED", sm.MatchID, winner))

	again := m.call(ctx, protocol.MethodReportMatchResult, rep, m.opts.Timeout)
	standings := m.query(ctx, "player:"+m.p1.id, m.p1.token)
	counted, problem := m.standingsProblem(standings, winner, loser)
	m.result("standings after the result", ruleStandingsAfter, standings, problem, counted)

	var dup protocol.MatchResultReportAck
	switch {
	case again.ok() && again.decode(&dup) == nil && dup.Status == protocol.StatusDuplicate:
		m.result("duplicate report not counted twice", ruleDuplicateReport, again, "", "answered DUPLICATE")
	case again.ok() && again.resp.Result.Kind() != '{':
		// api-reference.md §3.3: a report is answered MATCH_RESULT_REPORT_ACK.
		m.result("duplicate report not counted twice", ruleDuplicateReport, again,
			"the answer is not a MATCH_RESULT_REPORT_ACK: "+again.decode(&dup).Error(), "")
	case problem == "":
		m.result("duplicate report not counted twice", ruleDuplicateReport, again, "", "answered "+again.describe()+"; counted once")
	default:
		m.result("duplicate report not counted twice", ruleDuplicateReport, again,
			"answered "+again.describe()+", and the standings are not those of one result", "")
	}

	// Broadcasts.
	wantPlayers := []protocol.MessageType{protocol.TypeRoundAnnouncement, protocol.TypeLeagueStandingsUpdate, protocol.TypeRoundCompleted}
	problem = ""
	for _, a := range []*fakeAgent{m.p1, m.p2} {
		for _, t := range wantPlayers {
			if !a.has(lctx, t) {
				problem = firstOf(problem, fmt.Sprintf("no %s reached %s", t, a.sender()))
			}
		}
	}
	m.add(Check{Name: "round broadcasts to players", Rule: ruleBroadcasts, Passed: problem == "",
		Detail: firstOf(problem, "both players got ROUND_ANNOUNCEMENT, LEAGUE_STANDINGS_UPDATE and ROUND_COMPLETED")})
	problem = ""
	for _, a := range []*fakeAgent{m.p1, m.p2, m.ref} {
		if !a.has(lctx, protocol.TypeLeagueCompleted) {
			problem = firstOf(problem, fmt.Sprintf("no LEAGUE_COMPLETED reached %s", a.sender()))
		}
	}
	m.add(Check{Name: "LEAGUE_COMPLETED to everyone", Rule: ruleCompleted, Passed: problem == "",
		Detail: firstOf(problem, "both players and the referee got LEAGUE_COMPLETED")})
}

// has waits until a has received a message of type t.
func (a *fakeAgent) has(ctx context.Context, t protocol.MessageType) bool {
	_, ok := a.got.find(ctx, func(v received[protocol.Message]) bool { return v.msg != nil && v.msg.Type() == t })
	return ok
}

// standingsProblem checks the standings after the one result: the winner
// one win and more points, the loser one loss.
func (m *managerRun) standingsProblem(x *exchange, winner, loser string) (detail, problem string) {
	var resp struct {
		Success bool `json:"success"`
		Data    struct {
			Standings []protocol.StandingRow `json:"standings"`
		} `json:"data"`
	}
	if !x.ok() {
		return "", "not answered with a result: " + x.describe()
	}
	if err := x.decode(&resp); err != nil || !resp.Success {
		return "", "GET_STANDINGS did not succeed"
	}
	rows := map[string]protocol.StandingRow{}
	for _, r := range resp.Data.Standings {
		rows[r.PlayerID] = r
	}
	w, okW := rows[winner]
	l, okL := rows[loser]
	var bad []string
	switch {
	case !okW || !okL:
		return "", fmt.Sprintf("the standings lack %s or %s", winner, loser)
	case w.Wins != 1 || w.Losses != 0 || w.Games() != 1:
		bad = append(bad, fmt.Sprintf("%s has %d played, %d wins, %d losses, want 1, 1, 0", winner, w.Games(), w.Wins, w.Losses))
	case l.Losses != 1 || l.Wins != 0 || l.Games() != 1:
		bad = append(bad, fmt.Sprintf("%s has %d played, %d wins, %d losses, want 1, 0, 1", loser, l.Games(), l.Wins, l.Losses))
	case w.Points <= l.Points:
		bad = append(bad, fmt.Sprintf("the winner %s has %d points, the loser %d", winner, w.Points, l.Points))
	}
	if len(bad) > 0 {
		return "", strings.Join(bad, "; ")
	}
	detail = fmt.Sprintf("%s: 1 win, %d points; %s: 1 loss, %d points", winner, w.Points, loser, l.Points)
	if w.Points != 3 || l.Points != 0 {
		detail += " (not the spec's default scoring 3/1/0: the manager's own)"
	}
	return detail, ""
}
