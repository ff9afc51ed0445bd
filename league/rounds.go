package league

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaguectl/leaguectl/internal/rng"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"golang.org/x/sync/errgroup"
)

// Run waits for the league to start, plays every round, tells every agent
// the league is complete and returns the LEAGUE_COMPLETED message.
func (m *Manager) Run(ctx context.Context) (*protocol.LeagueCompleted, error) {
	stopping := func() { m.stoppingOnce.Do(func() { close(m.stopping) }) }
	stop := context.AfterFunc(ctx, stopping)
	defer func() {
		// Run may see ctx end, and return, before ctx's cancellation has
		// reached the AfterFunc: stop would then keep it from ever running.
		stop()
		if ctx.Err() != nil {
			stopping()
		}
	}()
	var window <-chan time.Time
	if m.opts.RegistrationWindow > 0 {
		t := time.NewTimer(m.opts.RegistrationWindow)
		defer t.Stop()
		window = t.C
	}
	for waiting := true; waiting; {
		select {
		case <-m.started:
			waiting = false
		case <-window:
			m.mu.Lock()
			m.maybeStartLocked(ctx, true)
			m.mu.Unlock()
			window = nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	m.mu.Lock()
	rounds, closed, final := m.plannedRounds, m.closedRound, m.final
	m.mu.Unlock()
	if final != nil {
		return final, nil // restored from a store that holds a finished league
	}
	// A manager restored from its store resumes after the last round whose
	// end it announced; the matches of a round that already have a result
	// are not played again.
	var told *telling
	defer func() { told.wait() }() // nothing is left sending when Run returns
	if closed == 0 && m.countedMatches() == 0 {
		m.awaitPlayers(ctx)
	}
	if closed < rounds {
		if err := m.pairNext(ctx, closed+1); err != nil {
			return nil, err
		}
		told = m.tell(ctx, m.inMatchOrder(closed+1), []step{m.announcement(closed + 1)})
	}
	for r := closed + 1; r <= rounds; r++ {
		var err error
		if told, err = m.playRound(ctx, r, told); err != nil {
			return nil, err
		}
	}
	told.wait()
	if err := ctx.Err(); err != nil {
		// Stopped while the last round's end was being told: not complete,
		// and a restarted manager tells it again.
		return nil, err
	}
	return m.complete(ctx), nil
}

// countedMatches is how many results the league has counted.
func (m *Manager) countedMatches() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counted
}

// awaitPlayers waits, for at most StartGrace, until every player's
// endpoint answers a ping: any answer, an error included (a server of
// another implementation may serve no ping), says that it listens. A
// player whose registration came before its server listened would
// otherwise miss round 1's announcement. Players still silent then are
// named in a warning, and play (and lose) as they can.
func (m *Manager) awaitPlayers(ctx context.Context) {
	if m.opts.StartGrace <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartGrace)
	defer cancel()
	m.mu.Lock()
	players := slices.Clone(m.players)
	m.mu.Unlock()
	silent := make([]bool, len(players))
	var next atomic.Int64
	var g errgroup.Group
	for range min(m.opts.BroadcastConcurrency, len(players)) {
		g.Go(func() error {
			for i := int(next.Add(1)) - 1; i < len(players); i = int(next.Add(1)) - 1 {
				silent[i] = !m.listens(ctx, players[i].endpoint)
			}
			return nil
		})
	}
	_ = g.Wait()
	var ids []string
	for i, p := range players {
		if silent[i] {
			ids = append(ids, p.id)
		}
	}
	if len(ids) > 0 && ctx.Err() != nil {
		m.log.LogAttrs(ctx, slog.LevelWarn, "players not listening when the league starts: they keep their places and lose the matches they cannot play",
			slog.Any("players", ids), slog.Duration("waited", m.opts.StartGrace))
	}
}

