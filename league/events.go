package league

import (
	"sync"
	"time"

	"github.com/leaguectl/leaguectl/protocol"
)

// Event types: what a league's watchers are told (docs/events.md).
const (
	EventRegistration    = "registration"
	EventLeagueStarted   = "league_started"
	EventRoundStarted    = "round_started"
	EventMatchStarted    = "match_started"
	EventMatchFinished   = "match_finished"
	EventTechnicalLoss   = "technical_loss"
	EventRoundCompleted  = "round_completed"
	EventBreakerOpened   = "breaker_opened"
	EventBreakerClosed   = "breaker_closed"
	EventLeagueCompleted = "league_completed"
	// EventSnapshot is the league as it stands, sent in place of the
	// events a watcher missed when they are no longer kept.
	EventSnapshot = "snapshot"
)

// Event is one thing that happened in a league. Seq numbers a league's
// events from 1, without reuse across restarts of its manager (Events),
// so a watcher that comes back with the last it saw misses nothing.
type Event struct {
	Seq      uint64    `json:"seq"`
	Type     string    `json:"type"`
	At       time.Time `json:"at"`
	LeagueID string    `json:"league_id"`
	// Data is the event's own fields: a value nobody changes once
	// published.
	Data any `json:"data"`
}

// DefaultEventBuffer is how many recent events a manager keeps for the
// watchers that come back (Last-Event-ID): a round of a 64-player league
// has about seventy.
const DefaultEventBuffer = 4096

// subscriberBuffer is how many events a watcher may be behind before it
// is dropped: it comes back with the last it saw, and is sent the rest
// from the buffer, or a snapshot.
const subscriberBuffer = 1024

// Events numbers a league's events, keeps the latest, and hands them to
// watchers. Publishing never blocks: a watcher too slow to take its
// events is dropped (its channel closed), and comes back.
type Events struct {
	mu     sync.Mutex
	league string
	clock  func() time.Time
	next   uint64 // the next event's Seq
	ring   []Event
	start  int // index of the oldest kept event in ring
	n      int // events kept
	subs   map[chan Event]struct{}
	// reserved is the first Seq not yet reserved in the store (reserve):
	// a manager restarted on its database goes on from there, above
	// every number it may have given before.
	reserved uint64
	reserve  func(upto uint64)
}

// reserveStep is how many numbers are reserved in the store at a time:
// one write for thousands of events. The next reservation is asked for
// when half of them are left, not when they run out, so that its write,
// which the publisher does not wait for, is durable long before a number
// it covers is given.
const reserveStep = 4096

// NewEvents returns the events of league, numbered from first (1 for a
// new league, the reserved bound of a restarted one), keeping the latest
// buffer of them. reserve, when set, is told the new bound to keep each
// time the numbers given come within half a step of the one kept: it is
// called under Events' lock, and must hand the write to the store without
// waiting for it.
func NewEvents(league string, first uint64, buffer int, clock func() time.Time, reserve func(upto uint64)) *Events {
	if first == 0 {
		first = 1
	}
	if buffer <= 0 {
		buffer = DefaultEventBuffer
	}
	if clock == nil {
		clock = time.Now
	}
	return &Events{league: league, clock: clock, next: first, ring: make([]Event, buffer),
		subs: map[chan Event]struct{}{}, reserved: first, reserve: reserve}
}

// Publish numbers an event of type typ with data, keeps it, and hands it
// to every watcher, and returns it.
func (e *Events) Publish(typ string, data any) Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	ev := Event{Seq: e.next, Type: typ, At: e.clock().UTC(), LeagueID: e.league, Data: data}
	e.next++
	if e.next+reserveStep/2 > e.reserved && e.reserve != nil {
		e.reserved = e.next + reserveStep
		e.reserve(e.reserved)
	}
	i := (e.start + e.n) % len(e.ring)
	if e.n == len(e.ring) {
		e.start = (e.start + 1) % len(e.ring)
	} else {
		e.n++
	}
	e.ring[i] = ev
	for ch := range e.subs {
		select {
		case ch <- ev:
		default:
			// Too slow: dropped, it comes back with the last it saw.
			delete(e.subs, ch)
			close(ch)
		}
	}
	return ev
}

// Last is the Seq of the latest event, 0 before the first.
func (e *Events) Last() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.next - 1
}

