package league

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
)

// storeTimeout bounds one write to the store.
const storeTimeout = 10 * time.Second

// StateStarting is the state of a league whose schedule is being made
// and written to its store: registration is closed, and nothing of the
// schedule is shown until all of it is stored.
const StateStarting = "STARTING"

// scheduleRowTime is what ScheduleTimeout allows a stored match: many
// times what a match takes to store (8 µs on an idle 2-core machine, 20
// µs and more under load), since the store's other writes share its
// commits.
const scheduleRowTime = 100 * time.Microsecond

// ScheduleTimeout bounds the writing of a schedule of rows matches, all
// of it: storeTimeout, and scheduleRowTime a match. A fixed bound either
// fails a large league's start under load (499,500 matches at 1000
// players) or lets a small one's write hang for minutes.
func ScheduleTimeout(rows int) time.Duration {
	return storeTimeout + time.Duration(rows)*scheduleRowTime
}

// persist runs a write to the store, if there is one, with a bounded
// context. A failed write is E015: the caller's request is refused and may
// be retried, since nothing was acknowledged.
func (m *Manager) persist(ctx context.Context, what string, write func(ctx context.Context, s Store) error) error {
	if m.opts.Store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := write(ctx, m.opts.Store); err != nil {
		m.log.LogAttrs(ctx, slog.LevelError, "store write failed", slog.String("what", what), slog.String("error", err.Error()))
		return protocol.Errorf(protocol.ErrInternal, "could not record the %s", what)
	}
	return nil
}

