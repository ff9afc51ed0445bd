// Package referee is the Referee agent: it registers with a league manager,
// accepts matches with START_MATCH, plays each one (invitations and parity
// calls to both players at once, a drawn number, the even/odd rule), tells
// the players with GAME_OVER, and reports the result until the manager
// acknowledges it. A player that does not answer in time, declines, or
// answers an invalid choice gets a technical loss.
package referee

import (
	"cmp"
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// Version is the agent version sent at registration.
const Version = "1.0.0"

// MethodManualRegister registers the referee, again, with the manager its
// params name: {"manager_endpoint": URL}. Only callers on the referee's own
// host may use it.
const MethodManualRegister = protocol.MethodManualRegister

// Registration states reported by health and get_registration_status.
const (
	StateRegistering = "REGISTERING"
	StateRegistered  = "REGISTERED"
	StateFailed      = "REGISTRATION_FAILED"
	StateCompleted   = "LEAGUE_COMPLETED"
)

// Scoring is the points of a result, used in the score of a report.
type Scoring struct{ Win, Draw, Loss int }

// Options configure a Referee.
type Options struct {
	// RequestedID is the id asked for at registration; empty lets the
	// manager choose.
	RequestedID   string
	DisplayName   string
	MaxConcurrent int
	LeagueID      string
	// Seed is the league seed: with the match id it determines the drawn
	// number.
	Seed            uint64
	ManagerEndpoint string
	Endpoint        string
	// JoinTimeout bounds the invitation phase, ChoiceTimeout the parity
	// phase, CallTimeout every other call (GAME_OVER, GAME_ERROR, a report
	// attempt, registration).
	JoinTimeout   time.Duration
	ChoiceTimeout time.Duration
	CallTimeout   time.Duration
	// Retry paces registration and report attempts.
	Retry   transport.Retry
	Scoring Scoring
	Clock   func() time.Time
	// KeepFinished is how many finished matches the referee remembers, for
	// get_match_state and for a START_MATCH repeated by a manager that
	// missed the report (0: DefaultKeepFinished). The manager keeps every
	// result; a referee of a long league does not grow with it.
	KeepFinished int
	// ResetBreaker, when set, closes the circuit breaker its caller keeps
	// for an endpoint (transport.Client.ResetBreaker): called for a
	// player that registered again after a restart, which an open breaker
	// would otherwise shut out until its reset timeout.
	ResetBreaker func(endpoint string)
	// RegistrationToken is the auth_token of its registration: the
	// league's referee token, for a manager that admits only the referees
	// given it (league.Options.RefereeToken); empty for one that admits
	// any.
	RegistrationToken string
	// OnRegistered, when set, is called with the referee's id after each
	// registration the manager accepts (cmd puts it in the log lines'
	// agent_id).
	OnRegistered func(id string)
	// InstanceSecret is the secret the referee registers with, and shows
	// the proof of in get_registration_status (protocol.InstanceProof),
	// so that, restarted, it can register again as itself: drawn at New
	// when empty.
	InstanceSecret string
	// PlayerEndpoints are players' endpoints by id, for a manager whose
	// START_MATCH names the players but not their endpoints, as
	// api-reference §4.1's example and dialect-a's manager do. An
	// endpoint the START_MATCH gives is used before these. New copies it.
	PlayerEndpoints map[string]string
}

// DefaultKeepFinished is the number of finished matches a referee
// remembers by default.
const DefaultKeepFinished = 4096

// Referee is the Referee agent.
type Referee struct {
	opts   Options
	caller transport.Caller
	log    *slog.Logger
	clock  func() time.Time

	mu    sync.Mutex
	id    string
	token string
	// shown is the token players are shown instead of token
	// (playerEnvelope).
	shown string
	// signed says the manager signs its messages with token: it said so
	// at registration (signs_messages), or one has carried token. A
	// message without it is then not the manager's (checkManager).
	signed   bool
	leagueID string
	// manager is the endpoint of the manager the referee registered with
	// last (before that, the one of its options): reports go there.
	manager string
	// announced is the league_manager_endpoint of the last START_MATCH
	// signed with the referee's token: where the manager says it is. A
	// report goes there when manager does not answer (movedManager).
	announced string
	// manualRegs counts the registrations manual_register made.
	manualRegs int
	state      string
	lastErr    string
	life       *lifetime // Run's: matches live in it
	matches    map[string]*match
	// instances is the instance START_MATCH last gave of each player endpoint
	// (noteInstancesLocked).
	instances map[string]string
	// finished lists the finished matches still in matches, oldest first.
	finished []string
	active   int
	done     chan struct{}
	// registered is closed once the referee has its id and token.
	registered chan struct{}
	started    time.Time
	inflight   sync.WaitGroup
	origin     protocol.Origin
}

// lifetime is a Run of the referee: its context, in which matches live.
type lifetime struct {
	ctx context.Context
}

// GameOverGrace is how long a match's report waits for the players to
// answer its GAME_OVER before it goes anyway. The players are told first,
// so that a player hears its result before the round's end; but the answer
// is an acknowledgement, and a player slow to give it (or that never does)
// would hold every round up by a call timeout: the round's end waits for
// the report.
const GameOverGrace = 500 * time.Millisecond

func (r *Referee) newLifetime(ctx context.Context) *lifetime {
	return &lifetime{ctx: ctx}
}

// New returns a Referee that calls others through caller.
func New(opts Options, caller transport.Caller, logger *slog.Logger) *Referee {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.MaxConcurrent < 1 {
		opts.MaxConcurrent = 1
	}
	if opts.KeepFinished <= 0 {
		opts.KeepFinished = DefaultKeepFinished
	}
	if opts.DisplayName == "" {
		opts.DisplayName = "Referee " + opts.RequestedID
		if opts.RequestedID == "" {
			opts.DisplayName = protocol.NameByEndpoint("Referee", opts.Endpoint)
		}
	}
	if opts.Scoring == (Scoring{}) {
		opts.Scoring = Scoring{Win: 3, Draw: 1, Loss: 0}
	}
	if opts.InstanceSecret == "" {
		opts.InstanceSecret = protocol.NewInstanceSecret()
	}
	opts.PlayerEndpoints = maps.Clone(opts.PlayerEndpoints)
	return &Referee{
		origin: protocol.Origin{Role: protocol.RoleReferee},
		opts:   opts, caller: caller, log: logger, clock: opts.Clock,
		leagueID:   opts.LeagueID,
		manager:    opts.ManagerEndpoint,
		state:      StateRegistering,
		matches:    map[string]*match{},
		instances:  map[string]string{},
		done:       make(chan struct{}),
		registered: make(chan struct{}),
		started:    opts.Clock(),
	}
}

// ID is the referee's id: assigned at registration, else the one it asked for.
func (r *Referee) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idLocked()
}

