// Package player is the Player agent: it registers with a league manager,
// answers invitations and parity calls with a strategy, or with a program
// of someone else's (an exec agent, exec.go), and keeps its history and
// statistics. It answers protocol calls whether or not its own
// registration has succeeded, so it can be checked on its own.
package player

import (
	"cmp"
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/internal/rng"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// Version is the agent version sent at registration.
const Version = "1.0.0"

// maxOpenMatches bounds the invitations a player remembers without a
// GAME_OVER, so a flood of invitations cannot grow its memory.
const maxOpenMatches = 1024

// Options configure a Player.
type Options struct {
	// RequestedID is the id asked for at registration (sender
	// "player:<id>"); empty lets the manager choose.
	RequestedID string
	DisplayName string
	Strategy    Strategy
	// Seed is the league seed: with the player id and the match id it
	// determines every random choice.
	Seed            uint64
	LeagueID        string
	ManagerEndpoint string
	// Endpoint is this player's own contact endpoint.
	Endpoint string
	// CallTimeout bounds each registration attempt.
	CallTimeout time.Duration
	// Retry paces registration attempts while the manager is not up.
	Retry transport.Retry
	Clock func() time.Time
	// Fault makes the player misbehave on purpose (fault injection).
	Fault Fault
	// Exec, when set, makes the player an exec agent: a subprocess answers
	// its invitations and parity calls in place of Strategy, and is told
	// every other league message (see Exec). Close stops it.
	Exec *Exec
	// InstanceSecret is the secret the player registers with, and shows
	// the proof of in get_registration_status (protocol.InstanceProof),
	// so that, restarted, it can register again as itself: drawn at New
	// when empty.
	InstanceSecret string
	// OnRegistering, when set, is called once, as the first registration
	// request goes out: before the manager knows the player, so before
	// anything can call it. cmd uses it to close the endpoint of a
	// crashing player, which the manager then registers and never reaches.
	OnRegistering func()
	// OnRegistered, when set, is called with the player's id after each
	// registration the manager accepts (cmd puts it in the log lines'
	// agent_id).
	OnRegistered func(id string)
	// MaxHistory bounds the games the player remembers (0:
	// DefaultMaxHistory); beyond it the oldest is forgotten (its stats
	// stay counted). In a league without match tickets anyone may send a
	// GAME_OVER, each for a match id of its own making.
	MaxHistory int
	// RegistrationToken is the auth_token of its registration: the
	// league's registration token, for a manager that admits only the
	// players given it (league.Options.RegistrationToken); empty for one
	// that admits any.
	RegistrationToken string
}

// DefaultMaxHistory is the games a player remembers by default: a 1000
// player league is 999 of them; 2^16 take about 10 MB.
const DefaultMaxHistory = 1 << 16

// Registration states reported by health and get_registration_status.
const (
	StateRegistering = "REGISTERING"
	StateRegistered  = "REGISTERED"
	StateFailed      = "REGISTRATION_FAILED"
	StateCompleted   = "LEAGUE_COMPLETED"
)

// Stats are the player's own counts.
type Stats struct {
	Played          int `json:"played"`
	Wins            int `json:"wins"`
	Draws           int `json:"draws"`
	Losses          int `json:"losses"`
	TechnicalLosses int `json:"technical_losses"`
}

// State is what get_player_state returns.
type State struct {
	PlayerID    string                 `json:"player_id"`
	DisplayName string                 `json:"display_name"`
	Strategy    string                 `json:"strategy,omitzero"`
	Fault       string                 `json:"fault,omitzero"`
	Exec        *ExecState             `json:"exec,omitzero"`
	LeagueID    string                 `json:"league_id,omitzero"`
	State       string                 `json:"state"`
	Stats       Stats                  `json:"stats"`
	History     []Game                 `json:"history,omitzero"`
	Round       int                    `json:"current_round,omitzero"`
	Standings   []protocol.StandingRow `json:"standings,omitzero"`
	Champion    *protocol.Champion     `json:"champion,omitzero"`
}

// openMatch is a match the player was invited to and has not seen end.
type openMatch struct {
	matchID, opponent, role, conversation string
	round                                 int
	choice                                string
	seq                                   int
}

// handOver is one hand-over of a match to a referee, as a player learns of
// it.
type handOver struct {
	n uint64 // its number: a later hand-over has a greater one
	// ticketless says the manager said its referee carries no tickets.
	ticketless bool
}

// maxAssigned bounds Player.assigned: its entries are authenticated, and
// of matches whose GAME_OVER has not come (a few at a time, unless
// GAME_OVERs are lost); past it the hand-overs seen are forgotten, and an
// earlier referee's ticket is taken again until a later one has been seen
// once more.
const maxAssigned = 1 << 16

// Player is the Player agent.
type Player struct {
	opts   Options
	caller transport.Caller
	log    *slog.Logger
	clock  func() time.Time
	bot    *execBot // nil: the strategy decides

	mu        sync.Mutex
	id, token string
	// shown is the token referees are shown instead of token
	// (protocol.ShownToken).
	shown string
	// signed says the manager signs its broadcasts with token: it said so
	// at registration (signs_messages), or one has carried token. A
	// broadcast without it is then not the manager's (fromManager).
	signed bool
	// tickets says the manager gives its referees match tickets for this
	// player (it said so at registration, match_tickets): a message of a
	// match is taken only with a valid one (ticketed), checked by ticketer
	// (under protocol.TicketKey of token).
	tickets  bool
	ticketer *protocol.Ticketer
	// registering, while a registration is in flight, is closed when it
	// has been answered (awaitAnswer): a manager may announce its first
	// round and hand out the player's first match before the player has
	// read the answer, and until then the player does not know its token
	// nor whether it must see a ticket.
	registering chan struct{}
	// assigned is the latest hand-over the player has seen of each match
	// of the league whose GAME_OVER it has not taken, by match id: a
	// ticket's, or its manager's word that the referee carries none. Every
	// entry was authenticated. Once the match is over, only the number is
	// kept, in played (latestLocked).
	assigned map[string]handOver
	leagueID string
	state    string
	lastErr  string
	open     map[string]*openMatch
	seq      int
	history  []Game
	// played holds the match ids of history, each with the number of the
	// latest hand-over of the match seen when it ended (0 without
	// tickets): a number a match, where a map of its own would cost a
	// league of N players N maps of N entries.
	played    map[string]uint64
	origin    protocol.Origin
	stats     Stats
	round     int
	standings []protocol.StandingRow
	champion  *protocol.Champion
	completed bool // LEAGUE_COMPLETED has arrived and done is closed
	done      chan struct{}
	started   time.Time

	registeringOnce sync.Once // runs opts.OnRegistering
}

// New returns a Player that calls others through caller.
func New(opts Options, caller transport.Caller, logger *slog.Logger) *Player {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Strategy == nil {
		opts.Strategy, _ = StrategyByName("random")
	}
	if opts.DisplayName == "" {
		// Its id; a player that asks for none is named by its endpoint
		// (display_name is required, and "Player" for every such player
		// told them apart nowhere).
		opts.DisplayName = cmp.Or(opts.RequestedID, protocol.NameByEndpoint("Player", opts.Endpoint))
	}
	if opts.InstanceSecret == "" {
		opts.InstanceSecret = protocol.NewInstanceSecret()
	}
	if opts.MaxHistory <= 0 {
		opts.MaxHistory = DefaultMaxHistory
	}
	var bot *execBot
	if opts.Exec != nil {
		bot = newExecBot(*opts.Exec, logger)
	}
	return &Player{
		bot:    bot,
		origin: protocol.Origin{Role: protocol.RolePlayer},
		opts:   opts, caller: caller, clock: opts.Clock,
		log:      logger,
		leagueID: opts.LeagueID,
		state:    StateRegistering,
		open:     map[string]*openMatch{},
		played:   map[string]uint64{},
		done:     make(chan struct{}),
		started:  opts.Clock(),
	}
}

// ID is the player's id: the one assigned at registration, else the one it
// asked for.
func (p *Player) ID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idLocked()
}