// Restore reads back the league the store holds, or records a new league
// in it. Call it once, before serving, when Options.Store is set. A store
// holds one league: its id must be this manager's; its seed and scoring
// are the league's and replace those of the options.
func (m *Manager) Restore(ctx context.Context) error {
	if m.opts.Store == nil {
		return nil
	}
	saved, err := m.opts.Store.Load(ctx)
	if err != nil {
		return fmt.Errorf("read the league store: %w", err)
	}
	if saved == nil {
		if err := m.opts.Store.CreateLeague(ctx, LeagueRecord{LeagueID: m.opts.LeagueID, Seed: m.opts.Seed,
			Scoring: m.opts.Scoring, CreatedAt: m.clock()}); err != nil {
			return err
		}
		return m.restoreEvents(ctx, 0)
	}
	if saved.League.LeagueID != m.opts.LeagueID {
		return fmt.Errorf("the store holds league %q, not %q: give another --db or --league-id %s",
			saved.League.LeagueID, m.opts.LeagueID, saved.League.LeagueID)
	}
	// Before anything below publishes an event (a start): its number must
	// be above those given before the restart.
	if err := m.restoreEvents(ctx, saved.EventSeq); err != nil {
		return err
	}
	tokens, err := m.knownTokens(saved)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opts.Seed, m.opts.Scoring = saved.League.Seed, saved.League.Scoring
	m.table = newTable(saved.League.Scoring)
	unknown := 0
	for i, r := range saved.Agents {
		a := &agent{id: r.ID, name: r.DisplayName, endpoint: r.Endpoint, role: r.Role, tokenHash: r.TokenHash,
			nonce: r.TokenNonce, capacity: min(r.Capacity, MaxRefereeCapacity), registeredAt: r.RegisteredAt, restarted: make(chan struct{}),
			tickets: r.MatchTickets}
		if tokens[i] != "" {
			a.setToken(tokens[i])
		} else {
			unknown++
		}
		m.agents[a.id] = a
		m.endpoints[seat{a.role, a.endpoint}] = a.id
		if a.role == protocol.RoleReferee {
			m.referees = append(m.referees, a)
			m.slots.add(a, a.capacity)
		} else {
			m.players = append(m.players, a)
			m.table.add(a.id, a.name)
		}
	}
	if unknown > 0 {
		m.log.LogAttrs(ctx, slog.LevelWarn, "agents' tokens not known: they are sent none until each shows its own again",
			slog.Int("agents", unknown), slog.Int("of", len(saved.Agents)),
			slog.String("why", "a token is known again only with the token key it was made with"))
	}
	switch saved.State {
	case StateRegistration:
		// The manager may have stopped after the registration that reached
		// the minimum and before the start: no other registration may come
		// to start the league.
		m.maybeStartLocked(ctx, false)
		m.log.LogAttrs(ctx, slog.LevelInfo, "league restored", slog.String("state", saved.State),
			slog.Int("players", len(m.players)), slog.Int("referees", len(m.referees)))
		return nil
	case StateStarting:
		// Stopped while it wrote the schedule, of which Load gives nothing:
		// it is made again from the players stored, the ones it was
		// written for (no player registers once a start has begun; after
		// a start that failed, those who did since are stored too, and
		// rightly scheduled), written again whole, and the league starts,
		// at the time it first started.
		m.log.LogAttrs(ctx, slog.LevelWarn, "the manager stopped while it wrote the schedule: writing it again",
			slog.Int("players", len(m.players)), slog.Int("referees", len(m.referees)))
		m.startedAt = saved.StartedAt
		if err := m.startLocked(ctx); err != nil {
			return fmt.Errorf("write the schedule of the league again: %w", err)
		}
		m.log.LogAttrs(ctx, slog.LevelInfo, "league restored", slog.String("state", m.state),
			slog.Int("players", len(m.players)), slog.Int("referees", len(m.referees)), slog.Int("matches", m.total))
		return nil
	}
	if len(saved.Rounds) == 0 {
		// The schedule is stored in the transaction that says the league
		// runs: a store that says so without one has lost writes.
		return fmt.Errorf("the store holds a league that is %s but no schedule of it: it has lost writes", saved.State)
	}
	if err := m.buildRoundsLocked(saved.Rounds); err != nil {
		return err
	}
	if err := m.checkPlanLocked(); err != nil {
		return err
	}
	for id, refs := range saved.Assignments {
		if mt := m.matchByID(id); mt != nil {
			for _, ref := range refs {
				mt.assign(ref)
				mt.referee = ref
			}
			// Its referee may still be playing it, and report it.
			mt.state = "RUNNING"
		}
	}
	for _, r := range saved.Results {
		mt := m.matchByID(r.MatchID)
		if mt == nil {
			return fmt.Errorf("the store has a result of %s, which is not in its schedule", r.MatchID)
		}
		o := savedOutcome(r, mt)
		mt.result, mt.state = o.counted(), "DONE"
		m.table.apply(o)
		m.counted++
		m.countedUpTo = max(m.countedUpTo, mt.Round)
		mt.done = m.closedDone
	}
	// The round under way: the last one announced, or the one after it
	// once any of its matches was handed out.
	m.round = saved.ClosedRound
	for _, ms := range m.rounds {
		for _, mt := range ms {
			if mt.assigned != "" || mt.result.known() {
				m.round = max(m.round, mt.Round)
			}
		}
	}
	m.notified = m.counted
	m.closedRound = saved.ClosedRound
	m.state, m.startedAt = StateRunning, saved.StartedAt
	close(m.started)
	if saved.State == StateCompleted {
		m.final = m.completedLocked()
		m.state = StateCompleted
		close(m.finished)
	}
	m.log.LogAttrs(ctx, slog.LevelInfo, "league restored", slog.String("state", saved.State),
		slog.Int("players", len(m.players)), slog.Int("referees", len(m.referees)),
		slog.Int("matches_counted", m.counted), slog.Int("matches", m.total))
	return nil
}

// restoreEvents numbers the league's events from bound, the bound its
// store kept (Saved.EventSeq; 0 for none), when the store keeps one
// (EventSeqStore). The first reservation is written here, before the
// manager serves: a manager that crashed before its first reservation was
// durable would otherwise give its first numbers again. Later ones are
// asked for half a step ahead (Events) and written off the publisher's
// path, through persist.
func (m *Manager) restoreEvents(ctx context.Context, bound uint64) error {
	s, ok := m.opts.Store.(EventSeqStore)
	if !ok {
		return nil
	}
	first := max(bound, 1)
	upto := first + reserveStep
	if err := s.SaveEventSeq(ctx, upto); err != nil {
		return fmt.Errorf("record the league's event numbers: %w", err)
	}
	w := &seqWriter{write: func(upto uint64) error {
		return m.persist(context.Background(), "event numbers", func(ctx context.Context, s Store) error {
			return s.(EventSeqStore).SaveEventSeq(ctx, upto)
		})
	}, written: upto}
	e := NewEvents(m.opts.LeagueID, first, len(m.events.ring), m.clock, w.reserve)
	e.reserved = upto // durable already: the first Publish need not ask again
	m.events = e
	return nil
}

