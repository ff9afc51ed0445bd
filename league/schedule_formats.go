package league

import (
	"fmt"
	"strconv"
	"strings"
)

// The formats a league can be played in (Format.Kind).
const (
	FormatRoundRobin = "roundrobin"
	FormatDouble     = "double"
	FormatGauntlet   = "gauntlet"
	FormatSwiss      = "swiss"
)

// FormatNames lists the formats, the default first.
func FormatNames() []string {
	return []string{FormatRoundRobin, FormatDouble, FormatGauntlet, FormatSwiss}
}

// MaxGames bounds Format.Games: a pairing played more often than this is
// a typo, and would make a league of the same size this many times longer.
const MaxGames = 100

// Format says how a league pairs its players. The zero Format is today's
// single round robin.
type Format struct {
	// Kind is one of FormatNames; "" is FormatRoundRobin.
	Kind string
	// Games is how many matches each pairing plays (0 is 1), each in a
	// round of its own, roles alternating.
	Games int
	// Seeds is how many players, the first in id order, play everyone
	// else in a gauntlet (0 is 1).
	Seeds int
	// Rounds is the number of swiss rounds (0 is N-1).
	Rounds int
}

func (f Format) kind() string {
	if f.Kind == "" {
		return FormatRoundRobin
	}
	return f.Kind
}

func (f Format) games() int { return max(f.Games, 1) }

func (f Format) seeds() int { return max(f.Seeds, 1) }

// swiss reports whether the league is paired round by round.
func (f Format) swiss() bool { return f.kind() == FormatSwiss }

// swissRounds is the number of swiss rounds (pairings) for n players.
func (f Format) swissRounds(n int) int {
	if f.Rounds > 0 {
		return f.Rounds
	}
	return n - 1
}

// String names the format as its flags would: "swiss --rounds 5 --games 2".
func (f Format) String() string {
	s := f.kind()
	switch f.kind() {
	case FormatGauntlet:
		s += " --gauntlet-seeds " + strconv.Itoa(f.seeds())
	case FormatSwiss:
		if f.Rounds > 0 {
			s += " --rounds " + strconv.Itoa(f.Rounds)
		}
	}
	if f.games() > 1 {
		s += " --games " + strconv.Itoa(f.games())
	}
	return s
}

// Validate refuses a format that n players cannot play, saying why in
// the terms of the flags that set it.
func (f Format) Validate(n int) error {
	switch f.kind() {
	case FormatRoundRobin, FormatDouble, FormatGauntlet, FormatSwiss:
	default:
		return fmt.Errorf("format %q: want one of %s", f.Kind, strings.Join(FormatNames(), ", "))
	}
	if f.Games < 0 || f.Games > MaxGames {
		return fmt.Errorf("games %d: want 1 to %d matches per pairing", f.Games, MaxGames)
	}
	if f.Seeds < 0 || f.Rounds < 0 {
		return fmt.Errorf("gauntlet seeds (%d) and swiss rounds (%d) cannot be negative", f.Seeds, f.Rounds)
	}
	if n < 2 {
		return nil // too few to play; the start says so
	}
	if f.kind() == FormatGauntlet && f.seeds() >= n {
		return fmt.Errorf("gauntlet of %d players: --gauntlet-seeds %d leaves no one for the seeds to play; want 1 to %d",
			n, f.seeds(), n-1)
	}
	if f.kind() == FormatSwiss && f.swissRounds(n) > n-1 {
		// Beyond n-1 a pair would meet twice (or, odd n, a player sit out twice).
		return fmt.Errorf("swiss of %d players: --rounds %d is more than the %d rounds in which no pair meets twice; want 1 to %d",
			n, f.Rounds, n-1, n-1)
	}
	return nil
}

