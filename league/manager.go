// Package league is the League Manager agent: it registers referees and
// players and gives each a token, builds the round-robin schedule, runs
// the rounds by handing matches to referees, counts the results they
// report, keeps the standings and tells every player how the league goes.
package league

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// ManagerID is the manager's own id in its sender.
const ManagerID = "LM01"

// League states.
const (
	StateRegistration = "REGISTRATION"
	StateRunning      = "RUNNING"
	StateCompleted    = "COMPLETED"
)

// Options configure a Manager.
type Options struct {
	LeagueID string
	// Seed is the league seed: every match's drawn number derives from it.
	Seed    uint64
	Scoring Scoring
	// Format is how the league pairs its players (the zero Format: a
	// single round robin). A manager restarted on its store must be given
	// the format the league began with: the store keeps the pairings, not
	// the rule that made them.
	Format Format
	// Endpoint is the manager's own endpoint, told to referees.
	Endpoint string
	// CallTimeout bounds every call the manager makes.
	CallTimeout time.Duration
	// MatchTimeout is how long a dispatched match may go without a result
	// before it is handed to another referee.
	MatchTimeout time.Duration
	// StartGrace is how long the manager waits, before round 1, for every
	// registered player's endpoint to answer: a player may register
	// before its server listens. A player still silent then keeps its
	// place and loses what it cannot play. 0: no wait.
	StartGrace time.Duration
	// MinPlayers starts the league by itself once that many players and
	// MinReferees referees (at least one) have registered; 0 waits for
	// start_league or the registration window.
	MinPlayers  int
	MinReferees int
	// MaxPlayers and MaxReferees, when above 0, bound the registrations:
	// one more is rejected. Anyone may register, and each player makes the
	// league longer by a round and a match with every other player.
	MaxPlayers, MaxReferees int
	// RegistrationWindow, when set, starts the league that long after Run
	// begins, if at least two players and a referee have registered by then.
	RegistrationWindow time.Duration
	// AdminToken guards start_league and the admin queries. Without one,
	// only callers on the same host may use them.
	AdminToken string
	// RefereeToken, when set, is what a referee's registration must carry
	// as its auth_token: a referee decides the matches it is handed, so an
	// organiser whose players are other people's admits only the referees
	// given it. Without one, any referee may register.
	RefereeToken string
	// RegistrationToken, when set, is what a player's registration must
	// carry as its auth_token: an organiser admits only the players given
	// it. Without one, any player may register.
	RegistrationToken string
	// Retry paces new attempts to hand a match to a referee.
	Retry transport.Retry
	// Tokens is the source of the agents' tokens (crypto/rand when nil):
	// tokens are secrets, never derived from the league seed.
	Tokens io.Reader
	// TokenKey, when set (TokenKeySize bytes, from TokenKeyFile), makes
	// each token from the key and random bits that Store keeps with the
	// token's hash: a manager restarted on its store with the same key
	// knows every agent's token again, and signs its messages to them
	// (without it, it knows only the hashes, and an agent's token only
	// once the agent has shown it again). The key is never stored.
	TokenKey []byte
	// AllowUnknownTokens lets Restore resume a league whose agents' tokens
	// it cannot make again (no key, another key, a database of schema 1),
	// which it otherwise refuses (ErrUnknownTokens): agents that refuse a
	// manager message without their token would refuse its messages.
	AllowUnknownTokens bool
	Clock              func() time.Time
	// OnResult is told of every counted result (done of total), in order,
	// before the round of the result can end; it must not block.
	OnResult func(done, total int)
	// BroadcastConcurrency bounds the calls of one broadcast in flight.
	BroadcastConcurrency int
	// Store, when set, keeps the registrations, the schedule, the
	// assignments and the results, each written before it is acknowledged;
	// call Restore before serving.
	Store Store
	// ResetBreaker, when set, closes the circuit breaker its caller keeps
	// for an endpoint (transport.Client.ResetBreaker): called for an agent
	// that registered again after a restart, which an open breaker would
	// otherwise shut out until its reset timeout.
	ResetBreaker func(endpoint string)
	// Batch, when set, sends one agent several calls as one JSON-RPC
	// batch where it takes batches (transport.Client.Batch); the end of a
	// round then goes to each player in one exchange instead of three.
	Batch func(ctx context.Context, endpoint string, calls ...*transport.Call)
}