// seqWriter writes the bounds Events reserves, one write at a time and
// the highest asked for, off the publisher's path: Events calls reserve
// under its lock, which every publisher takes, and a write waits for the
// disk. A failed write is logged by persist and made again with the next
// reservation; until then a restart could give numbers again.
type seqWriter struct {
	write func(upto uint64) error

	mu      sync.Mutex
	want    uint64 // the highest bound asked for
	written uint64 // the highest bound written
	busy    bool   // a goroutine is writing
}

func (w *seqWriter) reserve(upto uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want = max(w.want, upto)
	if w.busy || w.want <= w.written {
		return
	}
	w.busy = true
	go w.run()
}

func (w *seqWriter) run() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.want > w.written {
		upto := w.want
		w.mu.Unlock()
		err := w.write(upto)
		w.mu.Lock()
		if err != nil {
			break
		}
		w.written = max(w.written, upto)
	}
	w.busy = false
}

// buildRoundsLocked sets up the matches of a schedule (buildRounds) as
// the manager's.
func (m *Manager) buildRoundsLocked(rounds [][]Pairing) error {
	b, err := buildRounds(rounds)
	if err != nil {
		return err
	}
	m.rounds, m.byID, m.total = b.rounds, b.byID, b.total
	return nil
}

// builtRounds are the matches of a schedule, and their index by id.
type builtRounds struct {
	rounds [][]*match
	byID   map[string]*match
	total  int
}

// buildRounds sets up the matches of a schedule, a round's in one
// allocation (they live as long as the league), and indexes them by id,
// or refuses a schedule that names two matches alike. It needs no lock:
// at 1000 players it makes 499,500 matches.
func buildRounds(rounds [][]Pairing) (*builtRounds, error) {
	total := 0
	for _, round := range rounds {
		total += len(round)
	}
	b := &builtRounds{rounds: make([][]*match, 0, len(rounds)), byID: make(map[string]*match, total), total: total}
	for _, round := range rounds {
		held := make([]match, len(round))
		ms := make([]*match, len(round))
		for i, p := range round {
			held[i] = match{Pairing: p, state: "PENDING"}
			ms[i] = &held[i]
			if b.byID[p.MatchID] != nil {
				return nil, fmt.Errorf("the schedule has two matches %s", protocol.Clip(p.MatchID))
			}
			b.byID[p.MatchID] = ms[i]
		}
		b.rounds = append(b.rounds, ms)
	}
	return b, nil
}

// makeSchedule makes the schedule of players ids (in order), sets up its
// matches and stores it, as a league started at now, called with m.mu
// held, which it lets go meanwhile and takes again however it returns.
func (m *Manager) makeSchedule(ctx context.Context, ids []string, now time.Time) (*builtRounds, error) {
	m.mu.Unlock()
	defer m.mu.Lock()
	schedule, err := m.firstRounds(ids)
	if err != nil {
		return nil, err
	}
	built, err := buildRounds(schedule)
	if err != nil {
		return nil, err
	}
	return built, m.saveSchedule(ctx, now, schedule, built.total)
}

// saveSchedule stores a schedule that starts at startedAt, if there is a
// store, under a deadline of its size, and not under the caller's: a
// caller that leaves does not stop a start. A failed write is E015, as
// persist's.
func (m *Manager) saveSchedule(ctx context.Context, startedAt time.Time, rounds [][]Pairing, total int) error {
	s := m.opts.Store
	if s == nil {
		return nil
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ScheduleTimeout(total))
	defer cancel()
	var err error
	if w, ok := s.(ScheduleWriter); ok {
		err = WriteSchedule(ctx, w, startedAt, rounds)
	} else {
		err = s.SaveSchedule(ctx, startedAt, rounds)
	}
	if err != nil {
		m.log.LogAttrs(ctx, slog.LevelError, "store write failed", slog.String("what", "schedule"),
			slog.Int("matches", total), slog.String("error", err.Error()))
		return protocol.Errorf(protocol.ErrInternal, "could not record the schedule")
	}
	m.log.LogAttrs(ctx, slog.LevelInfo, "schedule recorded", slog.Int("matches", total),
		slog.Duration("took", time.Since(began)))
	return nil
}