// listens pings endpoint until it answers or ctx ends, and reports
// whether it answered.
func (m *Manager) listens(ctx context.Context, endpoint string) bool {
	backoff := m.opts.Retry.BackOff()
	for {
		call, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
		err := m.caller.Call(transport.NoRetry(call), endpoint, protocol.MethodPing,
			map[string]string{"protocol": protocol.Version, "sender": "league_manager:" + ManagerID}, nil)
		cancel()
		if e, ok := errors.AsType[*transport.Error](err); err == nil || ok && (e.Kind == transport.KindRemote ||
			e.Kind == transport.KindStatus || e.Kind == transport.KindBadResponse) {
			return true
		}
		t := time.NewTimer(min(backoff.NextBackOff(), time.Second))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// playRound plays round r, whose announcement told is sending, and returns
// what tells its end: the standings and the end of the round to every
// player, with the next round's announcement after them.
//
// Each player hears the same messages in the same order as with a
// broadcast of each message to every player in turn (DESIGN.md's rounds),
// but without a wait for every player between two messages: a player's
// messages are sent one after the other, and a match starts as soon as its
// own two players have heard of its round. The end of a round still waits
// for every result of the round, since the standings count them all.
// Three waits for the slowest of N calls a round become one (64 players
// over HTTP: about 2,230 → 2,570 matches/s), and a slow player delays its
// own match, not the round.
func (m *Manager) playRound(ctx context.Context, r int, told *telling) (*telling, error) {
	m.mu.Lock()
	// A restored manager may have counted matches of the round after r
	// already: the round under way does not step back.
	m.round = max(m.round, r)
	ms := m.rounds[r-1]
	m.mu.Unlock()
	log := m.log.With(slog.Int("round_id", r))
	log.LogAttrs(ctx, slog.LevelInfo, "round started", slog.Int("matches", len(ms)))
	m.events.Publish(EventRoundStarted, RoundEvent{RoundID: r, Matches: len(ms)})

	var wg sync.WaitGroup
	for _, mt := range ms {
		wg.Go(func() {
			if told.heard(ctx, mt.A) && told.heard(ctx, mt.B) {
				m.runMatch(ctx, mt)
			}
		})
	}
	wg.Wait()
	told.wait() // the round before is closed, and every player heard of this one
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Every result of round r is counted: a swiss league pairs the next.
	if err := m.pairNext(ctx, r+1); err != nil {
		return nil, err
	}

	m.mu.Lock()
	standings := m.standingsAfterLocked(r)
	summary := protocol.RoundSummary{TotalMatches: len(ms)}
	for _, mt := range ms {
		switch o := mt.result; {
		case o.StatusA == protocol.ResultTechnicalLoss || o.StatusB == protocol.ResultTechnicalLoss:
			summary.TechnicalLosses++
		case o.Winner == "":
			summary.Draws++
		default:
			summary.Wins++
		}
	}
	var next *int
	if r < m.plannedRounds {
		n := r + 1
		next = &n
	}
	m.mu.Unlock()
	conv := m.roundConversation(r)
	steps := []step{{
		method: protocol.MethodUpdateStandings,
		msg: &protocol.LeagueStandingsUpdate{
			Envelope: m.envelope(protocol.TypeLeagueStandingsUpdate, conv+"-standings", ""),
			RoundID:  r, Standings: standings,
		},
	}, {
		method: protocol.MethodNotifyRoundCompleted,
		msg: &protocol.RoundCompleted{
			Envelope: m.envelope(protocol.TypeRoundCompleted, conv+"-completed", ""),
			RoundID:  r, MatchesCompleted: len(ms), NextRoundID: next, Summary: &summary,
		},
		// Once every player has had it, the round is closed: a manager
		// restarted before then tells the round's end again, and so does
		// one stopped while telling it.
		then: func() {
			if ctx.Err() != nil {
				return
			}
			if err := m.persist(ctx, "end of the round", func(ctx context.Context, s Store) error {
				return s.SaveRoundClosed(ctx, r)
			}); err == nil {
				m.mu.Lock()
				m.closedRound = r
				m.mu.Unlock()
			}
			log.LogAttrs(ctx, slog.LevelInfo, "round completed", slog.Int("wins", summary.Wins),
				slog.Int("draws", summary.Draws), slog.Int("technical_losses", summary.TechnicalLosses))
			m.events.Publish(EventRoundCompleted, RoundEvent{RoundID: r, Matches: len(ms), Standings: standings})
		},
	}}
	// The round's end goes to every player, those of the next round's
	// first match first, so that it can start first.
	if next == nil {
		return m.tell(ctx, m.inMatchOrder(r), steps), nil
	}
	return m.tell(ctx, m.inMatchOrder(*next), append(steps, m.announcement(*next))), nil
}

// announcement is the ROUND_ANNOUNCEMENT of round r.
func (m *Manager) announcement(r int) step {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.rounds[r-1]
	matches := make([]protocol.MatchRef, len(ms))
	seats := m.seatsLocked()
	for i, mt := range ms {
		matches[i] = protocol.MatchRef{MatchID: mt.MatchID, GameType: protocol.GameEvenOdd,
			PlayerAID: mt.A, PlayerBID: mt.B, RefereeEndpoint: plannedReferee(seats, i)}
	}
	return step{method: protocol.MethodNotifyRound, msg: &protocol.RoundAnnouncement{
		Envelope: m.envelope(protocol.TypeRoundAnnouncement, m.roundConversation(r)+"-announce", ""),
		RoundID:  r, Matches: matches,
	}}
}

func (m *Manager) roundConversation(r int) string {
	return fmt.Sprintf("conv-%s-round-%d", m.opts.LeagueID, r)
}

// inMatchOrder is every player, those of round r's first match first, and
// so on: told in this order, the first matches can start first.
func (m *Manager) inMatchOrder(r int) []*agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*agent, 0, len(m.players))
	// An agent taken by this call carries its mark: no set to build.
	m.marks++
	mark := m.marks
	for _, mt := range m.rounds[r-1] {
		for _, id := range [2]string{mt.A, mt.B} {
			if a := m.agents[id]; a != nil && a.mark != mark {
				a.mark = mark
				out = append(out, a)
			}
		}
	}
	for _, a := range m.players {
		if a.mark != mark {
			a.mark = mark
			out = append(out, a)
		}
	}
	return out
}