func (r *Referee) idLocked() string {
	if r.id != "" {
		return r.id
	}
	if r.opts.RequestedID != "" {
		return r.opts.RequestedID
	}
	return "pending"
}

// Done is closed when LEAGUE_COMPLETED has arrived.
func (r *Referee) Done() <-chan struct{} { return r.done }

// Run registers, retrying with backoff while the manager cannot be reached,
// then referees the matches it is given until the league ends or ctx does.
// It returns when every match it started has finished.
func (r *Referee) Run(ctx context.Context) error {
	// life ends when Run returns, after the matches in flight: a
	// START_MATCH waiting for the registration then gives up.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	r.life = r.newLifetime(ctx)
	r.mu.Unlock()
	defer r.inflight.Wait()
	// Once Run returns nobody waits for a match any more: START_MATCH is
	// refused from here on, so that no match starts after (or while) the
	// wait for those in flight, which is what Run promises.
	defer func() {
		r.mu.Lock()
		r.life = nil
		r.mu.Unlock()
	}()
	// manual_register may register the referee while Run waits to retry:
	// the wait then ends at once.
	regCtx, stopRetrying := context.WithCancel(ctx)
	go func() {
		select {
		case <-r.registered:
			stopRetrying()
		case <-regCtx.Done():
		}
	}()
	err := r.opts.Retry.Forever().Do(regCtx, r.registerOnce, func(err error, next time.Duration) {
		r.log.LogAttrs(ctx, slog.LevelInfo, "registration failed, retrying",
			slog.String("error", err.Error()), slog.Duration("retry_in", next))
	})
	stopRetrying()
	if r.isRegistered() {
		err = nil
	}
	if err != nil {
		r.mu.Lock()
		r.state, r.lastErr = StateFailed, err.Error()
		r.mu.Unlock()
		return fmt.Errorf("referee registration: %w", err)
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// isRegistered reports whether the referee has its id and token.
func (r *Referee) isRegistered() bool {
	select {
	case <-r.registered:
		return true
	default:
		return false
	}
}

// registerOnce is Run's registration attempt: none once the referee is
// registered, which manual_register may have done meanwhile.
func (r *Referee) registerOnce(ctx context.Context) error {
	if r.isRegistered() {
		return nil
	}
	return r.Register(ctx)
}

// Register makes one registration attempt with the referee's manager.
func (r *Referee) Register(ctx context.Context) error {
	return r.registerWith(ctx, r.managerEndpoint(), false)
}

func (r *Referee) managerEndpoint() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.manager
}

// registerWith registers with the manager at endpoint, which from then on
// is the referee's manager. Attempts are not serialized, so that
// manual_register never waits for an attempt of Run's to time out; one of
// Run's that succeeds after a manual_register did is dropped, and the
// manager the operator named stays.
func (r *Referee) registerWith(ctx context.Context, endpoint string, manual bool) error {
	r.mu.Lock()
	manualRegs := r.manualRegs
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.callTimeout())
	defer cancel()
	req := &protocol.RefereeRegisterRequest{
		Envelope: protocol.Envelope{
			Protocol:       protocol.Version,
			MessageType:    protocol.TypeRefereeRegisterRequest,
			Sender:         "referee:" + r.ID(),
			Timestamp:      protocol.FormatTimestamp(r.clock()),
			ConversationID: "conv-register-" + r.ID(),
			LeagueID:       r.opts.LeagueID,
			AuthToken:      r.opts.RegistrationToken,
		},
		RefereeMeta: &protocol.RefereeMeta{
			DisplayName:          r.opts.DisplayName,
			Version:              Version,
			ProtocolVersion:      protocol.SpecVersion,
			AgentVersion:         Version,
			GameTypes:            []string{protocol.GameEvenOdd},
			ContactEndpoint:      r.opts.Endpoint,
			MaxConcurrentMatches: r.opts.MaxConcurrent,
			MatchTickets:         true,
		},
		InstanceSecret: r.opts.InstanceSecret,
	}
	var resp protocol.RefereeRegisterResponse
	// Asked again without our extensions (the instance secret, match
	// tickets) if refused.
	err := transport.CallExtended(ctx, r.caller, endpoint, protocol.MethodRegisterReferee, req, &resp, func() any {
		plain, meta := *req, *req.RefereeMeta
		meta.MatchTickets = false
		plain.InstanceSecret, plain.RefereeMeta = "", &meta
		return &plain
	})
	if err != nil {
		return err
	}
	if err := protocol.CheckRegistration(resp.Status, "", resp.Reason, resp.RefereeID, resp.AuthToken); err != nil {
		return err
	}
	r.mu.Lock()
	if !manual && r.manualRegs != manualRegs {
		r.mu.Unlock()
		return nil
	}
	if manual {
		r.manualRegs++
	}
	r.id, r.token, r.state, r.manager = resp.RefereeID, resp.AuthToken, StateRegistered, endpoint
	r.announced = "" // what another manager said of itself is nothing to this one's token
	// A manager that says it signs its messages (ours) is one from the
	// start; any other is one once a message has carried the new token.
	r.signed = resp.SignsMessages
	r.shown = protocol.ShownToken(protocol.RoleReferee, resp.RefereeID, resp.AuthToken)
	if resp.LeagueID != "" {
		r.leagueID = resp.LeagueID
	}
	select {
	case <-r.registered:
	default:
		close(r.registered)
	}
	r.mu.Unlock()
	if r.opts.OnRegistered != nil {
		r.opts.OnRegistered(resp.RefereeID)
	}
	r.log.LogAttrs(ctx, slog.LevelInfo, "registered", slog.String("referee_id", resp.RefereeID),
		slog.String("manager", endpoint))
	return nil
}