func (p *Player) idLocked() string { return p.answerAsLocked("") }

// answerAsLocked is the id the player answers a message with: the one
// assigned at registration, else the one it asked for, else the one the
// message addressed it by. An unregistered player thus answers an
// invitation, the parity call and the result of a match as the same id.
func (p *Player) answerAsLocked(addressed string) string {
	switch {
	case p.id != "":
		return p.id
	case p.opts.RequestedID != "":
		return p.opts.RequestedID
	case addressed != "":
		return addressed
	}
	return "pending"
}

// Done is closed when LEAGUE_COMPLETED has arrived.
func (p *Player) Done() <-chan struct{} { return p.done }

// Close stops the player's exec bot, if it has one: its stdin is closed,
// which it reads as the end, and its process group is killed if it has not
// exited within Exec.StopGrace. It returns once the process has exited.
// From then on the player answers invitations and parity calls with an
// error, as a player whose bot is down. A player without a bot has nothing
// to stop. Close may be called more than once.
func (p *Player) Close() error {
	if p.bot != nil {
		p.bot.close()
	}
	return nil
}

// Run starts the exec bot, if the player has one, registers, retrying with
// backoff while the manager cannot be reached, then waits for the end of
// the league or of ctx.
func (p *Player) Run(ctx context.Context) error {
	if p.bot != nil {
		p.bot.warm() // started while the player registers and waits for its league
	}
	err := p.opts.Retry.Forever().Do(ctx, p.Register, func(err error, next time.Duration) {
		p.log.LogAttrs(ctx, slog.LevelInfo, "registration failed, retrying",
			slog.String("error", err.Error()), slog.Duration("retry_in", next))
	})
	if err != nil {
		p.mu.Lock()
		p.lastErr = err.Error()
		if !p.completed {
			p.state = StateFailed
		}
		p.mu.Unlock()
		return fmt.Errorf("player registration: %w", err)
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Register makes one registration attempt.
func (p *Player) Register(ctx context.Context) error {
	if p.opts.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.opts.CallTimeout)
		defer cancel()
	}
	req := &protocol.LeagueRegisterRequest{
		Envelope: protocol.Envelope{
			Protocol:       protocol.Version,
			MessageType:    protocol.TypeLeagueRegisterRequest,
			Sender:         "player:" + p.ID(),
			Timestamp:      protocol.FormatTimestamp(p.clock()),
			ConversationID: "conv-register-" + p.ID(),
			LeagueID:       p.opts.LeagueID,
			AuthToken:      p.opts.RegistrationToken,
		},
		PlayerMeta: &protocol.PlayerMeta{
			DisplayName:     p.opts.DisplayName,
			Version:         Version,
			ProtocolVersion: protocol.SpecVersion,
			AgentVersion:    Version,
			GameTypes:       []string{protocol.GameEvenOdd},
			ContactEndpoint: p.opts.Endpoint,
			MatchTickets:    true,
		},
		InstanceSecret: p.opts.InstanceSecret,
	}
	if p.opts.OnRegistering != nil {
		p.registeringOnce.Do(p.opts.OnRegistering)
	}
	answered := make(chan struct{})
	p.mu.Lock()
	p.registering = answered
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if p.registering == answered {
			p.registering = nil
		}
		p.mu.Unlock()
		close(answered)
	}()
	var resp protocol.LeagueRegisterResponse
	// Asked again without our extensions (the instance secret, match
	// tickets) if refused. One exchange, not the client's retries: the
	// player's messages wait for it (awaitAnswer), and Run retries.
	err := transport.CallExtended(transport.NoRetry(ctx), p.caller, p.opts.ManagerEndpoint, protocol.MethodRegisterPlayer, req, &resp, func() any {
		plain, meta := *req, *req.PlayerMeta
		meta.MatchTickets = false
		plain.InstanceSecret, plain.PlayerMeta = "", &meta
		return &plain
	})
	if err != nil {
		return err
	}
	if err := protocol.CheckRegistration(resp.Status, resp.ErrorCode, resp.Reason, resp.PlayerID, resp.AuthToken); err != nil {
		return err
	}
	p.mu.Lock()
	// A manager that says it signs its messages (ours) is one from the
	// start; any other is one once a broadcast has carried the new token.
	p.id, p.token, p.signed = resp.PlayerID, resp.AuthToken, resp.SignsMessages
	p.shown = protocol.ShownToken(protocol.RolePlayer, resp.PlayerID, resp.AuthToken)
	// A new registration is a new league: its tickets are under the new
	// token, and none of its matches has been handed out yet.
	p.tickets, p.ticketer, p.assigned = resp.MatchTickets, nil, nil
	if p.tickets {
		p.ticketer, p.assigned = protocol.NewTicketer(protocol.TicketKey(resp.AuthToken)), map[string]handOver{}
	}
	if !p.completed {
		// A league that has already ended stays ended.
		p.state = StateRegistered
	}
	if resp.LeagueID != "" {
		p.leagueID = resp.LeagueID
	}
	p.mu.Unlock()
	if p.opts.OnRegistered != nil {
		p.opts.OnRegistered(resp.PlayerID)
	}
	p.log.LogAttrs(ctx, slog.LevelInfo, "registered",
		slog.String("player_id", resp.PlayerID), slog.String("league_id", resp.LeagueID))
	return nil
}