// standingsAfterLocked is the standings once round r is counted. They are
// the table's, except after a restart in the round that followed r, when
// some of the next round's results may be counted already.
func (m *Manager) standingsAfterLocked(r int) []protocol.StandingRow {
	if m.countedUpTo <= r {
		return m.table.ranked()
	}
	t := newTable(m.table.scoring)
	for _, a := range m.players {
		t.add(a.id, a.name)
	}
	for _, ms := range m.rounds[:r] {
		for _, mt := range ms {
			if c := mt.result; c.known() {
				t.apply(&outcome{A: mt.A, B: mt.B, StatusA: c.StatusA, StatusB: c.StatusB, Winner: c.Winner})
			}
		}
	}
	return t.ranked()
}

// seatsLocked is the referees' slots for a round's matches, taken in
// order: each referee max_concurrent_matches times, interleaved.
func (m *Manager) seatsLocked() []*agent {
	var seats []*agent
	for _, ref := range m.referees {
		seats = append(seats, slices.Repeat([]*agent{ref}, ref.capacity)...)
	}
	return interleave(seats)
}

// plannedReferee is the referee endpoint announced for the i-th match of a
// round, of the referees' slots seats (seatsLocked). A match may end up
// with another referee when one is busy or fails.
func plannedReferee(seats []*agent, i int) string {
	if len(seats) == 0 {
		return ""
	}
	return seats[i%len(seats)].endpoint
}

// interleave orders slots round robin over their referees, in the order
// each first appears: REF01, REF02, REF01, … rather than REF01, REF01,
// REF02, so that a round's matches spread over the referees.
func interleave(slots []*agent) []*agent {
	var order []*agent
	count := map[*agent]int{}
	for _, a := range slots {
		if count[a] == 0 {
			order = append(order, a)
		}
		count[a]++
	}
	out := make([]*agent, 0, len(slots))
	for k := 0; len(out) < len(slots); k++ {
		for _, a := range order {
			if count[a] > k {
				out = append(out, a)
			}
		}
	}
	return out
}

// runMatch hands a match to a referee with a free slot and waits for its
// result. A referee that refuses or cannot be reached, or that lets the
// match timeout pass without a report, loses the match to another referee
// (or to itself, once it is back); a report that comes late from an
// earlier referee still counts if no other came first.
func (m *Manager) runMatch(ctx context.Context, mt *match) {
	done := m.doneOf(mt)
	select {
	case <-done:
		return // counted before a restart
	default:
	}
	backoff := m.opts.Retry.BackOff()
	var avoid string
	for attempt := 1; ; attempt++ {
		ref, err := m.slots.acquire(ctx, avoid)
		if err != nil {
			return
		}
		seen := m.slots.heardCount(ref)
		// The assignment is recorded before the referee hears of it, so
		// that its report is recognised even after a restart.
		if err := m.persist(ctx, "assignment", func(ctx context.Context, s Store) error {
			return s.SaveAssignment(ctx, mt.MatchID, ref.id, m.clock())
		}); err != nil {
			m.slots.release(ref)
			if !m.wait(ctx, mt, backoff.NextBackOff()) {
				return
			}
			continue
		}
		m.mu.Lock()
		mt.state, mt.referee = "RUNNING", ref.id
		mt.assign(ref.id)
		// Every hand-over gets tickets of its own: the players then refuse
		// the last referee's once they have seen this one's.
		n := mt.nextTicketN(m.clock())
		// A referee that registers again has restarted, and lost the match;
		// the match goes to the one that had this token.
		gone, token := ref.restarted, ref.token
		m.mu.Unlock()
		m.events.Publish(EventMatchStarted, MatchStartedEvent{MatchID: mt.MatchID, RoundID: mt.Round,
			PlayerA: mt.A, PlayerB: mt.B, RefereeID: ref.id, Attempt: attempt})

		// The match timeout from now (and within ctx): for the START_MATCH
		// call, and for the result.
		within, cancel := context.WithTimeout(ctx, m.opts.MatchTimeout)
		callErr := make(chan error, 1)
		go func() { callErr <- m.startMatch(within, ref, token, mt, n) }()
		lost := false
		select {
		case <-done:
		case <-gone:
			lost = true
			m.restartedLog(ctx, mt, ref)
		case err := <-callErr:
			if err != nil {
				lost = true
				m.log.LogAttrs(ctx, slog.LevelWarn, "referee did not take the match", slog.String("match_id", mt.MatchID),
					slog.String("referee_id", ref.id), slog.Int("attempt", attempt), slog.String("error", err.Error()))
				break
			}
			select {
			case <-done:
			case <-gone:
				lost = true
				m.restartedLog(ctx, mt, ref)
			case <-within.Done():
				if ctx.Err() != nil {
					break // stopped, not timed out
				}
				lost = true
				m.log.LogAttrs(ctx, slog.LevelWarn, "no result in time, handing the match to another referee",
					slog.String("match_id", mt.MatchID), slog.String("referee_id", ref.id))
			}
		case <-within.Done():
			if lost = ctx.Err() == nil; lost {
				m.log.LogAttrs(ctx, slog.LevelWarn, "START_MATCH unanswered in the match time, handing the match to another referee",
					slog.String("match_id", mt.MatchID), slog.String("referee_id", ref.id))
			}
		}
		cancel()
		if lost && ctx.Err() == nil {
			// Refused, unreachable, restarted or silent: no other match
			// for it while another referee takes them.
			m.slots.quieten(ref, seen)
		}
		m.slots.release(ref)
		if !lost || ctx.Err() != nil {
			return
		}
		select {
		case <-done:
			return
		default:
		}
		avoid = ref.id
		if !m.wait(ctx, mt, backoff.NextBackOff()) {
			return
		}
	}
}