// onManualRegister is manual_register: it registers the referee with the
// manager at params.manager_endpoint (the request Register sends), and
// from then on reports to that manager. Only callers on this host may move
// a referee to another manager (E003); an endpoint that cannot be one is
// E018.
func (r *Referee) onManualRegister(ctx context.Context, req *transport.Request) (any, error) {
	if !req.Peer.Loopback {
		return nil, protocol.Errorf(protocol.ErrAuthenticationFailed, "%s is open only to callers on the referee's host", MethodManualRegister)
	}
	var p struct {
		ManagerEndpoint string `json:"manager_endpoint"`
	}
	if req.Params.Kind() == '{' {
		if err := protocol.DecodeInto(req.Params, &p); err != nil {
			return nil, err
		}
	}
	if p.ManagerEndpoint == "" {
		return nil, &protocol.Error{Code: protocol.ErrInvalidMessageFormat, Detail: "manager_endpoint: is required",
			Fields: []protocol.FieldError{{Field: "manager_endpoint", Reason: "is required"}}}
	}
	if err := protocol.CheckEndpoint(p.ManagerEndpoint); err != nil {
		return nil, &protocol.Error{Code: protocol.ErrInvalidEndpoint, Detail: "manager_endpoint: " + err.Error(),
			Fields: []protocol.FieldError{{Field: "manager_endpoint", Reason: err.Error()}}}
	}
	if err := r.registerWith(ctx, p.ManagerEndpoint, true); err != nil {
		return nil, err
	}
	out := r.registration()
	r.mu.Lock()
	out["league_id"] = r.leagueID
	r.mu.Unlock()
	return out, nil
}