// awaitAnswer waits while a registration is in flight until it has been
// answered, or ctx ends: a message of the manager's or of a match that
// comes meanwhile is checked against what the answer says (the player's
// token, whether the manager signs and gives tickets), not taken as one
// to a player not registered.
func (p *Player) awaitAnswer(ctx context.Context) error {
	for {
		p.mu.Lock()
		answered := p.registering
		p.mu.Unlock()
		if answered == nil {
			return nil
		}
		select {
		case <-answered:
		case <-ctx.Done():
			return protocol.Errorf(protocol.ErrServiceUnavailable, "this player's registration has not been answered yet")
		}
	}
}

// Handler returns the player's methods. The league messages go through
// the player's fault (see league); the tools and health never do.
func (p *Player) Handler() *transport.Mux {
	m := transport.NewMux(p.log)
	m.HandleFunc(string(protocol.TypeGameInvitation), p.league(p.ticketed(p.onInvitation)))
	m.HandleFunc(string(protocol.TypeChooseParityCall), p.league(p.ticketed(p.onParityCall)))
	m.HandleFunc(string(protocol.TypeGameOver), p.league(p.ticketed(p.tellBot(p.onGameOver))))
	m.HandleFunc(string(protocol.TypeGameError), p.league(p.ticketed(p.tellBot(p.onGameError))))
	m.HandleFunc(string(protocol.TypeRoundAnnouncement), p.league(p.fromManager(p.announcements(p.tellBot(p.onRoundAnnouncement)))))
	m.HandleFunc(string(protocol.TypeLeagueStandingsUpdate), p.league(p.fromManager(p.tellBot(p.onStandings))))
	m.HandleFunc(string(protocol.TypeRoundCompleted), p.league(p.fromManager(p.tellBot(p.onRoundCompleted))))
	m.HandleFunc(string(protocol.TypeLeagueCompleted), p.league(p.fromManager(p.tellBot(p.onLeagueCompleted))))
	m.HandleFunc(string(protocol.TypeLeagueError), p.league(p.fromManager(p.onLeagueError)))
	m.HandleFunc(protocol.MethodPing, p.onPing)
	m.HandleFunc(protocol.MethodGetPlayerState, func(context.Context, *transport.Request) (any, error) {
		return p.snapshot(false), nil
	})
	m.HandleFunc(protocol.MethodGetRegistrationStatus, func(context.Context, *transport.Request) (any, error) {
		st := p.registration()
		// The proof of its instance secret: a manager asked to register it
		// again takes the registration as its own only with the secret.
		st["instance"] = protocol.InstanceProof(p.opts.InstanceSecret)
		return st, nil
	})
	m.SetHealth(p.health)
	return m
}