func (m *Manager) restartedLog(ctx context.Context, mt *match, ref *agent) {
	m.log.LogAttrs(ctx, slog.LevelWarn, "referee restarted, handing its match out again",
		slog.String("match_id", mt.MatchID), slog.String("referee_id", ref.id))
}

// wait waits d before another attempt at mt, and reports false when there
// is no need for one (mt was counted meanwhile) or no point (ctx ended).
func (m *Manager) wait(ctx context.Context, mt *match, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-m.doneOf(mt):
	case <-ctx.Done():
	}
	return false
}

// startMatch sends START_MATCH, hand-over n of mt, within ctx, the match
// timeout. A referee that takes match tickets is given one for each
// player that asked for them; the players that asked, of a match handed
// to a referee that takes none, are told first that its messages carry
// none (tellTicketless). A referee of another implementation may answer
// only when the match is over; the caller does not wait for that.
func (m *Manager) startMatch(ctx context.Context, ref *agent, token string, mt *match, n uint64) error {
	m.mu.Lock()
	a, b := m.agents[mt.A], m.agents[mt.B]
	instA, instB := a.instanceTag(), b.instanceTag()
	var ticketA, ticketB string
	var told []*agent
	if ref.tickets {
		ticketA, ticketB = a.ticketFor(mt.MatchID, ref.id, n), b.ticketFor(mt.MatchID, ref.id, n)
	} else {
		for _, p := range [2]*agent{a, b} {
			if p.tickets && p.token != "" {
				told = append(told, p)
			}
		}
	}
	m.mu.Unlock()
	if told != nil {
		m.tellTicketless(ctx, ref, mt, n, told)
	}
	seed := rng.Derive(m.opts.Seed, "match", mt.MatchID)
	sm := &protocol.StartMatch{
		Envelope:        m.envelope(protocol.TypeStartMatch, m.conversation(mt), token),
		MatchID:         mt.MatchID,
		RoundID:         mt.Round,
		GameType:        protocol.GameEvenOdd,
		PlayerAID:       mt.A,
		PlayerBID:       mt.B,
		PlayerAEndpoint: a.endpoint,
		PlayerBEndpoint: b.endpoint,
		// Dialect-b reads the players under these names.
		AltPlayerAID:          mt.A,
		AltPlayerBID:          mt.B,
		AltPlayerAEndpoint:    a.endpoint,
		AltPlayerBEndpoint:    b.endpoint,
		LeagueManagerEndpoint: m.opts.Endpoint,
		MatchSeed:             &seed,
		PlayerAInstance:       instA,
		PlayerBInstance:       instB,
		PlayerATicket:         ticketA,
		PlayerBTicket:         ticketB,
	}
	var ack protocol.StartMatchAck
	err := m.caller.Call(ctx, ref.endpoint, protocol.ToolName(protocol.TypeStartMatch), sm, &ack)
	if err != nil {
		// A referee that is busy playing the match and answers only at the
		// end times out here; the result decides, not this call.
		if e, ok := errors.AsType[*transport.Error](err); ok && e.Kind == transport.KindTimeout {
			<-ctx.Done()
			select {
			case <-m.doneOf(mt):
				return nil
			default:
			}
		}
		return err
	}
	if ack.Status == protocol.StatusRejected {
		return fmt.Errorf("START_MATCH rejected: %s", protocol.Clip(ack.Reason))
	}
	return nil
}

