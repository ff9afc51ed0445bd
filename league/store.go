package league

import (
	"context"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
)

// Store keeps what the manager must not lose: every write returns only
// once it is durable, and the manager answers only after the write.
// league/sqlite is the implementation; a Manager without one keeps
// everything in memory.
type Store interface {
	// Load reads back a league saved before, or returns nil for a new one.
	Load(ctx context.Context) (*Saved, error)
	// CreateLeague records a new league's identity.
	CreateLeague(ctx context.Context, l LeagueRecord) error
	// SaveAgent records a registration (with the hash of its token, and
	// the nonce it was made with, never the token itself).
	SaveAgent(ctx context.Context, a AgentRecord) error
	// SaveRejoin records an agent's new token (its hash, and its nonce or
	// nil) and capacity (a referee's max_concurrent_matches; 0 for a
	// player) when it registered again after a restart of its own.
	SaveRejoin(ctx context.Context, id string, hash [32]byte, nonce []byte, capacity int) error
	// SaveSchedule records the schedule, and that the league has started.
	SaveSchedule(ctx context.Context, startedAt time.Time, rounds [][]Pairing) error
	// SaveAssignment records that a match was handed to a referee.
	SaveAssignment(ctx context.Context, matchID, refereeID string, at time.Time) error
	// SaveResult records a match's result unless it has one: the first
	// result stands. inserted is false when the match already had one.
	SaveResult(ctx context.Context, r ResultRecord) (inserted bool, err error)
	// SaveRoundClosed records that the end of round r has been announced.
	SaveRoundClosed(ctx context.Context, r int) error
	// SaveCompletion records that the league is complete.
	SaveCompletion(ctx context.Context, at time.Time) error
}

// LeagueRecord is a league's identity.
type LeagueRecord struct {
	LeagueID  string
	Seed      uint64
	Scoring   Scoring
	CreatedAt time.Time
}

// AgentRecord is one registration.
type AgentRecord struct {
	ID          string
	Role        protocol.Role
	DisplayName string
	Endpoint    string
	TokenHash   [32]byte
	// TokenNonce is the random part of a token made with the manager's
	// token key (Options.TokenKey); nil when the token was random.
	TokenNonce   []byte
	Capacity     int
	RegisteredAt time.Time
}

// ResultRecord is one match's counted result.
type ResultRecord struct {
	MatchID          string
	Round            int
	Referee          string
	StatusA, StatusB string
	Winner           string
	DrawnNumber      int // 0 when none was drawn
	ChoiceA, ChoiceB string
	TechnicalLosses  []protocol.TechnicalLoss
	Reason           string
	ConversationID   string
	ReportedAt       time.Time
}

// Saved is everything a store holds about a league.
type Saved struct {
	League      LeagueRecord
	State       string // REGISTRATION, RUNNING or COMPLETED
	ClosedRound int    // the last round whose end was announced
	StartedAt   time.Time
	CompletedAt time.Time
	Agents      []AgentRecord // in registration order
	Rounds      [][]Pairing
	Assignments map[string][]string // match id → referees given it
	Results     []ResultRecord      // in the order they were counted
}
