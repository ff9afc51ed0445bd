package league

import (
	"fmt"
	"sync"

	"github.com/leaguectl/leaguectl/protocol"
)

// Crosstable is each player's record against each opponent it has met,
// from its own side, as "W-D-L" (wins, draws, losses): {"P01": {"P02":
// "1-0-0"}} is P01 beating P02 once. Every player has a row, empty
// before it plays; an opponent not met is absent. A loss is counted as the
// standings count it: a technical loss is a loss, and a match both players
// lost is a loss in both rows.
type Crosstable map[string]map[string]string

// MaxCrosstablePlayers bounds the players of a GET_CROSSTABLE answer of
// the whole table: N² cells are about 2 MB of JSON at this bound, within
// what clients read (ours, 8 MiB). A larger league is asked one player's
// row at a time (query_params.player_id).
const MaxCrosstablePlayers = 300

// QueryCrosstable is this implementation's LEAGUE_QUERY for the
// crosstable (data: {"crosstable": Crosstable}); with query_params.player_id,
// that player's row alone.
const QueryCrosstable = protocol.QueryCrosstable

// wdl is one cell of a crosstable being counted.
type wdl struct{ w, d, l int }

// CrosstableOf is the crosstable of games with a row for each of players
// (all the players, or the one asked about).
func CrosstableOf(players []string, games []Game) Crosstable {
	cells := make(map[string]map[string]*wdl, len(players))
	for _, p := range players {
		cells[p] = map[string]*wdl{}
	}
	cell := func(p, opp string) *wdl {
		c := cells[p][opp]
		if c == nil {
			c = &wdl{}
			cells[p][opp] = c
		}
		return c
	}
	for _, g := range games {
		if g.A == g.B {
			continue
		}
		for _, side := range [2]struct{ p, opp, status string }{{g.A, g.B, g.StatusA}, {g.B, g.A, g.StatusB}} {
			if cells[side.p] == nil {
				continue
			}
			switch side.status {
			case protocol.ResultWin:
				cell(side.p, side.opp).w++
			case protocol.ResultDraw:
				cell(side.p, side.opp).d++
			case protocol.ResultLoss, protocol.ResultTechnicalLoss:
				cell(side.p, side.opp).l++
			}
		}
	}
	out := make(Crosstable, len(cells))
	for p, row := range cells {
		r := make(map[string]string, len(row))
		for opp, c := range row {
			r[opp] = fmt.Sprintf("%d-%d-%d", c.w, c.d, c.l)
		}
		out[p] = r
	}
	return out
}

// gamesLocked is every counted result of the league, in schedule order.
func (m *Manager) gamesLocked() []Game {
	var out []Game
	for _, ms := range m.rounds {
		for _, mt := range ms {
			if mt.result.known() {
				out = append(out, Game{A: mt.A, B: mt.B, StatusA: mt.result.StatusA, StatusB: mt.result.StatusB})
			}
		}
	}
	return out
}

// ratingInput is what the standings with ratings are computed from, read
// at one moment under the manager's lock; the ratings are computed after
// it is released, since at 1000 players they take a fifth of a second,
// which every report and request of the league would otherwise wait for.
type ratingInput struct {
	round, closed int
	counted       int // the results counted: what the rest follows from
	rows          []protocol.StandingRow
	games         []Game
}

func (m *Manager) ratingInput() ratingInput {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ratingInput{round: m.round, closed: m.closedRound, counted: m.counted, rows: m.table.ranked(), games: m.gamesLocked()}
}

// ratedCache is the standings with ratings of the last count of results,
// and the crosstable once asked for: made again only when a result has
// been counted since. At 1000 players a rating costs half a second of
// CPU, and reading the games walks every match under the manager's lock;
// any registered agent may ask for the standings as often as it likes.
type ratedCache struct {
	mu    sync.Mutex
	valid bool
	in    ratingInput
	rated []Standing
	ct    Crosstable // nil until asked for
}

// rated is the standings with ratings now, and what they were made from;
// the queries that come while they are made wait for them.
func (m *Manager) rated() (ratingInput, []Standing) {
	c := &m.ratedCache
	c.mu.Lock()
	defer c.mu.Unlock()
	m.mu.Lock()
	counted, round, closed := m.counted, m.round, m.closedRound
	m.mu.Unlock()
	if !c.valid || c.in.counted != counted {
		in := m.ratingInput()
		c.in, c.rated, c.ct, c.valid = in, RateStandings(in.rows, in.games), nil, true
	}
	in := c.in
	in.round, in.closed = max(in.round, round), max(in.closed, closed)
	return in, c.rated
}

// crosstable is the whole crosstable of in, the cache's input.
func (m *Manager) crosstable(in ratingInput) Crosstable {
	c := &m.ratedCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.valid && c.in.counted == in.counted && c.ct != nil {
		return c.ct
	}
	ct := CrosstableOf(in.players(), in.games)
	if c.valid && c.in.counted == in.counted {
		c.ct = ct
	}
	return ct
}

func (in ratingInput) players() []string {
	ids := make([]string, len(in.rows))
	for i, r := range in.rows {
		ids[i] = r.PlayerID
	}
	return ids
}

// Report is the standings now with each player's rating, and the
// crosstable when the league has at most MaxCrosstablePlayers players
// (nil otherwise): what leaguectl's own outputs show beside the spec's
// messages.
func (m *Manager) Report() ([]Standing, Crosstable) {
	in, rated := m.rated()
	var ct Crosstable
	if len(in.rows) <= MaxCrosstablePlayers {
		ct = m.crosstable(in)
	}
	return rated, ct
}

// crosstableAnswer is GET_CROSSTABLE's data: the whole table, or player's
// row; a query error for a player not registered, or for the whole table
// of a league too large for one answer.
func (m *Manager) crosstableAnswer(player string) (map[string]any, *QueryError) {
	if player != "" {
		m.mu.Lock()
		qerr := m.noPlayerLocked(player)
		m.mu.Unlock()
		if qerr != nil {
			return nil, qerr
		}
	}
	in, _ := m.rated()
	if player != "" {
		return map[string]any{"round_id": in.round, "rounds_completed": in.closed,
			"crosstable": CrosstableOf([]string{player}, in.games)}, nil
	}
	if len(in.rows) > MaxCrosstablePlayers {
		return nil, &QueryError{ErrorCode: protocol.ErrInvalidMessageFormat,
			Message: fmt.Sprintf("the league has %d players, more than the %d of a whole crosstable: ask for one player's row (query_params.player_id)",
				len(in.rows), MaxCrosstablePlayers)}
	}
	return map[string]any{"round_id": in.round, "rounds_completed": in.closed, "crosstable": m.crosstable(in)}, nil
}