// agent is a registered referee or player.
type agent struct {
	id, name, endpoint string
	role               protocol.Role
	// token is kept in memory only, to send the agent its own token; what
	// is stored and compared is tokenHash, and nonce when the token was
	// made with Options.TokenKey (deriveToken).
	token     string
	tokenHash [sha256.Size]byte
	// tag is instanceTag's, for tokenHash tagOf.
	tag          string
	tagOf        [sha256.Size]byte
	nonce        []byte
	capacity     int // referees: max_concurrent_matches
	registeredAt time.Time
	// mark is the inMatchOrder call that last took the agent; under mu.
	mark uint64
	// restarted is closed when the agent registers again after a restart
	// of its own (rejoin), and replaced; under mu.
	restarted chan struct{}
	// asked is the id the agent asked for when another agent held it and
	// it was given id instead; "" otherwise.
	asked string
	// instance is the proof of the instance secret the agent's token was
	// given to (protocol.InstanceProof), "" when none was sent or the
	// manager has restarted since; under mu.
	instance string
	// tickets says the agent asked for match tickets and was told it gets
	// them (protocol.PlayerMeta.MatchTickets); under mu.
	tickets bool
	// ticketer makes the player's match tickets under the ticket key of
	// ticketerOf, the token it was made from: made once a token, not once
	// a match; under mu.
	ticketer   *protocol.Ticketer
	ticketerOf string
}

// ticketFor is the match ticket the player a is shown by referee ref in
// assignment n of match matchID, "" when a asked for none or its token
// is not known (a manager restored without its token key). Under mu.
func (a *agent) ticketFor(matchID, ref string, n uint64) string {
	if a.token == "" || !a.tickets {
		return ""
	}
	if a.ticketer == nil || a.ticketerOf != a.token {
		a.ticketer, a.ticketerOf = protocol.NewTicketer(protocol.TicketKey(a.token)), a.token
	}
	return a.ticketer.Ticket(matchID, ref, n)
}

// setToken sets the token to send a.
func (a *agent) setToken(token string) { a.token = token }

// match is a scheduled match and what became of it.
type match struct {
	Pairing
	state   string // PENDING, RUNNING, DONE
	referee string // the referee it was last handed to
	// assigned and reassigned are every referee it was handed to: any may
	// report. Nearly every match has one, kept without a slice.
	assigned   string
	reassigned []string
	// ticketN numbers its last hand-over (protocol.Ticket): the manager's
	// clock then, in milliseconds, and above the one before, so that a
	// manager restarted later numbers above every hand-over before it.
	ticketN uint64
	result  counted
	done    chan struct{} // closed when the result is counted; see doneOf
}

// assign records that referee ref was handed mt.
func (mt *match) assign(ref string) {
	switch {
	case mt.assigned == "":
		mt.assigned = ref
	case mt.assigned != ref && !slices.Contains(mt.reassigned, ref):
		mt.reassigned = append(mt.reassigned, ref)
	}
}

// nextTicketN numbers a new hand-over of mt at now (ticketN). Under mu.
func (mt *match) nextTicketN(now time.Time) uint64 {
	n := uint64(max(now.UnixMilli(), 0))
	mt.ticketN = max(n, mt.ticketN+1)
	return mt.ticketN
}

// wasAssigned reports whether referee ref was handed mt.
func (mt *match) wasAssigned(ref string) bool {
	return ref != "" && (mt.assigned == ref || slices.Contains(mt.reassigned, ref))
}

// Manager is the League Manager agent.
type Manager struct {
	opts   Options
	caller transport.Caller
	log    *slog.Logger
	clock  func() time.Time

	// closedDone is the done channel of every counted match.
	closedDone chan struct{}
	origin     protocol.Origin

	mu        sync.Mutex
	state     string
	agents    map[string]*agent
	endpoints map[seat]string // a role's contact endpoint → agent id
	players   []*agent
	referees  []*agent
	rounds    [][]*match
	// plannedRounds is how many rounds the league plays: len(rounds) but
	// in a swiss league, whose rounds are paired as it goes.
	plannedRounds int
	byID          map[string]*match // every match of rounds
	table         *table
	round         int // the round being played, 1-based; 0 before the start
	// closedRound is the last round whose end was announced: a manager
	// restored from its store resumes after it.
	closedRound int
	counted     int
	countedUpTo int // the latest round with a counted match
	// recording holds, for each match whose result is being written to
	// the store, a channel closed once it is written or has failed: the
	// write is made without mu, so that the writes of concurrent results
	// can share a commit, and another report of the match waits for it.
	recording map[*match]chan struct{}
	total     int
	startedAt time.Time
	born      time.Time     // when New made it: /health's uptime
	started   chan struct{} // closed by start
	finished  chan struct{} // closed when the league is complete
	// stopping is closed when Run's context ends (the process is being
	// stopped): a get_league_result wait ends then, not at its timeout.
	stopping     chan struct{}
	stoppingOnce sync.Once
	final        *protocol.LeagueCompleted
	slots        *pool
	marks        uint64 // inMatchOrder's calls so far: see agent.mark

	// scheduleAnswers are the turns of the GET_SCHEDULE answers built at
	// once (queries.go).
	scheduleAnswers answerSlots

	// notifyMu guards notified, the results OnResult has been told of; it
	// is never taken with mu held.
	notifyMu   sync.Mutex
	notifyCond *sync.Cond
	notified   int

	// events are what the league's watchers are told (events.go).
	events *Events
	// ratedCache keeps the standings with ratings between results
	// (crosstable.go).
	ratedCache ratedCache
	// healthBook is what the manager learns of its agents (health.go).
	healthBook healthBook
}