func (r *Referee) callTimeout() time.Duration {
	if r.opts.CallTimeout > 0 {
		return r.opts.CallTimeout
	}
	return transport.DefaultCallTimeout
}

// Handler returns the referee's methods.
func (r *Referee) Handler() *transport.Mux {
	m := transport.NewMux(r.log)
	m.HandleFunc(string(protocol.TypeStartMatch), r.onStartMatch)
	m.HandleFunc(string(protocol.TypeLeagueCompleted), r.onLeagueCompleted)
	m.HandleFunc(string(protocol.TypeLeagueError), r.onLeagueError)
	m.HandleFunc(protocol.MethodPing, func(context.Context, *transport.Request) (any, error) {
		return map[string]string{"status": "ok", "protocol": protocol.Version, "sender": "referee:" + r.ID(),
			"timestamp": protocol.FormatTimestamp(r.clock())}, nil
	})
	m.HandleFunc(protocol.MethodGetMatchState, r.onGetMatchState)
	m.HandleFunc(MethodManualRegister, r.onManualRegister)
	m.HandleFunc(protocol.MethodGetRegistrationStatus, func(context.Context, *transport.Request) (any, error) {
		st := r.registration()
		// The proof of its instance secret: a manager asked to register it
		// again takes the registration as its own only with the secret.
		st["instance"] = protocol.InstanceProof(r.opts.InstanceSecret)
		return st, nil
	})
	m.SetHealth(r.health)
	return m
}

