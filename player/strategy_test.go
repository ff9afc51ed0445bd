package player_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/rng"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
)

const (
	even = protocol.Even
	odd  = protocol.Odd
)

// situation is what the player builds for a parity call of P01 in match
// under league seed 42.
func situation(match string, history ...player.Game) *player.Situation {
	return &player.Situation{MatchID: match, RoundID: 1, OpponentID: "P02", History: history,
		Rand: rng.New(42, "player", "P01", match)}
}

func won(choice, parity string) player.Game {
	return player.Game{MyChoice: choice, Parity: parity, Result: protocol.ResultWin}
}

func lost(choice, parity string) player.Game {
	return player.Game{MyChoice: choice, Parity: parity, Result: protocol.ResultLoss}
}

func drew(choice, parity string) player.Game {
	return player.Game{MyChoice: choice, Parity: parity, Result: protocol.ResultDraw}
}

// technicalLoss is a game this player lost by a technical loss; choice is
// "" when it never chose, and no number was drawn.
func technicalLoss(choice string) player.Game {
	return player.Game{MyChoice: choice, Result: protocol.ResultTechnicalLoss}
}

func strategy(t *testing.T, name string) player.Strategy {
	t.Helper()
	s, err := player.StrategyByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStrategyNames(t *testing.T) {
	is := is.New(t)
	is.Equal(player.StrategyNames(), []string{"adaptive", "cycle", "even", "odd", "random", "winstay"})
	for _, name := range player.StrategyNames() {
		s, err := player.StrategyByName(name)
		is.NoErr(err)
		is.Equal(s.Name(), name) // the strategy knows its own name
	}
}

func TestStrategyByNameUnknown(t *testing.T) {
	is := is.New(t)
	s, err := player.StrategyByName("zigzag")
	is.Equal(s, nil)
	is.Equal(err.Error(), `unknown strategy "zigzag" (known: adaptive, cycle, even, odd, random, winstay)`) // lists the known names
}

// TestRandomStrategy pins the choices of seed 42, player P01: the draw is a
// function of (seed, player, match) and nothing else.
func TestRandomStrategy(t *testing.T) {
	is := is.New(t)
	s := strategy(t, "random")
	var got []string
	for _, m := range []string{"R1M1", "R1M2", "R2M1", "R2M2"} {
		got = append(got, s.Choose(situation(m)))
	}
	is.Equal(got, []string{odd, even, even, even}) // seed 42, P01, R1M1..R2M2
	// The same (seed, player, match) again, even with another history,
	// draws the same.
	is.Equal(s.Choose(situation("R1M1", won(even, even), lost(odd, even))), odd) // reproducible
	// Another player, or another seed, has its own draw.
	is.Equal(s.Choose(&player.Situation{MatchID: "R1M2", Rand: rng.New(42, "player", "P02", "R1M2")}), even) // P02 R1M2
	is.Equal(s.Choose(&player.Situation{MatchID: "R1M2", Rand: rng.New(7, "player", "P01", "R1M2")}), odd)   // seed 7 R1M2
}

func TestFixedStrategies(t *testing.T) {
	histories := [][]player.Game{nil, {won(odd, odd)}, {lost(even, odd), drew(odd, odd), technicalLoss("")}}
	for _, tc := range []struct{ name, want string }{{"even", even}, {"odd", odd}} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			for _, h := range histories {
				is.Equal(strategy(t, tc.name).Choose(situation("R1M1", h...)), tc.want)
			}
		})
	}
}

func TestCycleStrategy(t *testing.T) {
	is := is.New(t)
	s := strategy(t, "cycle")
	var history []player.Game
	var got []string
	for range 5 {
		c := s.Choose(situation("R1M1", history...))
		got = append(got, c)
		history = append(history, lost(c, other(c)))
	}
	is.Equal(got, []string{even, odd, even, odd, even}) // alternates over the games played
}

func other(p string) string {
	if p == even {
		return odd
	}
	return even
}

func TestAdaptiveStrategy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		match   string
		history []player.Game
		want    string
	}{
		{"no history: coin", "R1M1", nil, odd},
		{"no history, other match: coin", "R1M2", nil, even},
		{"one even", "R1M1", []player.Game{lost(odd, even)}, even},
		{"odd drawn most", "R1M2", []player.Game{won(even, even), lost(even, odd), won(odd, odd)}, odd},
		{"even drawn most", "R1M1", []player.Game{won(even, even), lost(odd, even), won(odd, odd)}, even},
		{"tie: coin", "R1M1", []player.Game{won(even, even), won(odd, odd)}, odd},
		{"tie, other match: coin", "R1M2", []player.Game{won(even, even), won(odd, odd)}, even},
		{"technical losses draw nothing", "R1M1", []player.Game{won(even, even), technicalLoss(""), technicalLoss(odd)}, even},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(strategy(t, "adaptive").Choose(situation(tc.match, tc.history...)), tc.want)
		})
	}
}

func TestWinStayStrategy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		match   string
		history []player.Game
		want    string
	}{
		{"no history: coin", "R1M1", nil, odd},
		{"no history, other match: coin", "R1M2", nil, even},
		{"win: stay", "R1M1", []player.Game{won(even, even)}, even},
		{"draw: stay", "R1M1", []player.Game{drew(even, even)}, even},
		{"loss: shift", "R1M1", []player.Game{lost(even, odd)}, odd},
		{"loss on odd: shift", "R1M1", []player.Game{lost(odd, even)}, even},
		{"only the last game counts", "R1M1", []player.Game{lost(even, odd), won(odd, odd), lost(odd, even)}, even},
		{"technical loss after a choice: shift", "R1M1", []player.Game{won(odd, odd), technicalLoss(odd)}, even},
		{"games without a choice are skipped", "R1M1", []player.Game{won(odd, odd), technicalLoss("")}, odd},
		{"no game with a choice: coin", "R1M2", []player.Game{technicalLoss("")}, even},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(strategy(t, "winstay").Choose(situation(tc.match, tc.history...)), tc.want)
		})
	}
}

// TestWinStayScript plays a scripted league: the referee draws the given
// parities and winstay answers each.
func TestWinStayScript(t *testing.T) {
	is := is.New(t)
	s := strategy(t, "winstay")
	var history []player.Game
	var got []string
	for i, drawn := range []string{even, odd, odd, even, even} {
		match := []string{"R1M1", "R2M1", "R3M1", "R4M1", "R5M1"}[i]
		c := s.Choose(situation(match, history...))
		got = append(got, c)
		g := lost(c, drawn)
		if c == drawn {
			g = won(c, drawn)
		}
		history = append(history, g)
	}
	// coin odd (lost on even) → even (lost on odd) → odd (won) → odd
	// (lost on even) → even (won).
	is.Equal(got, []string{odd, even, odd, odd, even})
}