func (p *Player) envelope(t protocol.MessageType, conversation string) protocol.Envelope {
	return p.envelopeAs("", t, conversation)
}

// envelopeAs is the envelope of a reply to a referee sent as id ("": the
// player's own, idLocked), as answerAsLocked chose it for a message. It
// carries the token shown to referees, not the player's own: a referee
// cannot check a player's token, and with it could query the manager as
// the player.
func (p *Player) envelopeAs(id string, t protocol.MessageType, conversation string) protocol.Envelope {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id == "" {
		id = p.idLocked()
	}
	return p.origin.Envelope(id, t, p.clock(), conversation, p.leagueID, p.shown)
}

// ack acknowledges a message of a referee.
func (p *Player) ack(r *transport.Request) *protocol.Ack {
	return &protocol.Ack{Envelope: p.envelope(r.Type, r.Env.ConversationID), Status: "ACK"}
}

// managerAck acknowledges a broadcast of the manager: with the player's
// token only when the broadcast carried it (the manager's, then), else
// with none, as the other implementations' players acknowledge
// broadcasts: one without it may be a stranger's. Its handlers are behind
// fromManager, which has refused a token other than the player's own.
func (p *Player) managerAck(r *transport.Request) *protocol.Ack {
	a := p.ack(r)
	p.mu.Lock()
	token := p.token
	p.mu.Unlock()
	a.AuthToken = ""
	if token != "" && r.Env.AuthToken != "" {
		a.AuthToken = token
	}
	return a
}