func (r *Referee) envelope(t protocol.MessageType, conversation string) protocol.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.origin.Envelope(r.idLocked(), t, r.clock(), conversation, r.leagueID, r.token)
}

// playerEnvelope is the envelope of a message to player s of a match. The
// spec wants a token on every message after registration, and the other
// implementations put the referee's own there; but a player cannot check
// a referee's token, and with the one the manager gave the referee a
// player could report its own match to the manager in the referee's name.
// A player is shown the match ticket the manager gave the referee for it
// (protocol.Ticket), which it checks; one that asked for none is shown a
// token of the same form made from the referee's own
// (protocol.ShownToken), which the manager knows nothing of.
func (r *Referee) playerEnvelope(s *side, t protocol.MessageType, conversation string) protocol.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.origin.Envelope(r.idLocked(), t, r.clock(), conversation, r.leagueID, r.shownToLocked(s))
}

// shownToLocked is the auth_token player s is shown (playerEnvelope).
// Under r.mu.
func (r *Referee) shownToLocked(s *side) string {
	if s.ticket != "" {
		return s.ticket
	}
	return r.shown
}

// Vouches proves that r comes from this referee's league manager, a
// message from the league manager that carries the token it gave this
// referee, and names it "league_manager" however it signs: for the rate
// limit (transport.RateLimit.Trusted).
func (r *Referee) Vouches(req *transport.Request) (string, bool) {
	env := req.Env
	if env == nil || env.AuthToken == "" {
		return "", false
	}
	if s, err := protocol.ParseSender(env.Sender); err != nil || s.Role != protocol.RoleLeagueManager {
		return "", false
	}
	r.mu.Lock()
	token := r.token
	r.mu.Unlock()
	if token == "" || subtle.ConstantTimeCompare([]byte(env.AuthToken), []byte(token)) != 1 {
		return "", false
	}
	return string(protocol.RoleLeagueManager), true
}

// checkManager refuses a manager message carrying a token other than this
// referee's own (the manager sends each agent its own token), and reports
// whether it carried that one. A message without a token is accepted
// (managers of other implementations send none) unless the manager said
// at registration that it signs (ours), and until one has carried the
// token: from then on the manager is one that signs, and a message
// without the token is a stranger's, which could otherwise end the
// referee's league or fill its slots. Ours signs after a restart too,
// making the tokens again from its token key. Only a message that carried
// the token is answered with it: answered to a stranger, it would let the
// stranger report matches to the manager in the referee's name.
func (r *Referee) checkManager(env *protocol.Envelope) (signed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.token == "":
		return false, nil
	case env.AuthToken == "":
		if r.signed {
			return false, protocol.Errorf(protocol.ErrAuthenticationFailed,
				"this referee's manager signs its messages with the referee's token, and this one carries none")
		}
		return false, nil
	case subtle.ConstantTimeCompare([]byte(env.AuthToken), []byte(r.token)) != 1:
		return false, protocol.Errorf(protocol.ErrAuthTokenInvalid, "auth_token is not the one this referee was given")
	}
	r.signed = true
	return true, nil
}

// replyEnvelope is the envelope of the referee's answer to a message of
// its manager: with the referee's token when that message was signed with
// it (checkManager), else with none.
func (r *Referee) replyEnvelope(t protocol.MessageType, conversation string, signed bool) protocol.Envelope {
	env := r.envelope(t, conversation)
	if !signed {
		env.AuthToken = ""
	}
	return env
}