// Events are the league's events, for its watchers (/events, the
// dashboard).
func (m *Manager) Events() *Events { return m.events }

// New returns a Manager that calls the agents through caller.
func New(opts Options, caller transport.Caller, logger *slog.Logger) *Manager {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Tokens == nil {
		opts.Tokens = rand.Reader
	}
	if opts.Scoring == (Scoring{}) {
		opts.Scoring = DefaultScoring()
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = transport.DefaultCallTimeout
	}
	if opts.MatchTimeout <= 0 {
		opts.MatchTimeout = 5 * opts.CallTimeout
	}
	if opts.BroadcastConcurrency <= 0 {
		opts.BroadcastConcurrency = 64
	}
	m := &Manager{
		opts: opts, caller: caller, log: logger, clock: opts.Clock,
		state:      StateRegistration,
		agents:     map[string]*agent{},
		endpoints:  map[seat]string{},
		recording:  map[*match]chan struct{}{},
		table:      newTable(opts.Scoring),
		started:    make(chan struct{}),
		finished:   make(chan struct{}),
		stopping:   make(chan struct{}),
		slots:      newPool(),
		closedDone: make(chan struct{}),
		origin:     protocol.Origin{Role: protocol.RoleLeagueManager},
		born:       opts.Clock(),
		events:     NewEvents(opts.LeagueID, 1, DefaultEventBuffer, opts.Clock, nil),
	}
	close(m.closedDone)
	m.notifyCond = sync.NewCond(&m.notifyMu)
	return m
}

// Handler returns the manager's methods.
func (m *Manager) Handler() *transport.Mux {
	mux := transport.NewMux(m.log)
	mux.HandleFunc(string(protocol.TypeRefereeRegisterRequest), m.onRegisterReferee)
	mux.HandleFunc(string(protocol.TypeLeagueRegisterRequest), m.onRegisterPlayer)
	mux.HandleFunc(string(protocol.TypeMatchResultReport), m.onReport)
	mux.HandleFunc(string(protocol.TypeLeagueQuery), m.onQuery)
	mux.HandleFunc(protocol.MethodStartLeague, m.onStartLeague)
	mux.HandleFunc(protocol.MethodGetLeagueStatus, func(context.Context, *transport.Request) (any, error) {
		return m.Status(), nil
	})
	mux.HandleFunc(protocol.MethodGetStandings, m.onGetStandings)
	mux.HandleFunc(MethodAdminQuery, m.onAdminQuery)
	mux.HandleFunc(MethodGetLeagueResult, m.onGetLeagueResult)
	mux.HandleFunc(protocol.MethodPing, func(context.Context, *transport.Request) (any, error) {
		return map[string]string{"status": "ok", "protocol": protocol.Version,
			"sender": "league_manager:" + ManagerID, "timestamp": protocol.FormatTimestamp(m.clock())}, nil
	})
	mux.SetHealth(m.health)
	return mux
}

// Done is closed when the league is complete.
func (m *Manager) Done() <-chan struct{} { return m.finished }

// Result is the LEAGUE_COMPLETED message, once the league is complete.
func (m *Manager) Result() *protocol.LeagueCompleted {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.final
}

func (m *Manager) envelope(t protocol.MessageType, conversation, token string) protocol.Envelope {
	return m.origin.Envelope(ManagerID, t, m.clock(), conversation, m.opts.LeagueID, token)
}

// ---- registration ----

// requestedID is the id a registering agent asks for in its sender, or ""
// ("player:pending", a bare role, or no sender).
func requestedID(sender string) string {
	s, err := protocol.ParseSender(sender)
	if err != nil || s.ID == "pending" {
		return ""
	}
	return s.ID
}

// admits checks the auth_token of a registration against want, the token
// the league admits agents of its kind (who) by, its name: none is E003,
// another E012; with no such token ("") the league admits anyone.
func admits(got, want, who, name string) error {
	switch {
	case want == "":
		return nil
	case got == "":
		return protocol.Errorf(protocol.ErrAuthenticationFailed, "this league admits %s that carry its %s as auth_token", who, name)
	case !protocol.SameSecret(got, want):
		return protocol.Errorf(protocol.ErrAuthTokenInvalid, "auth_token is not this league's %s", name)
	}
	return nil
}