// tellTicketless tells each of players, which asked for match tickets,
// that hand-over n of mt is to ref, a referee that carries none (one of
// another implementation): a ROUND_ANNOUNCEMENT of mt alone, signed with
// the player's token, whose match names the referee and the hand-over
// (protocol.MatchRef.TicketlessAssignment). The player then answers
// that referee's messages for mt without a ticket. It is told before
// START_MATCH goes, each player within a call timeout; one that cannot be
// told refuses the referee, as it would without a word.
func (m *Manager) tellTicketless(ctx context.Context, ref *agent, mt *match, n uint64, players []*agent) {
	ra := protocol.RoundAnnouncement{
		Envelope: m.envelope(protocol.TypeRoundAnnouncement, m.conversation(mt)+"-referee", ""),
		RoundID:  mt.Round,
		Matches: []protocol.MatchRef{{MatchID: mt.MatchID, GameType: protocol.GameEvenOdd, PlayerAID: mt.A, PlayerBID: mt.B,
			RefereeEndpoint: ref.endpoint, RefereeID: ref.id, TicketlessAssignment: n}},
	}
	var wg sync.WaitGroup
	for _, p := range players {
		msg := ra // its own copy: the Matches it shares are read only
		msg.AuthToken = m.tokenFor(p)
		wg.Go(func() {
			call, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
			defer cancel()
			if err := m.caller.Call(call, p.endpoint, protocol.MethodNotifyRound, &msg, nil); err != nil {
				m.log.LogAttrs(ctx, slog.LevelWarn, "player not told its match's referee carries no tickets",
					slog.String("match_id", mt.MatchID), slog.String("player_id", p.id), slog.String("referee_id", ref.id),
					slog.String("error", err.Error()))
			}
		})
	}
	wg.Wait()
}

func (m *Manager) conversation(mt *match) string {
	return "conv-" + m.opts.LeagueID + "-" + mt.MatchID
}

// onReport counts a referee's result. The first report of a match counts;
// any later one is acknowledged as a duplicate and changes nothing.
func (m *Manager) onReport(ctx context.Context, r *transport.Request) (any, error) {
	rep := r.Msg.(*protocol.MatchResultReport)
	ref, err := m.authenticate(r.Env, protocol.RoleReferee)
	if err != nil {
		return nil, err
	}
	if err := m.ofThisLeague(rep.Envelope); err != nil {
		return nil, err
	}
	m.mu.Lock()
	mt := m.matchByID(rep.MatchID)
	for busy := m.recording[mt]; busy != nil; busy = m.recording[mt] {
		// Another report of this match is being written: its outcome
		// decides this one's.
		m.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		m.mu.Lock()
	}
	switch {
	case mt == nil:
		m.mu.Unlock()
		return nil, &protocol.Error{Code: protocol.ErrMatchNotFound,
			Detail: fmt.Sprintf("no match %q in league %s", protocol.Clip(rep.MatchID), m.opts.LeagueID)}
	case !mt.wasAssigned(ref.id):
		m.mu.Unlock()
		return nil, protocol.Errorf(protocol.ErrAuthenticationFailed, "%s was not given match %s", ref.id, mt.MatchID)
	}
	m.slots.heard(ref) // it reports, late or not: it may be given matches again
	switch {
	case rep.RoundID != mt.Round:
		m.mu.Unlock()
		return nil, protocol.Errorf(protocol.ErrInvalidMessageFormat, "round_id %d: %s is in round %d", rep.RoundID, mt.MatchID, mt.Round)
	case mt.result.known():
		m.mu.Unlock()
		m.log.LogAttrs(ctx, slog.LevelInfo, "duplicate report", slog.String("match_id", rep.MatchID), slog.String("referee_id", ref.id))
		return m.reportAck(rep, ref, protocol.StatusDuplicate, "this match's result was already counted"), nil
	}
	o, err := outcomeOf(rep, mt.A, mt.B)
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	o.Referee = ref.id
	// Recorded before it is counted and acknowledged: a referee whose
	// report is refused here tries again. The write is made without mu
	// (another report of the match waits for it, above).
	busy := make(chan struct{})
	m.recording[mt] = busy
	m.mu.Unlock()
	written := false
	defer func() {
		if !written { // the write panicked: the match's other reports go on
			m.mu.Lock()
			delete(m.recording, mt)
			close(busy)
			m.mu.Unlock()
		}
	}()
	status, msg := protocol.StatusAccepted, ""
	err = m.persist(ctx, "result", func(ctx context.Context, s Store) error {
		inserted, err := s.SaveResult(ctx, resultRecord(o, mt.Round, rep.ConversationID, m.clock()))
		if err != nil || inserted {
			return err
		}
		// The store has a result of this match already: a write that was
		// reported failed had been made after all. The first result
		// stands, here as in the store.
		stored, err := storedResult(ctx, s, mt.MatchID)
		if err != nil {
			return err
		}
		o = savedOutcome(*stored, mt)
		if stored.Referee != ref.id {
			status, msg = protocol.StatusDuplicate, "this match's result was already counted"
		}
		return nil
	})
	m.mu.Lock()
	delete(m.recording, mt)
	close(busy)
	written = true
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	mt.result, mt.state = o.counted(), "DONE"
	m.table.apply(o)
	m.counted++
	m.countedUpTo = max(m.countedUpTo, mt.Round)
	done, total := m.counted, m.total
	m.mu.Unlock()
	m.events.Publish(EventMatchFinished, MatchFinishedEvent{MatchID: o.MatchID, RoundID: mt.Round, PlayerA: o.A, PlayerB: o.B,
		RefereeID: o.Referee, StatusA: o.StatusA, StatusB: o.StatusB, Winner: o.Winner, DrawnNumber: o.DrawnNumber,
		ChoiceA: o.ChoiceA, ChoiceB: o.ChoiceB, Done: done, Total: total})
	for _, tl := range o.TechnicalLosses {
		m.events.Publish(EventTechnicalLoss, TechnicalLossEvent{MatchID: o.MatchID, RoundID: mt.Round, PlayerID: tl.PlayerID,
			Code: tl.ErrorCode, Reason: tl.Reason})
	}
	m.notify(done, total)
	// Only now may the round, and the league, end: OnResult has been told.
	m.closeDone(mt)
	if m.log.Enabled(ctx, slog.LevelDebug) {
		// Formatting the result costs a dozen allocations: only for a log
		// that is written.
		m.log.LogAttrs(ctx, slog.LevelDebug, "result counted", slog.String("match_id", o.MatchID),
			slog.String("result", o.String()), slog.String("conversation_id", rep.ConversationID))
	}
	return m.reportAck(rep, ref, status, msg), nil
}