func (r *Referee) onStartMatch(ctx context.Context, req *transport.Request) (any, error) {
	if err := r.awaitRegistration(ctx); err != nil {
		return nil, err
	}
	signed, err := r.checkManager(req.Env)
	if err != nil {
		return nil, err
	}
	sm, err := r.withEndpoints(req.Msg.(*protocol.StartMatch))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	life := r.life
	if life == nil || life.ctx.Err() != nil {
		r.mu.Unlock()
		return nil, protocol.Errorf(protocol.ErrServiceUnavailable, "referee is not running")
	}
	if signed && sm.LeagueManagerEndpoint != "" {
		r.announced = sm.LeagueManagerEndpoint
	}
	m, known := r.matches[sm.MatchID]
	switch {
	case known && m.finished():
		// The manager did not get the report (it re-dispatched): send it again.
		r.inflight.Add(1)
		go func() {
			defer r.inflight.Done()
			r.report(life, m)
		}()
	case known:
		// Already being played: a repeated START_MATCH changes nothing.
	case r.active >= r.opts.MaxConcurrent:
		r.mu.Unlock()
		return nil, &protocol.Error{Code: protocol.ErrServiceUnavailable,
			Detail:  fmt.Sprintf("referee is at capacity (%d matches)", r.opts.MaxConcurrent),
			Context: map[string]any{"max_concurrent_matches": r.opts.MaxConcurrent}}
	default:
		r.noteInstancesLocked(sm)
		m = newMatch(sm, r.opts.Seed)
		r.matches[sm.MatchID] = m
		r.active++
		r.inflight.Add(1)
		go func() {
			defer r.inflight.Done()
			r.play(life, m)
		}()
	}
	r.mu.Unlock()
	return &protocol.StartMatchAck{
		Envelope: r.replyEnvelope(protocol.TypeStartMatchAck, sm.ConversationID, signed),
		MatchID:  sm.MatchID,
		Status:   protocol.StatusAccepted,
	}, nil
}

// maxInstances bounds the players' instances a referee remembers; past it
// they are forgotten (a restart then goes unnoticed until the breaker's
// reset timeout, as without them).
const maxInstances = 1 << 16

// noteInstancesLocked remembers the instance START_MATCH gives for each
// player's endpoint (our manager's extension), and closes the breaker of
// an endpoint whose instance changed: the player registered again after a
// restart, and calls to it are no longer failures to expect. Under r.mu.
func (r *Referee) noteInstancesLocked(sm *protocol.StartMatch) {
	for _, p := range [2]struct{ ep, inst string }{{sm.EndpointA(), sm.PlayerAInstance}, {sm.EndpointB(), sm.PlayerBInstance}} {
		if p.inst == "" {
			continue
		}
		if prev, seen := r.instances[p.ep]; seen && prev != p.inst {
			if r.opts.ResetBreaker != nil {
				r.opts.ResetBreaker(p.ep)
			}
		}
		if len(r.instances) >= maxInstances {
			clear(r.instances)
		}
		r.instances[p.ep] = p.inst
	}
}

// withEndpoints is sm with both players' endpoints: its own, or else the
// ones the referee was given (Options.PlayerEndpoints). A player with
// neither cannot be reached: E002, naming the field.
func (r *Referee) withEndpoints(sm *protocol.StartMatch) (*protocol.StartMatch, error) {
	a, b := sm.EndpointA(), sm.EndpointB()
	if a != "" && b != "" {
		return sm, nil
	}
	var missing []protocol.FieldError
	find := func(field, id string, ep *string) {
		if *ep == "" {
			*ep = r.opts.PlayerEndpoints[id]
		}
		if *ep == "" {
			missing = append(missing, protocol.FieldError{Field: field,
				Reason: fmt.Sprintf("is required: this referee was given no endpoint of player %q (serve-referee --player-endpoint)", protocol.Clip(id))})
		}
	}
	find("player_a_endpoint", sm.PlayerA(), &a)
	find("player_b_endpoint", sm.PlayerB(), &b)
	if missing != nil {
		return nil, &protocol.Error{Code: protocol.ErrInvalidMessageFormat,
			Detail: "the players' endpoints are required: this referee has no other way to reach them", Fields: missing}
	}
	c := *sm
	c.PlayerAEndpoint, c.PlayerBEndpoint = a, b
	return &c, nil
}