func (m *Manager) onRegisterReferee(ctx context.Context, r *transport.Request) (any, error) {
	req := r.Msg.(*protocol.RefereeRegisterRequest)
	if err := admits(req.AuthToken, m.opts.RefereeToken, "referees", "referee token"); err != nil {
		return nil, err
	}
	meta := req.RefereeMeta
	a, token, rejected, err := m.register(ctx, protocol.RoleReferee, req.Envelope, meta.DisplayName, meta.ContactEndpoint,
		meta.GameTypes, meta.MaxConcurrentMatches, req.InstanceSecret, m.grantsTickets(meta.MatchTickets))
	if err != nil {
		return nil, err
	}
	resp := &protocol.RefereeRegisterResponse{
		Envelope: m.envelope(protocol.TypeRefereeRegisterResponse, req.ConversationID, token),
	}
	if rejected != "" {
		resp.Status, resp.Reason = protocol.StatusRejected, &rejected
		return resp, nil
	}
	resp.Status, resp.RefereeID, resp.SignsMessages = protocol.StatusAccepted, a.id, m.alwaysSigns()
	resp.MatchTickets = m.ticketsOf(a)
	resp.Reason = m.givenAnother(ctx, a)
	m.log.LogAttrs(ctx, slog.LevelInfo, "referee registered", slog.String("referee_id", a.id),
		slog.String("endpoint", a.endpoint), slog.Int("max_concurrent_matches", min(meta.MaxConcurrentMatches, MaxRefereeCapacity)),
		slog.String("conversation_id", req.ConversationID))
	return resp, nil
}

func (m *Manager) onRegisterPlayer(ctx context.Context, r *transport.Request) (any, error) {
	req := r.Msg.(*protocol.LeagueRegisterRequest)
	if err := admits(req.AuthToken, m.opts.RegistrationToken, "players", "registration token"); err != nil {
		return nil, err
	}
	meta := req.PlayerMeta
	a, token, rejected, err := m.register(ctx, protocol.RolePlayer, req.Envelope, meta.DisplayName, meta.ContactEndpoint,
		meta.GameTypes, 0, req.InstanceSecret, m.grantsTickets(meta.MatchTickets))
	if err != nil {
		return nil, err
	}
	resp := &protocol.LeagueRegisterResponse{
		Envelope: m.envelope(protocol.TypeLeagueRegisterResponse, req.ConversationID, token),
	}
	if rejected != "" {
		resp.Status, resp.Reason = protocol.StatusRejected, &rejected
		if rejected == registrationClosed && meta.MatchTickets {
			// Only to a player that speaks this implementation's
			// extensions (it asked for tickets): a strict one refuses
			// fields it does not know.
			resp.ErrorCode = protocol.ErrInvalidGameState
		}
		return resp, nil
	}
	resp.Status, resp.PlayerID, resp.SignsMessages = protocol.StatusAccepted, a.id, m.alwaysSigns()
	resp.MatchTickets = m.ticketsOf(a)
	resp.Reason = m.givenAnother(ctx, a)
	m.log.LogAttrs(ctx, slog.LevelInfo, "player registered", slog.String("player_id", a.id),
		slog.String("endpoint", a.endpoint), slog.String("conversation_id", req.ConversationID))
	return resp, nil
}

// givenAnother is the reason an accepted agent is given, when it asked
// for an id another agent held and got another; nil otherwise.
func (m *Manager) givenAnother(ctx context.Context, a *agent) *string {
	if a.asked == "" {
		return nil
	}
	why := fmt.Sprintf("asked for %s, which another agent holds: registered as %s", a.asked, a.id)
	m.log.LogAttrs(ctx, slog.LevelWarn, "id asked for is taken; another given", slog.String("asked", a.asked),
		slog.String("given", a.id), slog.String("endpoint", a.endpoint))
	return &why
}

// alwaysSigns reports whether the manager will sign every message to an
// agent it registers now with the agent's token, restarts included, and
// so may tell the agent so (signs_messages): one without a store never
// restarts and keeps the token; one with a store makes it again from its
// token key. One with a store and no key would know only the token's hash
// after a restart, and must not promise.
func (m *Manager) alwaysSigns() bool { return m.opts.Store == nil || m.opts.TokenKey != nil }

// grantsTickets reports whether an agent registering now that asks for
// match tickets (asked) gets them. Only from a manager that will know the
// player's token after a restart of its own (alwaysSigns): one that could
// not make the tickets again would have its players refuse every referee.
func (m *Manager) grantsTickets(asked bool) bool { return asked && m.alwaysSigns() }

// ticketsOf reports whether a gets match tickets.
func (m *Manager) ticketsOf(a *agent) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return a.tickets
}

// MaxRefereeCapacity bounds the matches a referee is given at once,
// whatever max_concurrent_matches it registers with: the manager keeps a
// slot for each, and one registration of 2^62 slots (no document bounds
// the number) took its memory and crashed it, again on every restart from
// its store.
const MaxRefereeCapacity = 1000

// ofThisLeague refuses a message that names another league (E008: the
// league it asks about does not exist here); one that names none is this
// league's.
func (m *Manager) ofThisLeague(env protocol.Envelope) error {
	if env.LeagueID == "" || env.LeagueID == m.opts.LeagueID {
		return nil
	}
	return &protocol.Error{Code: protocol.ErrLeagueNotFound,
		Detail:  fmt.Sprintf("this manager runs league %q, not %q", m.opts.LeagueID, protocol.Clip(env.LeagueID)),
		Context: map[string]any{"available_leagues": []string{m.opts.LeagueID}}}
}