// fromManager guards a broadcast of the league manager. One that carries a
// token other than this player's own is refused (E012). A registered
// player acknowledges a broadcast of another league and ignores it: a
// stranger (leaguectl check, another league's manager) must not change its
// standings or end its league. One of its league without a token is
// accepted (managers of other implementations send none), and acknowledged
// without the player's token (managerAck), unless the manager said at
// registration that it signs (ours), and until a broadcast has carried the
// token: from then on the manager is one that signs, and a broadcast
// without the token is a stranger's (E003), which could otherwise end the
// player's league. Ours signs after a restart too, making the tokens again
// from its token key. An unregistered player has no league of its own yet
// and takes every broadcast.
func (p *Player) fromManager(h handlerFunc) handlerFunc {
	return func(ctx context.Context, r *transport.Request) (any, error) {
		env := r.Env
		if err := p.awaitAnswer(ctx); err != nil {
			return nil, err
		}
		p.mu.Lock()
		token, league, signed := p.token, p.leagueID, p.signed
		p.mu.Unlock()
		if token == "" {
			return h(ctx, r)
		}
		carried := env.AuthToken != ""
		if carried && subtle.ConstantTimeCompare([]byte(env.AuthToken), []byte(token)) != 1 {
			return nil, protocol.Errorf(protocol.ErrAuthTokenInvalid, "auth_token is not the one this player was given")
		}
		if env.LeagueID != "" && env.LeagueID != league {
			p.log.LogAttrs(ctx, slog.LevelInfo, "broadcast of another league ignored",
				slog.String("message_type", string(r.Type)), slog.String("league_id", protocol.Clip(env.LeagueID)),
				slog.String("conversation_id", protocol.Clip(env.ConversationID)))
			a := p.ack(r)
			a.AuthToken = "" // no token of the player's is for another league
			return a, nil
		}
		switch {
		case !carried && signed:
			return nil, protocol.Errorf(protocol.ErrAuthenticationFailed,
				"this player's manager signs its broadcasts with the player's token, and this one carries none")
		case carried && !signed:
			p.mu.Lock()
			if p.token == token {
				p.signed = true
			}
			p.mu.Unlock()
		}
		return h(ctx, r)
	}
}

func (p *Player) onInvitation(ctx context.Context, r *transport.Request) (any, error) {
	inv := r.Msg.(*protocol.GameInvitation)
	p.mu.Lock()
	if _, ok := p.open[inv.MatchID]; !ok {
		if len(p.open) >= maxOpenMatches {
			p.evictOldestLocked()
		}
		p.seq++
		p.open[inv.MatchID] = &openMatch{matchID: inv.MatchID, opponent: inv.OpponentID, role: inv.RoleInMatch,
			conversation: inv.ConversationID, round: inv.RoundID, seq: p.seq}
	}
	id := p.answerAsLocked(inv.PlayerID)
	p.mu.Unlock()
	yes := true
	if p.bot != nil {
		var err error
		if yes, err = p.bot.invite(ctx, r); err != nil {
			return nil, p.botFailed(ctx, r, inv.MatchID, err)
		}
	}
	env := p.envelopeAs(id, protocol.TypeGameJoinAck, inv.ConversationID)
	if p.log.Enabled(ctx, slog.LevelDebug) { // a disabled level costs nothing, not even its attributes
		p.log.LogAttrs(ctx, slog.LevelDebug, "invited", slog.String("match_id", inv.MatchID),
			slog.String("opponent_id", inv.OpponentID), slog.String("conversation_id", inv.ConversationID))
	}
	return &protocol.GameJoinAck{
		Envelope:         env,
		MatchID:          inv.MatchID,
		PlayerID:         id,
		ArrivalTimestamp: env.Timestamp,
		Accept:           &yes,
	}, nil
}

