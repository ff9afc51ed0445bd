package player

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/leaguectl/leaguectl/protocol"
)

// Game is one finished match as the player saw it.
type Game struct {
	MatchID        string `json:"match_id"`
	RoundID        int    `json:"round_id"`
	OpponentID     string `json:"opponent_id"`
	MyChoice       string `json:"my_choice,omitzero"`
	OpponentChoice string `json:"opponent_choice,omitzero"`
	DrawnNumber    int    `json:"drawn_number,omitzero"`
	Parity         string `json:"parity,omitzero"`
	Winner         string `json:"winner,omitzero"`
	// Result is this player's outcome: WIN, LOSS, DRAW or TECHNICAL_LOSS.
	Result string `json:"result"`
}

// Situation is what a strategy knows when it chooses.
type Situation struct {
	MatchID    string
	RoundID    int
	OpponentID string
	// History is this player's finished games, oldest first. It is the
	// player's own record, shared: a strategy reads it and must not change
	// it.
	History []Game
	// Rand is derived from (league seed, player id, match id): the same
	// situation always gets the same draw.
	Rand *rand.Rand
}

// Strategy chooses a parity.
type Strategy interface {
	Name() string
	// Choose returns protocol.Even or protocol.Odd.
	Choose(s *Situation) string
}

type strategyFunc struct {
	name   string
	choose func(s *Situation) string
}

func (f strategyFunc) Name() string               { return f.name }
func (f strategyFunc) Choose(s *Situation) string { return f.choose(s) }

func coin(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return protocol.Even
	}
	return protocol.Odd
}

func other(p string) string {
	if p == protocol.Even {
		return protocol.Odd
	}
	return protocol.Even
}

// strategies is the catalogue, by name.
func strategies() map[string]Strategy {
	return map[string]Strategy{
		"random": strategyFunc{"random", func(s *Situation) string { return coin(s.Rand) }},
		"even":   strategyFunc{"even", func(*Situation) string { return protocol.Even }},
		"odd":    strategyFunc{"odd", func(*Situation) string { return protocol.Odd }},
		// cycle alternates even, odd, even, … over the player's games.
		"cycle": strategyFunc{"cycle", func(s *Situation) string {
			if len(s.History)%2 == 0 {
				return protocol.Even
			}
			return protocol.Odd
		}},
		// adaptive bets on the parity the referees have drawn most often in
		// this player's games: a fair referee makes it no worse than random,
		// a biased one is exploited. Ties are broken by a coin.
		"adaptive": strategyFunc{"adaptive", func(s *Situation) string {
			even, odd := 0, 0
			for _, g := range s.History {
				switch g.Parity {
				case protocol.Even:
					even++
				case protocol.Odd:
					odd++
				}
			}
			switch {
			case even > odd:
				return protocol.Even
			case odd > even:
				return protocol.Odd
			}
			return coin(s.Rand)
		}},
		// winstay keeps its last choice after a win and switches after a
		// loss (win-stay, lose-shift); draws keep it too. A technical loss
		// is a loss.
		"winstay": strategyFunc{"winstay", func(s *Situation) string {
			for i := len(s.History) - 1; i >= 0; i-- {
				g := s.History[i]
				if g.MyChoice == "" {
					continue
				}
				if g.Result == protocol.ResultLoss || g.Result == protocol.ResultTechnicalLoss {
					return other(g.MyChoice)
				}
				return g.MyChoice
			}
			return coin(s.Rand)
		}},
	}
}

// StrategyNames lists the strategies, sorted.
func StrategyNames() []string {
	var names []string
	for n := range strategies() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StrategyByName returns the named strategy.
func StrategyByName(name string) (Strategy, error) {
	if s, ok := strategies()[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("unknown strategy %q (known: %s)", name, strings.Join(StrategyNames(), ", "))
}