// registrationClosed is the reason a player registering after the start
// is rejected with, under its own code (E005, the league's state: not
// E003, which says its credentials are wrong).
const registrationClosed = "registration is closed: the league has started"

// register records an agent. It refuses with an error what the agent must
// fix (another league, an id or endpoint already registered) and rejects
// with a reason what it cannot (registration closed, no even_odd, the
// league full).
func (m *Manager) register(ctx context.Context, role protocol.Role, env protocol.Envelope, name, endpoint string, games []string,
	capacity int, secret string, tickets bool) (a *agent, token, rejected string, err error) {
	if err := m.ofThisLeague(env); err != nil {
		return nil, "", "", err
	}
	if !contains(games, protocol.GameEvenOdd) {
		return nil, "", "this league plays even_odd, which game_types does not list", nil
	}
	if capacity > MaxRefereeCapacity {
		m.log.LogAttrs(ctx, slog.LevelWarn, "referee's max_concurrent_matches lowered", slog.Int("asked", capacity),
			slog.Int("given", MaxRefereeCapacity), slog.String("endpoint", endpoint))
		capacity = MaxRefereeCapacity
	}
	proof := protocol.InstanceProof(secret)
	if a := m.rejoining(role, endpoint); a != nil && proof != "" && m.restarted(ctx, a, proof) {
		token, err := m.rejoin(ctx, a, proof, capacity, tickets)
		if err != nil {
			return nil, "", "", err
		}
		return a, token, "", nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if role == protocol.RolePlayer && m.state != StateRegistration {
		return nil, "", registrationClosed, nil
	}
	if owner, taken := m.endpoints[seat{role, endpoint}]; taken {
		return nil, "", "", &protocol.Error{Code: protocol.ErrDuplicateRegistration,
			Detail:  fmt.Sprintf("contact_endpoint %s is already registered as %s", protocol.Clip(endpoint), owner),
			Context: map[string]any{"agent_id": owner}}
	}
	// An id asked for is kept when free. One another agent holds (it may
	// have been given it, asking for none, before this one came) is not a
	// reason to turn this agent away: it gets the next free id instead,
	// and its response says so, so that agents that ask for ids and agents
	// that do not can play in one league.
	id, asked := requestedID(env.Sender), ""
	if _, taken := m.agents[id]; id == "" || taken {
		asked, id = id, m.nextIDLocked(role)
	}
	if role == protocol.RolePlayer && m.opts.MaxPlayers > 0 && len(m.players) >= m.opts.MaxPlayers {
		return nil, "", "the league is full: it takes at most " + count(m.opts.MaxPlayers, "player"), nil
	}
	if role == protocol.RoleReferee && m.opts.MaxReferees > 0 && len(m.referees) >= m.opts.MaxReferees {
		return nil, "", "the league is full: it takes at most " + count(m.opts.MaxReferees, "referee"), nil
	}
	if role == protocol.RoleReferee && m.state == StateCompleted {
		return nil, "", "the league is over", nil
	}
	token, nonce, err := m.newToken(role, id)
	if err != nil {
		return nil, "", "", err
	}
	a = &agent{id: id, name: name, endpoint: endpoint, role: role, tokenHash: sha256.Sum256([]byte(token)),
		nonce: nonce, capacity: capacity, registeredAt: m.clock(), restarted: make(chan struct{}), instance: proof,
		asked: asked, tickets: tickets}
	a.setToken(token)
	if a.name == "" {
		a.name = id
	}
	if err := m.persist(ctx, "registration", func(ctx context.Context, s Store) error {
		return s.SaveAgent(ctx, agentRecord(a))
	}); err != nil {
		return nil, "", "", err
	}
	m.agents[id] = a
	m.endpoints[seat{role, endpoint}] = id
	if role == protocol.RoleReferee {
		m.referees = append(m.referees, a)
		m.slots.add(a, capacity)
	} else {
		m.players = append(m.players, a)
		m.table.add(id, a.name)
	}
	m.events.Publish(EventRegistration, RegistrationEvent{Role: role, AgentID: id, DisplayName: a.name, Endpoint: endpoint})
	m.maybeStartLocked(ctx, false)
	return a, token, "", nil
}

// instanceTag is what START_MATCH tells a referee of a's registration
// (StartMatch.PlayerAInstance): it changes when a registers again after a
// restart, since its token does. A hash of the token's hash, shortened:
// nothing of the token. It is made once a token, not once a match. Under
// m.mu.
func (a *agent) instanceTag() string {
	if a.tag == "" || a.tagOf != a.tokenHash {
		h := sha256.Sum256(a.tokenHash[:])
		a.tag, a.tagOf = hex.EncodeToString(h[:8]), a.tokenHash
	}
	return a.tag
}

// rejoining is the agent a registration may be of, registering again
// after a restart of its own (its token is lost with its memory): one of
// the same role at the same contact_endpoint. Whether it restarted is for
// restarted to say.
func (m *Manager) rejoining(role protocol.Role, endpoint string) *agent {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, taken := m.endpoints[seat{role, endpoint}]
	if !taken || m.state == StateCompleted {
		return nil // a completed league has nothing more to tell anyone
	}
	// Whatever id it asks for: the endpoint is the agent's seat, and one
	// registered there by a stranger first (squatting it) goes to the
	// agent that proves the endpoint is its own.
	return m.agents[id]
}

// seat is what a registration holds: a contact endpoint, in a role. A
// player registered first at a referee's endpoint (or the other way
// round) does not keep the referee out: each role's seats are its own.
type seat struct {
	role     protocol.Role
	endpoint string
}

// restartedTimeout bounds the question restarted asks.
const restartedTimeout = 2 * time.Second

// restarted reports whether the registration that carries the instance
// secret whose proof is proof is a's, restarted or asking again: the agent
// at a's endpoint answers get_registration_status (as this
// implementation's agents do) with that proof, which no one but the holder
// of the secret can match, and says it is not registered (it is waiting
// for this answer; rejoin gives it the token it was given if its first
// answer was lost). An endpoint that shows another proof, or none, or
// says it is registered (a registration replayed, or sent by another
// manager the secret was shown to, while the agent runs), or does not
// answer, is refused as before (E017): no one but the agent, while it
// registers, can take its place.
func (m *Manager) restarted(ctx context.Context, a *agent, proof string) bool {
	ctx, cancel := context.WithTimeout(ctx, min(restartedTimeout, m.opts.CallTimeout))
	defer cancel()
	var st struct {
		Registered *bool  `json:"registered"`
		Instance   string `json:"instance"`
	}
	err := m.caller.Call(ctx, a.endpoint, protocol.MethodGetRegistrationStatus, map[string]any{"protocol": protocol.Version}, &st)
	return err == nil && st.Registered != nil && !*st.Registered &&
		subtle.ConstantTimeCompare([]byte(st.Instance), []byte(proof)) == 1
}

// rejoin gives a, whose instance (proof) registers again, its token: the
// one it was given already if this instance was (an answer it did not
// get), else a new one in place of the one it lost with a restart,
// recorded before it is answered; the old one is worth nothing from then
// on. A referee's matches in flight are lost with its memory: they are
// handed out again at once (agent.restarted), not after the match
// timeout. A referee's capacity is the one it registers with now: it may
// have been restarted with another --max-concurrent-matches.
func (m *Manager) rejoin(ctx context.Context, a *agent, proof string, capacity int, tickets bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.endpoints[seat{a.role, a.endpoint}] != a.id {
		return "", protocol.Errorf(protocol.ErrDuplicateRegistration, "contact_endpoint %s changed hands meanwhile", protocol.Clip(a.endpoint))
	}
	if m.state == StateCompleted {
		return "", protocol.Errorf(protocol.ErrDuplicateRegistration, "%s is registered, and the league is over", a.id)
	}
	if a.instance == proof && a.token != "" {
		return a.token, nil
	}
	token, nonce, err := m.newToken(a.role, a.id)
	if err != nil {
		return "", err
	}
	hash := sha256.Sum256([]byte(token))
	if a.role != protocol.RoleReferee {
		capacity = a.capacity
	}
	if err := m.persist(ctx, "registration", func(ctx context.Context, s Store) error {
		return s.SaveRejoin(ctx, a.id, hash, nonce, capacity, tickets)
	}); err != nil {
		return "", err
	}
	a.tokenHash, a.nonce, a.instance = hash, nonce, proof
	// What it asks for now: it may have been restarted as another build.
	a.tickets = tickets
	// Back: calls to it are not refused by a breaker its absence opened.
	if m.opts.ResetBreaker != nil {
		m.opts.ResetBreaker(a.endpoint)
	}
	if capacity != a.capacity {
		m.log.LogAttrs(ctx, slog.LevelInfo, "referee's max_concurrent_matches changed", slog.String("referee_id", a.id),
			slog.Int("from", a.capacity), slog.Int("to", capacity))
		m.slots.resize(a, a.capacity, capacity)
		a.capacity = capacity
	}
	a.setToken(token)
	close(a.restarted)
	a.restarted = make(chan struct{})
	if a.role == protocol.RoleReferee {
		m.slots.heard(a) // restarted: given matches again
	}
	m.log.LogAttrs(ctx, slog.LevelWarn, "agent registered again after a restart of its own",
		slog.String("agent", string(a.role)+":"+a.id), slog.String("endpoint", a.endpoint))
	return token, nil
}

func (m *Manager) nextIDLocked(role protocol.Role) string {
	prefix := "P"
	if role == protocol.RoleReferee {
		prefix = "REF"
	}
	for n := 1; ; n++ {
		id := fmt.Sprintf("%s%02d", prefix, n)
		if _, taken := m.agents[id]; !taken {
			return id
		}
	}
}

// newToken makes a token of 128 bits in the spec's tok_{type}_{id}_ form:
// random, or with Options.TokenKey derived from the key and random bits,
// the nonce, which is kept with the token's hash.
func (m *Manager) newToken(role protocol.Role, id string) (token string, nonce []byte, err error) {
	b := make([]byte, TokenNonceSize)
	if _, err := io.ReadFull(m.opts.Tokens, b); err != nil {
		return "", nil, protocol.Errorf(protocol.ErrInternal, "no randomness for a token")
	}
	if m.opts.TokenKey == nil {
		return "tok_" + string(role) + "_" + id + "_" + hex.EncodeToString(b), nil, nil
	}
	return deriveToken(m.opts.TokenKey, role, id, b), b, nil
}

// authenticate checks that env comes from a registered agent of one of the
// roles, with its own token.
func (m *Manager) authenticate(env *protocol.Envelope, roles ...protocol.Role) (*agent, error) {
	a, err := m.verify(env)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if a.token == "" {
		// A manager restored from its store knows only the hash; the agent
		// has just shown the token, so it can be sent the token again.
		a.setToken(env.AuthToken)
	}
	m.mu.Unlock()
	if !containsRole(roles, a.role) {
		return nil, protocol.Errorf(protocol.ErrAuthenticationFailed, "a %s may not send this", a.role)
	}
	return a, nil
}

// Vouches proves that r comes from an agent registered in this league,
// as its sender says, with that agent's own token, and names it as
// "<role>:<id>": for the rate limit (transport.RateLimit.Trusted).
func (m *Manager) Vouches(r *transport.Request) (string, bool) {
	if r.Env == nil {
		return "", false
	}
	a, err := m.verify(r.Env)
	if err != nil {
		return "", false
	}
	return string(a.role) + ":" + a.id, true
}

// verify finds the registered agent env's sender names and checks that
// env carries its token.
func (m *Manager) verify(env *protocol.Envelope) (*agent, error) {
	s, err := protocol.ParseSender(env.Sender)
	if err != nil || s.ID == "" {
		return nil, protocol.Errorf(protocol.ErrAuthenticationFailed, "sender must name a registered agent, as <role>:<id>")
	}
	if env.AuthToken == "" {
		return nil, protocol.Errorf(protocol.ErrAuthenticationFailed, "auth_token is required after registration")
	}
	m.mu.Lock()
	a := m.agents[s.ID]
	var want [sha256.Size]byte
	if a != nil {
		want = a.tokenHash // replaced when the agent registers again (rejoin)
	}
	m.mu.Unlock()
	if a == nil || a.role != s.Role {
		return nil, &protocol.Error{Code: protocol.ErrAgentNotRegistered,
			Detail: fmt.Sprintf("%s is not registered in league %s", s, m.opts.LeagueID)}
	}
	h := sha256.Sum256([]byte(env.AuthToken))
	if subtle.ConstantTimeCompare(h[:], want[:]) != 1 {
		return nil, protocol.Errorf(protocol.ErrAuthTokenInvalid, "auth_token does not belong to %s", s)
	}
	m.seen(a)
	return a, nil
}

// ---- starting ----

// errNotReady is why a league cannot start yet.
var errNotReady = errors.New("a league needs at least 2 players and 1 referee")

// Start starts the league now if it can: with at least two players and one
// referee. Starting a league that runs or has finished does nothing.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startLocked(ctx)
}