func (p *Player) evictOldestLocked() {
	var oldest *openMatch
	for _, m := range p.open {
		if oldest == nil || m.seq < oldest.seq {
			oldest = m
		}
	}
	if oldest != nil {
		delete(p.open, oldest.matchID)
	}
}

func (p *Player) onParityCall(ctx context.Context, r *transport.Request) (any, error) {
	call := r.Msg.(*protocol.ChooseParityCall)
	p.mu.Lock()
	m := p.open[call.MatchID]
	// The history is only ever appended to: the strategy reads it in
	// place (capped, so that it cannot append into it), not a copy of it
	// per call, which over a league of N players would cost N^3.
	sit := &Situation{MatchID: call.MatchID, History: p.history[:len(p.history):len(p.history)]}
	if m != nil {
		sit.OpponentID, sit.RoundID = m.opponent, m.round
	}
	if call.Context != nil {
		if sit.OpponentID == "" {
			sit.OpponentID = call.Context.OpponentID
		}
		if sit.RoundID == 0 {
			sit.RoundID = call.Context.RoundID
		}
	}
	id := p.answerAsLocked(call.PlayerID)
	p.mu.Unlock()
	var choice string
	if p.bot != nil {
		// An exec bot decides, and its randomness is its own: no draw is
		// made for it.
		var err error
		if choice, err = p.bot.choose(ctx, r); err != nil {
			return nil, p.botFailed(ctx, r, call.MatchID, err)
		}
	} else {
		sit.Rand = new(rng.Gen).Rand(p.opts.Seed, "player", id, call.MatchID)
		choice = p.opts.Strategy.Choose(sit)
		if protocol.CheckParity(choice) != nil {
			// A strategy is any Go code: what it returns is checked like any
			// other outside input before it goes on the wire, where it would
			// be an invalid move (E010).
			p.log.LogAttrs(ctx, slog.LevelWarn, "strategy chose no parity: a coin decides",
				slog.String("strategy", p.opts.Strategy.Name()), slog.String("parity_choice", protocol.Clip(choice)),
				slog.String("match_id", call.MatchID))
			choice = coin(sit.Rand)
		}
	}
	p.mu.Lock()
	if m != nil {
		m.choice = choice
	}
	p.mu.Unlock()
	if p.log.Enabled(ctx, slog.LevelDebug) {
		p.log.LogAttrs(ctx, slog.LevelDebug, "chose", slog.String("match_id", call.MatchID),
			slog.String("parity_choice", choice), slog.String("conversation_id", call.ConversationID))
	}
	env := p.envelopeAs(id, protocol.TypeChooseParityResponse, call.ConversationID)
	return &protocol.ChooseParityResponse{
		Envelope:     env,
		MatchID:      call.MatchID,
		PlayerID:     id,
		ParityChoice: choice,
	}, nil
}

func (p *Player) onGameOver(ctx context.Context, r *transport.Request) (any, error) {
	g := r.Msg.(*protocol.GameOver)
	p.mu.Lock()
	me := p.answerAsLocked(g.PlayerID)
	// The match is over: of its hand-overs, only the latest's number is
	// kept, beside it in played (latestLocked).
	latest := p.assigned[g.MatchID].n
	delete(p.assigned, g.MatchID)
	if prev, seen := p.played[g.MatchID]; seen {
		if latest > prev {
			p.played[g.MatchID] = latest
		}
	} else {
		if len(p.history) >= p.opts.MaxHistory {
			// Forgotten from the front: a strategy reading the history
			// in place holds it capped, and the appends go past its end.
			delete(p.played, p.history[0].MatchID)
			p.history = p.history[1:]
		}
		p.played[g.MatchID] = latest
		game := gameFrom(me, g, p.open[g.MatchID])
		delete(p.open, g.MatchID)
		p.history = append(p.history, game)
		p.stats.Played++
		switch game.Result {
		case protocol.ResultWin:
			p.stats.Wins++
		case protocol.ResultDraw:
			p.stats.Draws++
		case protocol.ResultTechnicalLoss:
			p.stats.Losses++
			p.stats.TechnicalLosses++
		default:
			p.stats.Losses++
		}
		if p.log.Enabled(ctx, slog.LevelDebug) {
			p.log.LogAttrs(ctx, slog.LevelDebug, "game over", slog.String("match_id", g.MatchID),
				slog.String("result", game.Result), slog.String("conversation_id", g.ConversationID))
		}
	}
	p.mu.Unlock()
	return p.ack(r), nil
}

