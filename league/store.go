package league

import (
	"context"
	"fmt"
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
	// the nonce it was made with, never the token itself). The same
	// registration saved again, the same token's hash, is no error: a
	// write that committed and whose answer was lost is tried again.
	SaveAgent(ctx context.Context, a AgentRecord) error
	// SaveRejoin records an agent's new token (its hash, and its nonce or
	// nil), capacity (a referee's max_concurrent_matches; 0 for a player)
	// and whether it gets match tickets, when it registered again after a
	// restart of its own.
	SaveRejoin(ctx context.Context, id string, hash [32]byte, nonce []byte, capacity int, tickets bool) error
	// SaveSchedule records the schedule, and that the league has started.
	// The manager calls it only for a store that is not a ScheduleWriter.
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

// ScheduleWriter is a Store that records a schedule in parts, each its own
// transaction, so that no one write holds a large league's schedule
// (499,500 matches at 1000 players) and every other write waits for it.
// Between BeginSchedule and EndSchedule the league is StateStarting in the
// store: Load returns it without its matches, and a manager restored from
// it writes the schedule again (WriteSchedule).
type ScheduleWriter interface {
	// BeginSchedule records that the league is starting at startedAt, and
	// drops the matches of an earlier start that did not end. It refuses
	// a league that runs already.
	BeginSchedule(ctx context.Context, startedAt time.Time) error
	// SaveMatches records matches of the schedule begun. It must not keep
	// rows once it has returned.
	SaveMatches(ctx context.Context, rows []ScheduleRow) error
	// EndSchedule records that the schedule is whole, of total matches,
	// and the league running; it refuses a schedule of another number of
	// matches. A league running already with total matches is no error,
	// for a write tried again after its answer was lost.
	EndSchedule(ctx context.Context, total int) error
}

// EventSeqStore is a Store that keeps the bound of a league's event
// numbers (Events, Saved.EventSeq): a manager restarted on it numbers its
// events from the bound kept, above every number it gave before, so that
// a watcher that comes back with the last it saw is never told "nothing
// new" by numbers given again. A Store without it numbers from 1 after
// each restart, and a watcher that comes back may miss events.
type EventSeqStore interface {
	// SaveEventSeq records that numbers below upto may have been given.
	// The bound kept never goes down: a lower upto, from a write that
	// came late, leaves it as it is.
	SaveEventSeq(ctx context.Context, upto uint64) error
}

// ScheduleRow is one match of a schedule as it is stored: its pairing and
// its place in its round (0-based).
type ScheduleRow struct {
	Pairing
	Position int
}

// ScheduleBatch bounds the matches of one SaveMatches call, and so of one
// transaction of the store.
const ScheduleBatch = 1000

// WriteSchedule records rounds, a schedule begun at startedAt, in w: one
// BeginSchedule, a SaveMatches for each ScheduleBatch matches, one
// EndSchedule. Each is a write of its own, under ctx: give ctx a deadline
// that scales with the schedule (ScheduleTimeout).
func WriteSchedule(ctx context.Context, w ScheduleWriter, startedAt time.Time, rounds [][]Pairing) error {
	total := 0
	for _, r := range rounds {
		total += len(r)
	}
	if err := w.BeginSchedule(ctx, startedAt); err != nil {
		return err
	}
	batch := make([]ScheduleRow, 0, min(total, ScheduleBatch))
	for _, round := range rounds {
		for i, p := range round {
			batch = append(batch, ScheduleRow{Pairing: p, Position: i})
			if len(batch) == cap(batch) {
				if err := w.SaveMatches(ctx, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
	}
	if len(batch) > 0 {
		if err := w.SaveMatches(ctx, batch); err != nil {
			return err
		}
	}
	return w.EndSchedule(ctx, total)
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
	TokenNonce []byte
	// MatchTickets says the agent asked for match tickets and was told it
	// gets them (protocol.PlayerMeta.MatchTickets).
	MatchTickets bool
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
	State       string // REGISTRATION, STARTING, RUNNING or COMPLETED
	ClosedRound int    // the last round whose end was announced
	StartedAt   time.Time
	CompletedAt time.Time
	Agents      []AgentRecord       // in registration order
	Rounds      [][]Pairing         // none before the league runs
	Assignments map[string][]string // match id → referees given it
	Results     []ResultRecord      // in the order they were counted
	// EventSeq is the bound of the event numbers (EventSeqStore): the
	// first that no manager on the store may have given; 0 when none was
	// kept.
	EventSeq uint64
}

// AddMatch adds p to sv.Rounds after the matches of its round added
// before it: a store reads its schedule in order and adds each match. A
// round below 1, which no schedule has, is a database's damage.
func (sv *Saved) AddMatch(p Pairing) error {
	if p.Round < 1 {
		return fmt.Errorf("match %s: round %d", p.MatchID, p.Round)
	}
	for len(sv.Rounds) < p.Round {
		sv.Rounds = append(sv.Rounds, nil)
	}
	sv.Rounds[p.Round-1] = append(sv.Rounds[p.Round-1], p)
	return nil
}

// AddAssignment records in sv.Assignments that match went to referee,
// after the hand-overs added before it.
func (sv *Saved) AddAssignment(match, referee string) {
	if sv.Assignments == nil {
		sv.Assignments = map[string][]string{}
	}
	sv.Assignments[match] = append(sv.Assignments[match], referee)
}

// Summary is one league of a database, as `leaguectl leagues` lists it.
type Summary struct {
	LeagueID      string    `json:"league_id"`
	State         string    `json:"state"` // REGISTRATION, STARTING, RUNNING or COMPLETED
	Players       int       `json:"players"`
	Referees      int       `json:"referees"`
	TotalMatches  int       `json:"total_matches"`
	MatchesPlayed int       `json:"matches_played"`
	CreatedAt     time.Time `json:"created_at"`
	StartedAt     time.Time `json:"started_at,omitzero"`
	CompletedAt   time.Time `json:"completed_at,omitzero"`
	// Leader names the manager that serves the league now (its host and
	// process), empty when none does or the store cannot tell.
	Leader string `json:"leader,omitzero"`
}