// startLocked starts the league, if it can, with m.mu held, which it lets
// go while it makes and stores the schedule (at 1000 players, 499,500
// matches and seconds of writing): meanwhile the league is StateStarting,
// which closes registration and shows no schedule, and a second start
// does nothing. Once the schedule is stored the league runs; if it could
// not be, the league is registering again, and the store, if it holds
// part of the schedule, says the league is starting (a manager restored
// from it writes it again whole: Restore).
func (m *Manager) startLocked(ctx context.Context) error {
	if m.state != StateRegistration {
		return nil // running, over, or starting
	}
	if len(m.players) < 2 || len(m.referees) < 1 {
		return &protocol.Error{Code: protocol.ErrInvalidGameState, Detail: errNotReady.Error() +
			fmt.Sprintf(" (now %d players, %d referees)", len(m.players), len(m.referees))}
	}
	ids := make([]string, len(m.players))
	for i, p := range m.players {
		ids[i] = p.id
	}
	// A start that Restore resumes keeps the time it began at.
	now := m.startedAt
	if now.IsZero() {
		now = m.clock()
	}
	sort.Strings(ids)
	if err := m.opts.Format.Validate(len(ids)); err != nil {
		return &protocol.Error{Code: protocol.ErrInvalidGameState, Detail: err.Error()}
	}
	m.state = StateStarting
	built, err := m.makeSchedule(ctx, ids, now)
	if err != nil {
		m.state = StateRegistration
		return err
	}
	m.rounds, m.byID, m.total = built.rounds, built.byID, built.total
	m.planLocked()
	m.state, m.startedAt = StateRunning, now
	close(m.started)
	m.events.Publish(EventLeagueStarted, LeagueStartedEvent{Players: len(m.players), Referees: len(m.referees),
		Rounds: m.plannedRounds, Matches: m.total})
	m.log.LogAttrs(context.Background(), slog.LevelInfo, "league started", slog.String("league_id", m.opts.LeagueID),
		slog.Int("players", len(m.players)), slog.Int("referees", len(m.referees)),
		slog.Int("rounds", m.plannedRounds), slog.Int("matches", m.total), slog.String("format", m.opts.Format.String()),
		slog.Uint64("seed", m.opts.Seed))
	return nil
}