// gameFrom reads a GAME_OVER, in any of the forms the spec and the other
// implementations use, into this player's record of the game.
func gameFrom(me string, g *protocol.GameOver, m *openMatch) Game {
	game := Game{MatchID: g.MatchID, RoundID: g.RoundID}
	if m != nil {
		game.OpponentID, game.MyChoice = m.opponent, m.choice
		if game.RoundID == 0 {
			game.RoundID = m.round
		}
	}
	var status, winner string
	var choices map[string]string
	switch {
	case g.GameResult != nil:
		gr := g.GameResult
		status = gr.Status
		if gr.WinnerPlayerID != nil {
			winner = *gr.WinnerPlayerID
		}
		if gr.DrawnNumber != nil {
			game.DrawnNumber = *gr.DrawnNumber
		}
		game.Parity = gr.NumberParity
		choices = gr.AllChoices()
		if game.OpponentID == "" {
			game.OpponentID = gr.OpponentID
		}
	default:
		if g.Winner != nil {
			winner = *g.Winner
		}
		if g.Details != nil {
			if g.Details.DrawnNumber != nil {
				game.DrawnNumber = *g.Details.DrawnNumber
			}
			game.Parity = g.Details.Parity
			choices = g.Details.Choices
		}
		if choices == nil {
			// protocol-v2.md's GAME_OVER carries the choices in score.
			choices = scoreChoices(g.Score)
		}
		status = protocol.ResultWin
		if winner == "" || winner == "DRAW" {
			status, winner = protocol.ResultDraw, ""
		}
	}
	game.Winner = winner
	if winner == me {
		game.Winner = me // one string for every game, not one per GAME_OVER
	}
	if c, ok := choices[me]; ok && game.MyChoice == "" {
		game.MyChoice = c
	}
	if game.OpponentID == "" {
		// Without an invitation, the opponent is the one other player who
		// chose; when there is not exactly one, it stays unknown rather
		// than picked by map order.
		var others []string
		for pid := range choices {
			if pid != me {
				others = append(others, pid)
			}
		}
		if len(others) == 1 {
			game.OpponentID = others[0]
		}
	}
	if game.OpponentID != "" {
		game.OpponentChoice = choices[game.OpponentID]
		if winner == game.OpponentID {
			game.Winner = game.OpponentID
		}
	}
	// A history of thousands of games holds the two parities once. A
	// choice that is not a parity is not kept: a GAME_OVER needs no token
	// (a player cannot check a referee's), and a strategy that replays its
	// own last choice would send a forged "banana" to the next honest
	// referee, an invalid move (E010).
	game.MyChoice, game.OpponentChoice, game.Parity = parityOnly(game.MyChoice), parityOnly(game.OpponentChoice), parityOnly(game.Parity)
	switch {
	case status == protocol.ResultDraw:
		game.Result = protocol.ResultDraw
	case winner == me:
		game.Result = protocol.ResultWin
	case status == protocol.ResultTechnicalLoss:
		game.Result = protocol.ResultTechnicalLoss
	case winner != "":
		game.Result = protocol.ResultLoss
	case status == protocol.ResultWin:
		// Dialect-a's per-recipient status without a winner id.
		game.Result = protocol.ResultWin
	default:
		game.Result = protocol.ResultLoss
	}
	return game
}

// parityOnly is s as the one string of its parity, or "" when s is none.
func parityOnly(s string) string {
	switch s {
	case protocol.Even:
		return protocol.Even
	case protocol.Odd:
		return protocol.Odd
	}
	return ""
}

// scoreChoices reads the choices out of a score whose values are parities
// (protocol-v2.md); a score of points holds none.
func scoreChoices(score map[string]any) map[string]string {
	var out map[string]string
	for pid, v := range score {
		if c, ok := v.(string); ok && protocol.CheckParity(c) == nil {
			if out == nil {
				out = map[string]string{}
			}
			out[pid] = c
		}
	}
	return out
}

func (p *Player) onGameError(ctx context.Context, r *transport.Request) (any, error) {
	ge := r.Msg.(*protocol.GameError)
	p.log.LogAttrs(ctx, slog.LevelWarn, "game error from referee", slog.String("match_id", ge.MatchID),
		slog.String("error_code", string(ge.ErrorCode)), slog.String("consequence", ge.Consequence),
		slog.String("conversation_id", ge.ConversationID))
	return p.ack(r), nil
}