// awaitRegistration waits until the referee is registered. The manager may
// hand out a match as soon as it has answered the registration, before
// that answer has been read here; a match started then would carry no
// token and no assigned id, and its report would be refused.
func (r *Referee) awaitRegistration(ctx context.Context) error {
	r.mu.Lock()
	life := r.life
	r.mu.Unlock()
	if life == nil || life.ctx.Err() != nil {
		return protocol.Errorf(protocol.ErrServiceUnavailable, "referee is not running")
	}
	select {
	case <-r.registered:
		return nil
	case <-life.ctx.Done():
		return protocol.Errorf(protocol.ErrServiceUnavailable, "referee is not running")
	case <-ctx.Done():
		return protocol.Errorf(protocol.ErrServiceUnavailable, "referee is not registered yet")
	}
}

// onLeagueError logs a LEAGUE_ERROR, the manager's word that something
// the referee sent was wrong (message-structures §4.10.1), and
// acknowledges it. It changes nothing: a manager that refuses a message
// answers it with the error already.
func (r *Referee) onLeagueError(ctx context.Context, req *transport.Request) (any, error) {
	signed, err := r.checkManager(req.Env)
	if err != nil {
		return nil, err
	}
	le := req.Msg.(*protocol.LeagueError)
	r.log.LogAttrs(ctx, slog.LevelWarn, "league error from the manager", slog.String("error_code", string(le.ErrorCode)),
		slog.String("error", cmp.Or(le.ErrorMessage, le.ErrorDescription)), slog.String("original_message_type", string(le.OriginalMessageType)),
		slog.String("conversation_id", le.ConversationID))
	return &protocol.Ack{Envelope: r.replyEnvelope(req.Type, req.Env.ConversationID, signed), Status: "ACK"}, nil
}

func (r *Referee) onLeagueCompleted(ctx context.Context, req *transport.Request) (any, error) {
	signed, err := r.checkManager(req.Env)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	// A referee not registered yet has no league to end: anyone may send
	// one, and Run, ended, would stop it as soon as it registered.
	if r.state != StateCompleted && r.token != "" {
		r.state = StateCompleted
		close(r.done)
	}
	r.mu.Unlock()
	return &protocol.Ack{Envelope: r.replyEnvelope(req.Type, req.Env.ConversationID, signed), Status: "ACK"}, nil
}

// MatchState is what get_match_state reports of one match.
type MatchState struct {
	MatchID string                `json:"match_id"`
	RoundID int                   `json:"round_id"`
	PlayerA string                `json:"player_A_id"`
	PlayerB string                `json:"player_B_id"`
	State   string                `json:"state"`
	Result  *protocol.MatchResult `json:"result,omitzero"`
}

func (r *Referee) onGetMatchState(_ context.Context, req *transport.Request) (any, error) {
	var q struct {
		MatchID string `json:"match_id"`
	}
	if req.Params.Kind() == '{' {
		if err := protocol.DecodeInto(req.Params, &q); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if q.MatchID != "" {
		m, ok := r.matches[q.MatchID]
		if !ok {
			return nil, protocol.Errorf(protocol.ErrMatchNotFound, "no match %q here", protocol.Clip(q.MatchID))
		}
		return m.snapshot(), nil
	}
	out := make([]MatchState, 0, len(r.matches))
	for _, m := range r.matches {
		out = append(out, m.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MatchID < out[j].MatchID })
	return map[string]any{"matches": out, "active": r.active}, nil
}

func (r *Referee) registration() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]any{
		"role":       string(protocol.RoleReferee),
		"referee_id": r.idLocked(),
		"state":      r.state,
		"registered": r.token != "",
		"manager":    r.manager,
	}
	if r.lastErr != "" {
		out["error"] = r.lastErr
	}
	return out
}

func (r *Referee) health() any {
	h := r.registration()
	r.mu.Lock()
	h["active_matches"] = r.active
	h["max_concurrent_matches"] = r.opts.MaxConcurrent
	r.mu.Unlock()
	h["status"] = "ok"
	h["uptime_seconds"] = int(r.clock().Sub(r.started).Seconds())
	return h
}