// maybeStartLocked starts the league when the minimum is reached, or, at
// the end of the registration window, when it can start at all.
func (m *Manager) maybeStartLocked(ctx context.Context, windowOver bool) {
	refs := max(m.opts.MinReferees, 1)
	if (m.opts.MinPlayers > 0 && len(m.players) >= m.opts.MinPlayers && len(m.referees) >= refs) ||
		(windowOver && len(m.players) >= 2 && len(m.referees) >= 1) {
		if err := m.startLocked(ctx); err != nil {
			// No one asked for this start to be told why it failed.
			m.log.LogAttrs(ctx, slog.LevelError, "the league cannot start", slog.String("error", err.Error()))
		}
	}
}

func (m *Manager) onStartLeague(ctx context.Context, r *transport.Request) (any, error) {
	if err := m.checkAdmin(r); err != nil {
		return nil, err
	}
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	st := m.Status()
	status := "STARTED"
	if st.State == StateCompleted {
		status = StateCompleted
	}
	return map[string]any{
		"status": status, "league_id": st.LeagueID, "state": st.State,
		"total_rounds": st.TotalRounds, "total_matches": st.TotalMatches,
		"players": st.Players, "referees": st.Referees,
	}, nil
}

// checkAdmin lets an operator call through: with an admin token set, the
// call must carry it as auth_token (none is E003, as for an agent; another
// is E012); without one, it must come from this host.
func (m *Manager) checkAdmin(r *transport.Request) error {
	if m.opts.AdminToken != "" {
		if r.Env.AuthToken == "" {
			return protocol.Errorf(protocol.ErrAuthenticationFailed, "admin operations need the admin token as auth_token")
		}
		if !protocol.SameSecret(r.Env.AuthToken, m.opts.AdminToken) {
			return protocol.Errorf(protocol.ErrAuthTokenInvalid, "admin operations need the admin token as auth_token")
		}
		return nil
	}
	if !r.Peer.Loopback {
		return protocol.Errorf(protocol.ErrAuthenticationFailed, "admin operations are open only to this host when no admin token is set")
	}
	return nil
}

