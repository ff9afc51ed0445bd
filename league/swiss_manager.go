package league

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"
)

// firstRounds is what a league of players (in id order) schedules at its
// start: every round of a fixed format, the first swiss round (all its
// games) of a swiss league, paired from the seed alone.
func (m *Manager) firstRounds(ids []string) ([][]Pairing, error) {
	f := m.opts.Format
	if !f.swiss() {
		return f.Build(ids)
	}
	if err := f.Validate(len(ids)); err != nil {
		return nil, err
	}
	return swissBlock(SwissRound{Seed: m.opts.Seed, Players: ids, Points: map[string]int{}, Rounds: f.swissRounds(len(ids))},
		f.games())
}

// swissBlock pairs the next swiss round of in and plays it games times,
// as as many league rounds in a row, roles swapped every other time.
func swissBlock(in SwissRound, games int) ([][]Pairing, error) {
	pairs, err := PairSwiss(in)
	if err != nil {
		return nil, err
	}
	first := len(in.Played)*games + 1
	block := repeatGames([][]Pairing{pairs}, games)
	for g := range block {
		block[g] = numberRound(first+g, block[g])
	}
	return block, nil
}

// planLocked sets the league's planned rounds and matches from its format
// and players, known before a swiss league has paired its later rounds,
// so that progress and its estimate count them from the start.
func (m *Manager) planLocked() {
	m.plannedRounds, m.total = m.opts.Format.Plan(len(m.players))
	if !m.opts.Format.swiss() {
		// A fixed schedule says itself what it holds.
		m.plannedRounds, m.total = len(m.rounds), 0
		for _, ms := range m.rounds {
			m.total += len(ms)
		}
	}
}

// checkPlanLocked plans a league restored from its store (planLocked) and
// refuses a schedule the format could not have made: a manager restarted
// with another --format than the league began with.
func (m *Manager) checkPlanLocked() error {
	stored := m.total
	rounds, matches := m.opts.Format.Plan(len(m.players))
	f := m.opts.Format
	ok := stored == matches && len(m.rounds) == rounds
	if f.swiss() {
		ok = len(m.rounds) <= rounds && len(m.rounds)%f.games() == 0 && stored <= matches
	}
	if !ok {
		return fmt.Errorf("the store's schedule (%d rounds, %d matches stored) is not one of format %s for %d players "+
			"(%d rounds, %d matches): give the manager the --format, --games, --gauntlet-seeds and --rounds the league began with",
			len(m.rounds), stored, f, len(m.players), rounds, matches)
	}
	m.planLocked()
	return nil
}

// pairNext pairs round r of a swiss league, if r is the first league
// round of a swiss round not yet paired, from the seed and the standings
// once every result before it is counted, and stores it before anyone
// hears of it: a manager restarted on its store plays the rounds it
// stored, and pairs a round it had not stored as this one would have
// (the results it pairs from are stored). Other formats have every round
// already.
func (m *Manager) pairNext(ctx context.Context, r int) error {
	m.mu.Lock()
	if !m.opts.Format.swiss() || r > m.plannedRounds || r <= len(m.rounds) {
		m.mu.Unlock()
		return nil
	}
	games := m.opts.Format.games()
	in := m.swissInputLocked()
	m.mu.Unlock()
	began := time.Now()
	block, err := swissBlock(in, games)
	if err != nil {
		return err
	}
	if block[0][0].Round != r {
		return fmt.Errorf("swiss: round %d asked for, round %d paired next", r, block[0][0].Round)
	}
	if err := m.persist(ctx, "swiss round", func(ctx context.Context, s Store) error {
		w, ok := s.(ScheduleWriter)
		if !ok {
			return errors.New("this store cannot record the later rounds of a swiss league (it is no ScheduleWriter)")
		}
		var rows []ScheduleRow
		for _, round := range block {
			for i, p := range round {
				rows = append(rows, ScheduleRow{Pairing: p, Position: i})
			}
		}
		// One write for the whole block: a restart finds all of it or none.
		return w.SaveMatches(ctx, rows)
	}); err != nil {
		return err
	}
	built, err := buildRounds(block)
	if err != nil {
		return err
	}
	m.mu.Lock()
	for _, ms := range built.rounds {
		for _, mt := range ms {
			if m.byID[mt.MatchID] != nil {
				m.mu.Unlock()
				return fmt.Errorf("swiss: the schedule has two matches %s", mt.MatchID)
			}
			m.byID[mt.MatchID] = mt
		}
	}
	m.rounds = append(m.rounds, built.rounds...)
	m.mu.Unlock()
	m.log.LogAttrs(ctx, slog.LevelInfo, "swiss round paired", slog.Int("round_id", r),
		slog.Int("matches", len(block[0])), slog.Int("games", games), slog.Duration("took", time.Since(began)))
	return nil
}

// swissInputLocked is what the next swiss round is paired from: the
// players in id order, their points so far, and the swiss rounds before
// (the first game of each).
func (m *Manager) swissInputLocked() SwissRound {
	ids := make([]string, len(m.players))
	points := make(map[string]int, len(m.players))
	for i, p := range m.players {
		ids[i] = p.id
		if r := m.table.rows[p.id]; r != nil {
			points[p.id] = r.points
		}
	}
	sort.Strings(ids)
	games := m.opts.Format.games()
	var played [][]Pairing
	for s := 0; s < len(m.rounds); s += games {
		round := make([]Pairing, len(m.rounds[s]))
		for i, mt := range m.rounds[s] {
			round[i] = mt.Pairing
		}
		played = append(played, round)
	}
	return SwissRound{Seed: m.opts.Seed, Players: ids, Points: points, Played: played,
		Rounds: m.opts.Format.swissRounds(len(ids))}
}