// onLeagueError logs a LEAGUE_ERROR, the manager's word that something
// the player sent was wrong (message-structures §4.10.1), and
// acknowledges it. It changes nothing.
func (p *Player) onLeagueError(ctx context.Context, r *transport.Request) (any, error) {
	le := r.Msg.(*protocol.LeagueError)
	p.log.LogAttrs(ctx, slog.LevelWarn, "league error from the manager", slog.String("error_code", string(le.ErrorCode)),
		slog.String("error", cmp.Or(le.ErrorMessage, le.ErrorDescription)), slog.String("original_message_type", string(le.OriginalMessageType)),
		slog.String("conversation_id", le.ConversationID))
	return p.managerAck(r), nil
}

func (p *Player) onRoundAnnouncement(ctx context.Context, r *transport.Request) (any, error) {
	ra := r.Msg.(*protocol.RoundAnnouncement)
	p.mu.Lock()
	p.round = ra.RoundID
	p.mu.Unlock()
	return p.managerAck(r), nil
}

func (p *Player) onStandings(ctx context.Context, r *transport.Request) (any, error) {
	su := r.Msg.(*protocol.LeagueStandingsUpdate)
	p.mu.Lock()
	p.standings = su.Standings
	p.mu.Unlock()
	return p.managerAck(r), nil
}

func (p *Player) onRoundCompleted(ctx context.Context, r *transport.Request) (any, error) {
	return p.managerAck(r), nil
}

func (p *Player) onLeagueCompleted(ctx context.Context, r *transport.Request) (any, error) {
	lc := r.Msg.(*protocol.LeagueCompleted)
	p.mu.Lock()
	// A repeated LEAGUE_COMPLETED (a manager that retried) is only
	// acknowledged: done is closed once.
	if !p.completed {
		p.completed = true
		p.state, p.champion = StateCompleted, lc.Champion
		if lc.FinalStandings != nil {
			p.standings = lc.FinalStandings
		}
		close(p.done)
	}
	p.mu.Unlock()
	return p.managerAck(r), nil
}

func (p *Player) onPing(context.Context, *transport.Request) (any, error) {
	return map[string]string{
		"status":    "ok",
		"protocol":  protocol.Version,
		"sender":    "player:" + p.ID(),
		"timestamp": protocol.FormatTimestamp(p.clock()),
	}, nil
}

// State is a snapshot of the player for get_player_state.
func (p *Player) State() State { return p.snapshot(true) }

// snapshot is the player's state: whole, or as get_player_state shows it to
// anyone who asks (full false). In a league whose manager issues match
// tickets, until the league is over, that leaves out what the player's
// moves are made of, its strategy and its history (winstay, cycle and
// adaptive choose from the history alone): whoever read them before a
// match would know the move the tickets keep from all but its referee.
// Its statistics stay: the standings tell them to every player.
func (p *Player) snapshot(full bool) State {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := State{
		PlayerID:    p.idLocked(),
		DisplayName: p.opts.DisplayName,
		Fault:       p.opts.Fault.String(),
		LeagueID:    p.leagueID,
		State:       p.state,
		Stats:       p.stats,
		Round:       p.round,
		Standings:   append([]protocol.StandingRow(nil), p.standings...),
		Champion:    p.champion,
	}
	if full || !p.tickets || p.completed {
		st.Strategy, st.History = p.opts.Strategy.Name(), append([]Game{}, p.history...)
	}
	if p.bot != nil {
		// Its command line is not shown: it may hold what its author
		// keeps to themself, and anyone may ask for this state.
		st.Strategy, st.Exec = "exec", p.bot.snapshot()
	}
	return st
}

func (p *Player) registration() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]any{
		"role":       string(protocol.RolePlayer),
		"player_id":  p.idLocked(),
		"state":      p.state,
		"registered": p.token != "",
		"manager":    p.opts.ManagerEndpoint,
	}
	if p.lastErr != "" {
		out["error"] = p.lastErr
	}
	return out
}

func (p *Player) health() any {
	h := p.registration()
	h["status"] = "ok"
	h["uptime_seconds"] = int(p.clock().Sub(p.started).Seconds())
	return h
}