// storedResult is the result of a match the store holds.
func storedResult(ctx context.Context, s Store, matchID string) (*ResultRecord, error) {
	saved, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	if saved != nil {
		for _, r := range saved.Results {
			if r.MatchID == matchID {
				return &r, nil
			}
		}
	}
	return nil, fmt.Errorf("the store refused a result of %s but has none", matchID)
}

// notify tells OnResult that done of total results are counted. Results of
// a round are counted concurrently; the calls are made in counting order
// (a progress bar that keeps the last value must not end on 5 of 6), and
// without m.mu, so that OnResult may ask the manager.
func (m *Manager) notify(done, total int) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	for m.notified != done-1 {
		m.notifyCond.Wait()
	}
	if m.opts.OnResult != nil {
		m.opts.OnResult(done, total)
	}
	m.notified = done
	m.notifyCond.Broadcast()
}

// reportAck answers a report of ref, with ref's own token (DESIGN §4).
func (m *Manager) reportAck(rep *protocol.MatchResultReport, ref *agent, status, msg string) *protocol.MatchResultReportAck {
	return &protocol.MatchResultReportAck{
		Envelope: m.envelope(protocol.TypeMatchResultReportAck, rep.ConversationID, m.tokenFor(ref)),
		MatchID:  rep.MatchID, Status: status, Message: msg,
	}
}

// complete builds LEAGUE_COMPLETED and sends it to every player and referee.
// The completion is recorded after the agents were told: a manager that
// stops in between tells them again when it is restarted.
func (m *Manager) complete(ctx context.Context) *protocol.LeagueCompleted {
	m.mu.Lock()
	lc := m.completedLocked()
	everyone := append(append([]*agent(nil), m.players...), m.referees...)
	m.mu.Unlock()
	m.broadcast(ctx, everyone, protocol.MethodNotifyLeagueComplete, lc)
	_ = m.persist(ctx, "completion", func(ctx context.Context, s Store) error { return s.SaveCompletion(ctx, m.clock()) })
	m.mu.Lock()
	m.state, m.final = StateCompleted, lc
	m.events.Publish(EventLeagueCompleted, LeagueCompletedEvent{Champion: lc.Champion, FinalStandings: lc.FinalStandings,
		Seed: m.opts.Seed})
	close(m.finished)
	m.mu.Unlock()
	m.log.LogAttrs(ctx, slog.LevelInfo, "league completed", slog.String("champion", lc.Champion.PlayerID),
		slog.Int("points", lc.Champion.Points))
	return lc
}

// completedLocked is the LEAGUE_COMPLETED of the league as it stands.
func (m *Manager) completedLocked() *protocol.LeagueCompleted {
	standings := m.table.ranked()
	lc := &protocol.LeagueCompleted{
		Envelope:       m.envelope(protocol.TypeLeagueCompleted, "conv-"+m.opts.LeagueID+"-completed", ""),
		TotalRounds:    m.plannedRounds,
		TotalMatches:   m.total,
		FinalStandings: standings,
	}
	if len(standings) > 0 {
		lc.Champion = &protocol.Champion{PlayerID: standings[0].PlayerID, DisplayName: standings[0].DisplayName,
			Points: standings[0].Points}
	}
	return lc
}

// broadcast sends each recipient msg and waits until all have had it.
func (m *Manager) broadcast(ctx context.Context, to []*agent, method string, msg protocol.Message) {
	m.tell(ctx, to, []step{{method: method, msg: msg}}).wait()
}

// step is one message of a telling, to every recipient. then, if set, is
// run once, when every recipient has had the message (or failed to).
type step struct {
	method string
	msg    protocol.Message
	then   func()
}

// telling is a sequence of messages being sent to every recipient: each
// recipient gets them in order, one after the other, independently of the
// others.
type telling struct {
	to    []*agent                 // the recipients, in the order they are told
	heads map[string]chan struct{} // a recipient's is closed when it has had every message
	done  chan struct{}            // closed when every recipient has had every message
}