// Plan is how many rounds and matches n players play in format f, known
// before any is played (a swiss league's rounds are paired as it goes).
func (f Format) Plan(n int) (rounds, matches int) {
	if n < 2 {
		return 0, 0
	}
	g := f.games()
	switch f.kind() {
	case FormatDouble:
		r := n - 1 + n%2
		return 2 * r * g, n * (n - 1) * g
	case FormatGauntlet:
		s := min(f.seeds(), n-1)
		return max(s, n-s) * g, s * (n - s) * g
	case FormatSwiss:
		k := f.swissRounds(n)
		return k * g, k * (n / 2) * g
	}
	return (n - 1 + n%2) * g, n * (n - 1) / 2 * g
}

// Build makes the whole schedule of a fixed format for players (in id
// order), or, of a swiss league, nil: its rounds are paired as the league
// goes (Swiss). The fixed formats make no random choice, so they do not
// depend on the seed: the same players give the same schedule.
func (f Format) Build(players []string) ([][]Pairing, error) {
	if err := f.Validate(len(players)); err != nil {
		return nil, err
	}
	if len(players) < 2 || f.swiss() {
		return nil, nil
	}
	var cycle [][]Pairing
	switch f.kind() {
	case FormatRoundRobin:
		cycle = Schedule(players)
	case FormatDouble:
		first := Schedule(players)
		cycle = append(first, swapped(first)...)
	case FormatGauntlet:
		cycle = gauntlet(players, f.seeds())
	}
	return numbered(repeatGames(cycle, f.games())), nil
}

// swapped is rounds with every pairing's roles swapped.
func swapped(rounds [][]Pairing) [][]Pairing {
	out := make([][]Pairing, len(rounds))
	for r, round := range rounds {
		out[r] = make([]Pairing, len(round))
		for k, p := range round {
			out[r][k] = Pairing{A: p.B, B: p.A}
		}
	}
	return out
}

// repeatGames plays each round of rounds games times in a row, roles
// swapped every other time: the pairs of a round are disjoint, so each
// copy is a valid round, and a pairing's matches are as close together as
// they can be (cutechess plays a pairing's games one after the other).
func repeatGames(rounds [][]Pairing, games int) [][]Pairing {
	if games <= 1 {
		return rounds
	}
	out := make([][]Pairing, 0, len(rounds)*games)
	for _, round := range rounds {
		for g := range games {
			if g%2 == 0 {
				out = append(out, round)
			} else {
				out = append(out, swapped([][]Pairing{round})[0])
			}
		}
	}
	return out
}

// numbered gives rounds their numbers and match ids, R{round}M{k}, from
// their place: every format's schedule is numbered alike. It writes the
// rounds anew, since repeatGames shares a round between its copies.
func numbered(rounds [][]Pairing) [][]Pairing {
	out := make([][]Pairing, len(rounds))
	for r, round := range rounds {
		out[r] = numberRound(r+1, round)
	}
	return out
}

// numberRound is round as round r, its matches R{r}M1, R{r}M2, … in order.
func numberRound(r int, round []Pairing) []Pairing {
	out := make([]Pairing, len(round))
	prefix := "R" + strconv.Itoa(r) + "M"
	for k, p := range round {
		out[k] = Pairing{Round: r, MatchID: prefix + strconv.Itoa(k+1), A: p.A, B: p.B}
	}
	return out
}

// gauntlet is every one of the first s players (the seeds) against every
// other player, and no seed against a seed, as cutechess-cli's gauntlet:
// the seeds are measured against the field, not against each other. Round
// t pairs seed i with non-seed (i+t) mod L, L the larger side, so each
// player meets each of the other side once in L rounds, at most once a
// round. The seed is PLAYER_A when i+j is even: each player's roles are
// balanced, give or take one.
func gauntlet(players []string, s int) [][]Pairing {
	seeds, field := players[:s], players[s:]
	l := max(len(seeds), len(field))
	rounds := make([][]Pairing, 0, l)
	for t := range l {
		var round []Pairing
		for i, p := range seeds {
			j := (i + t) % l
			if j >= len(field) {
				continue
			}
			q := field[j]
			if (i+j)%2 == 1 {
				p, q = q, p
			}
			round = append(round, Pairing{A: p, B: q})
		}
		rounds = append(rounds, round)
	}
	return rounds
}