// matchByID is the match named id, or nil.
func (m *Manager) matchByID(id string) *match { return m.byID[id] }

// ErrUnknownTokens is Restore's error when the store's agents' tokens
// cannot be made again and the league could not go on without them.
var ErrUnknownTokens = errors.New("agents' tokens cannot be made again")

// knownTokens makes the token of each of saved's agents again, "" where
// it cannot: with Options.TokenKey from the stored nonce, checked against
// the stored hash (a key other than the one it was made with gives
// another). Agents that refuse a manager message without their token
// (ours, once told the manager signs, or once one has carried it) would
// refuse every message of a manager that cannot make theirs: so it is an
// error, unless Options.AllowUnknownTokens, when the league is running,
// or when an agent was told at registration that the manager signs (its
// token was made with a key). A league registering agents of a database
// of schema 1 (random tokens; no agent told) goes on, and a completed
// one sends its agents nothing more.
func (m *Manager) knownTokens(saved *Saved) ([]string, error) {
	tokens := make([]string, len(saved.Agents))
	unknown, told := 0, 0
	for i, r := range saved.Agents {
		if m.opts.TokenKey != nil && len(r.TokenNonce) > 0 {
			token := deriveToken(m.opts.TokenKey, r.Role, r.ID, r.TokenNonce)
			h := sha256.Sum256([]byte(token))
			if subtle.ConstantTimeCompare(h[:], r.TokenHash[:]) == 1 {
				tokens[i] = token
				continue
			}
		}
		unknown++
		if len(r.TokenNonce) > 0 {
			told++
		}
	}
	if unknown == 0 || m.opts.AllowUnknownTokens || saved.State == StateCompleted ||
		(saved.State == StateRegistration && told == 0) {
		return tokens, nil
	}
	var why string
	switch {
	case told == 0:
		why = "they were made before tokens were made from a token key (a database of schema 1)"
	case m.opts.TokenKey == nil:
		why = "there is no token key"
	default:
		why = "the token key is not the one they were made with"
	}
	return nil, fmt.Errorf("%w: %d of %d, as %s; their agents refuse a manager message without their token, "+
		"so the league could not go on: give the manager its token key, or resume anyway with --allow-unknown-tokens "+
		"(a manager knows a token again once its agent shows it, in a report or a query)",
		ErrUnknownTokens, unknown, len(saved.Agents), why)
}

// savedOutcome is the outcome of match mt that the store holds.
func savedOutcome(r ResultRecord, mt *match) *outcome {
	o := &outcome{MatchID: r.MatchID, A: mt.A, B: mt.B, StatusA: r.StatusA, StatusB: r.StatusB, Winner: r.Winner,
		DrawnNumber: r.DrawnNumber, TechnicalLosses: r.TechnicalLosses, Reason: r.Reason, Referee: r.Referee,
		ChoiceA: r.ChoiceA, ChoiceB: r.ChoiceB}
	return o
}

func agentRecord(a *agent) AgentRecord {
	return AgentRecord{ID: a.id, Role: a.role, DisplayName: a.name, Endpoint: a.endpoint, TokenHash: a.tokenHash,
		TokenNonce: a.nonce, Capacity: a.capacity, RegisteredAt: a.registeredAt, MatchTickets: a.tickets}
}

func resultRecord(o *outcome, round int, conversation string, at time.Time) ResultRecord {
	return ResultRecord{MatchID: o.MatchID, Round: round, Referee: o.Referee, StatusA: o.StatusA, StatusB: o.StatusB,
		Winner: o.Winner, DrawnNumber: o.DrawnNumber, ChoiceA: o.ChoiceA, ChoiceB: o.ChoiceB,
		TechnicalLosses: o.TechnicalLosses, Reason: o.Reason, ConversationID: conversation, ReportedAt: at}
}