// tell starts sending each recipient the messages of steps, in order, and
// returns without waiting.
//
// A message is built once for all its recipients (protocol.Broadcast):
// each gets a copy of its top level with its own token, sharing the rest,
// validated once and, over a network, encoded once; so a broadcast of the
// standings to N players costs one table of N rows, not N. A message
// that fails as retryable (a player whose server does not listen yet) is
// tried again with the Client's backoff within its call timeout, before
// the next message to that recipient goes, so a retry never overtakes
// it; one that cannot be told is logged and costs at most its call
// timeout (and, once the recipient's breaker is open, nothing). At most
// BroadcastConcurrency recipients are being told at once.
//
// With Options.Batch, a recipient gets the messages as one JSON-RPC batch
// where it takes batches (transport.Client.Batch): one exchange instead of
// one each, with as many call timeouts as it has messages.
func (m *Manager) tell(ctx context.Context, to []*agent, steps []step) *telling {
	t := &telling{to: to, heads: make(map[string]chan struct{}, len(to)), done: make(chan struct{})}
	for _, a := range to {
		t.heads[a.id] = make(chan struct{})
	}
	msgs := make([]*protocol.Broadcast, len(steps))
	for k, s := range steps {
		b, err := protocol.NewBroadcast(s.msg)
		if err != nil {
			m.log.LogAttrs(ctx, slog.LevelError, "cannot broadcast", slog.String("method", s.method), slog.Any("error", err))
		}
		msgs[k] = b // nil: not sent
	}
	tokens := make([]string, len(to))
	m.mu.Lock()
	for i, a := range to {
		tokens[i] = a.token
	}
	m.mu.Unlock()
	had := make([]atomic.Int64, len(steps))
	tellOne := func(i int) {
		a := to[i]
		calls := make([]*transport.Call, 0, len(steps))
		for k, s := range steps {
			if msgs[k] != nil {
				calls = append(calls, &transport.Call{Method: s.method, Params: msgs[k].To(tokens[i])})
			}
		}
		m.send(ctx, a.endpoint, calls)
		for _, c := range calls {
			if c.Err != nil {
				m.log.LogAttrs(ctx, slog.LevelInfo, "broadcast not delivered", slog.String("method", c.Method),
					slog.String("recipient", a.id), slog.String("error", c.Err.Error()))
			}
		}
		for k, s := range steps {
			if s.then != nil && had[k].Add(1) == int64(len(to)) {
				s.then()
			}
		}
		close(t.heads[a.id])
	}
	go func() {
		defer close(t.done)
		if len(to) == 0 {
			for _, s := range steps {
				if s.then != nil {
					s.then()
				}
			}
			return
		}
		// BroadcastConcurrency goroutines take the recipients in order,
		// each the next one not taken yet: a goroutine per recipient
		// would be started, and its stack grown to a handler's depth,
		// once for every player every round.
		var next atomic.Int64
		var g errgroup.Group
		for range min(m.opts.BroadcastConcurrency, len(to)) {
			g.Go(func() error {
				for i := int(next.Add(1)) - 1; i < len(to); i = int(next.Add(1)) - 1 {
					tellOne(i)
				}
				return nil
			})
		}
		_ = g.Wait()
	}()
	return t
}

// send makes calls to endpoint, in order: as one batch where the
// manager was given a way to (Options.Batch), else one after the other,
// each within its own call timeout.
func (m *Manager) send(ctx context.Context, endpoint string, calls []*transport.Call) {
	if m.opts.Batch != nil && len(calls) > 1 {
		ctx, cancel := context.WithTimeout(ctx, time.Duration(len(calls))*m.opts.CallTimeout)
		defer cancel()
		m.opts.Batch(ctx, endpoint, calls...)
		return
	}
	for _, c := range calls {
		ctx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
		c.Err = m.caller.Call(ctx, endpoint, c.Method, c.Params, c.Reply)
		cancel()
	}
}