// Subscribe is a watcher that saw every event up to after (0: none): the
// events after it still kept, and a channel of the next ones. gap says
// some events after it are no longer kept, or were given before a
// restart (a number below the first given since, or above the last: a
// manager restarted without a store of its numbers gives them again),
// so the watcher needs a snapshot first. The channel is closed when the
// watcher falls too far behind, or by cancel.
func (e *Events) Subscribe(after uint64) (missed []Event, gap bool, next <-chan Event, cancel func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	oldest := e.next - uint64(e.n) // Seq of the oldest event kept
	switch {
	case after == e.next-1:
		// Up to date.
	case after > e.next-1 || after+1 < oldest:
		gap = true
	default:
		for k := int(after + 1 - oldest); k < e.n; k++ {
			missed = append(missed, e.ring[(e.start+k)%len(e.ring)])
		}
	}
	ch := make(chan Event, subscriberBuffer)
	e.subs[ch] = struct{}{}
	return missed, gap, ch, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if _, ok := e.subs[ch]; ok {
			delete(e.subs, ch)
			close(ch)
		}
	}
}

// The data of each event type.
type (
	// RegistrationEvent: an agent registered (or registered again after a
	// restart of its own). What the agent chose (name, endpoint) is text.
	RegistrationEvent struct {
		Role        protocol.Role `json:"role"`
		AgentID     string        `json:"agent_id"`
		DisplayName string        `json:"display_name"`
		Endpoint    string        `json:"endpoint"`
		Again       bool          `json:"again,omitzero"`
	}
	// LeagueStartedEvent: the schedule is made and the first round starts.
	LeagueStartedEvent struct {
		Players  int `json:"players"`
		Referees int `json:"referees"`
		Rounds   int `json:"rounds"`
		Matches  int `json:"matches"`
	}
	// RoundEvent: a round started (Matches), or completed (with the
	// standings after it).
	RoundEvent struct {
		RoundID   int                    `json:"round_id"`
		Matches   int                    `json:"matches"`
		Standings []protocol.StandingRow `json:"standings,omitzero"`
	}
	// MatchStartedEvent: a match was handed to a referee (again, for an
	// attempt after the first).
	MatchStartedEvent struct {
		MatchID   string `json:"match_id"`
		RoundID   int    `json:"round_id"`
		PlayerA   string `json:"player_a_id"`
		PlayerB   string `json:"player_b_id"`
		RefereeID string `json:"referee_id"`
		Attempt   int    `json:"attempt"`
	}
	// MatchFinishedEvent: a match's result was counted; Done of Total
	// matches are.
	MatchFinishedEvent struct {
		MatchID     string `json:"match_id"`
		RoundID     int    `json:"round_id"`
		PlayerA     string `json:"player_a_id"`
		PlayerB     string `json:"player_b_id"`
		RefereeID   string `json:"referee_id"`
		StatusA     string `json:"player_a_status"`
		StatusB     string `json:"player_b_status"`
		Winner      string `json:"winner,omitzero"`
		DrawnNumber int    `json:"drawn_number,omitzero"`
		ChoiceA     string `json:"player_a_choice,omitzero"`
		ChoiceB     string `json:"player_b_choice,omitzero"`
		Done        int    `json:"matches_done"`
		Total       int    `json:"matches_total"`
	}
	// TechnicalLossEvent: a player lost a counted match technically.
	TechnicalLossEvent struct {
		MatchID  string        `json:"match_id"`
		RoundID  int           `json:"round_id"`
		PlayerID string        `json:"player_id"`
		Code     protocol.Code `json:"error_code"`
		Reason   string        `json:"reason"`
	}
	// BreakerEvent: the manager's circuit breaker to an agent opened
	// (calls to it fail at once) or closed again.
	BreakerEvent struct {
		AgentID string        `json:"agent_id"`
		Role    protocol.Role `json:"role"`
	}
	// LeagueCompletedEvent: the league is over. The seed is told now, not
	// before: with it, the moves of a random player can be foreseen.
	LeagueCompletedEvent struct {
		Champion       *protocol.Champion     `json:"champion"`
		FinalStandings []protocol.StandingRow `json:"final_standings"`
		Seed           uint64                 `json:"seed"`
	}
)

// Kept is a copy of the events the hub still keeps, oldest first: what a
// page that draws the league's history from its events starts from.
func (e *Events) Kept() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Event, e.n)
	for k := range e.n {
		out[k] = e.ring[(e.start+k)%len(e.ring)]
	}
	return out
}