// Status is what get_league_status reports.
type Status struct {
	LeagueID      string `json:"league_id"`
	State         string `json:"state"`
	CurrentRound  int    `json:"current_round"`
	TotalRounds   int    `json:"total_rounds"`
	TotalMatches  int    `json:"total_matches"`
	MatchesPlayed int    `json:"matches_completed"`
	Players       int    `json:"players"`
	Referees      int    `json:"referees"`
	// MaxPlayers is Options.MaxPlayers, absent when there is no limit:
	// `leaguectl start` will not wait for more.
	MaxPlayers int `json:"max_players,omitzero"`
}

// Status reports where the league is.
func (m *Manager) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Status{
		LeagueID: m.opts.LeagueID, State: m.state, CurrentRound: m.round,
		TotalRounds: m.plannedRounds, TotalMatches: m.total, MatchesPlayed: m.counted,
		Players: len(m.players), Referees: len(m.referees), MaxPlayers: m.opts.MaxPlayers,
	}
}

func (m *Manager) health() any {
	st := m.Status()
	return map[string]any{
		"status": "ok", "role": string(protocol.RoleLeagueManager), "id": ManagerID,
		"league_id": st.LeagueID, "state": st.State, "players": st.Players, "referees": st.Referees,
		"current_round": st.CurrentRound, "matches_completed": st.MatchesPlayed, "total_matches": st.TotalMatches,
		"uptime_seconds": int(m.clock().Sub(m.born).Seconds()), // the process's, as the other agents say
	}
}

// tokenFor is the token to send a, "" when it is not known (a manager
// restarted on its store knows only hashes until the agent authenticates).
func (m *Manager) tokenFor(a *agent) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return a.token
}

// count is "1 player", "2 players".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsRole(list []protocol.Role, r protocol.Role) bool {
	for _, x := range list {
		if x == r {
			return true
		}
	}
	return false
}