// heard waits until id has had every message of t, and reports whether ctx
// let it. A nil telling, or one that does not tell id, has nothing to wait
// for.
func (t *telling) heard(ctx context.Context, id string) bool {
	if t == nil {
		return true
	}
	if h := t.heads[id]; h != nil {
		select {
		case <-h:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// wait waits until every recipient of t has had every message, and every
// step's then has run.
func (t *telling) wait() {
	if t != nil {
		<-t.done
	}
}

// doneOf is the channel closed when mt is counted, made when first asked
// for: a league's matches do not each hold one from the start.
func (m *Manager) doneOf(mt *match) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mt.done == nil {
		mt.done = make(chan struct{})
	}
	return mt.done
}

// closeDone closes mt's done channel; the match then shares the manager's
// closed one, and its own goes once its waiters have seen it.
func (m *Manager) closeDone(mt *match) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mt.done != nil && mt.done != m.closedDone {
		close(mt.done)
	}
	mt.done = m.closedDone
}

// pool hands out referee slots: one per unit of a referee's capacity. A
// match that finds none waits in line; a slot that comes free goes to the
// first in line, waking that match alone (not every waiting match of the
// round, which for a round of N/2 matches would be N^2 wake-ups).
//
// A referee whose match ran out of time without a result is quiet: its
// slots are handed out only when every referee is, until it is heard from
// again (a report, or a registration after a restart). A referee that
// takes matches and never reports cost every round a match timeout (75 s
// with the spec's timeouts) before; now it costs the league one.
type pool struct {
	mu      sync.Mutex
	free    []*agent
	waiters []*slotWaiter     // oldest first
	refs    int               // referees with slots
	quiet   map[*agent]bool   // referees not heard from since a match of theirs was lost
	heardN  map[*agent]uint64 // how often each was heard from: a report races its match's deadline
	owed    map[*agent]int    // slots in use that a smaller capacity takes back as they come free
}

// slotWaiter is a match waiting for a slot.
type slotWaiter struct {
	avoid string
	got   chan *agent // buffered: handing over never blocks
}

func newPool() *pool {
	return &pool{quiet: map[*agent]bool{}, heardN: map[*agent]uint64{}, owed: map[*agent]int{}}
}

// add adds n slots of a, interleaved with the others so that matches
// spread over the referees.
func (p *pool) add(a *agent, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = interleave(append(p.free, slices.Repeat([]*agent{a}, n)...))
	p.refs++
	p.handOutLocked()
}

// heardCount is how often a has been heard from: quieten's seen.
func (p *pool) heardCount(a *agent) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.heardN[a]
}

// quieten marks a as quiet: a match given it when it had been heard from
// seen times was lost (refused, unreachable, or no result in time). If it
// has been heard from since (its report crossed the match's deadline), it
// is not.
func (p *pool) quieten(a *agent, seen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.heardN[a] != seen {
		return
	}
	p.quiet[a] = true
	p.handOutLocked() // when every referee is quiet, theirs are the slots there are
}

// heard marks a as heard from: it is given matches again.
func (p *pool) heard(a *agent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.heardN[a]++
	if p.quiet[a] {
		delete(p.quiet, a)
		p.handOutLocked()
	}
}

// release gives back a slot of a. It goes last, so that the next match
// goes to another referee if one is free; one that a's capacity lost
// meanwhile (resize) goes nowhere.
func (p *pool) release(a *agent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked(a)
}

func (p *pool) releaseLocked(a *agent) {
	if p.owed[a] > 0 {
		p.owed[a]--
		return
	}
	p.free = append(p.free, a)
	p.handOutLocked()
}

// resize makes a's slots, from of them, to: more are added as add does;
// fewer are taken from its free ones, and those in use are kept as they
// come back (release) until a holds to.
func (p *pool) resize(a *agent, from, to int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if to > from {
		// Owed slots are forgiven before new ones are made.
		back := min(p.owed[a], to-from)
		p.owed[a] -= back
		p.free = interleave(append(p.free, slices.Repeat([]*agent{a}, to-from-back)...))
		p.handOutLocked()
		return
	}
	drop := from - to
	p.free = slices.DeleteFunc(p.free, func(b *agent) bool {
		if b == a && drop > 0 {
			drop--
			return true
		}
		return false
	})
	p.owed[a] += drop
}

// takeLocked removes and returns a free slot, preferring one not of avoid;
// nil when none is free.
func (p *pool) takeLocked(avoid string) *agent {
	// Quiet referees' slots are passed over while some referee is not
	// quiet; when every one is, theirs are the slots there are.
	skipQuiet := len(p.quiet) > 0 && len(p.quiet) < p.refs
	pick := -1
	for i, a := range p.free {
		if skipQuiet && p.quiet[a] {
			continue
		}
		if pick < 0 {
			pick = i
		}
		if a.id != avoid {
			pick = i
			break
		}
	}
	if pick < 0 {
		return nil
	}
	a := p.free[pick]
	p.free = append(p.free[:pick], p.free[pick+1:]...)
	return a
}

// handOutLocked gives free slots to the matches in line, first come first
// served.
func (p *pool) handOutLocked() {
	for len(p.waiters) > 0 {
		w := p.waiters[0]
		a := p.takeLocked(w.avoid)
		if a == nil {
			return
		}
		p.waiters[0] = nil
		p.waiters = p.waiters[1:]
		w.got <- a
	}
}

// acquire takes a free slot, preferring one not of avoid, and waits in line
// while there is none.
func (p *pool) acquire(ctx context.Context, avoid string) (*agent, error) {
	p.mu.Lock()
	if a := p.takeLocked(avoid); a != nil {
		p.mu.Unlock()
		return a, nil
	}
	w := &slotWaiter{avoid: avoid, got: make(chan *agent, 1)}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	select {
	case a := <-w.got:
		return a, nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.waiters, w); i >= 0 {
		p.waiters = slices.Delete(p.waiters, i, i+1)
		return nil, ctx.Err()
	}
	// A slot was handed over as the context ended: it goes back, as
	// release gives one back.
	p.releaseLocked(<-w.got)
	return nil, ctx.Err()
}
