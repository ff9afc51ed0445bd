package league_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
)

// TestFormatSchedules checks every fixed format, games 1 to 3, for 2 to
// 17 players: rounds of disjoint pairs numbered R{r}M{k}, each pair's
// count, each player's roles, the plan, and the same schedule every time.
func TestFormatSchedules(t *testing.T) {
	for _, kind := range []string{league.FormatRoundRobin, league.FormatDouble, league.FormatGauntlet} {
		for games := 1; games <= 3; games++ {
			for n := 2; n <= 17; n++ {
				for seeds := 1; seeds <= 3 && seeds < n; seeds++ {
					if kind != league.FormatGauntlet && seeds > 1 {
						break
					}
					f := league.Format{Kind: kind, Games: games, Seeds: seeds}
					t.Run(fmt.Sprintf("%s/%d", f, n), func(t *testing.T) {
						checkFormat(t, f, n)
					})
				}
			}
		}
	}
}

func checkFormat(t *testing.T, f league.Format, n int) {
	is := is.New(t)
	players := ids(n)
	rounds, err := f.Build(players)
	is.NoErr(err)
	again, err := f.Build(players)
	is.NoErr(err)
	is.Equal(rounds, again) // the same players, the same schedule
	wantRounds, wantMatches := f.Plan(n)
	is.Equal(len(rounds), wantRounds) // the plan's rounds
	met := map[[2]string]int{}
	asA := map[[2]string]int{} // of each pair, the first id's PLAYER_A matches
	roles := map[string]int{}
	total := 0
	for r, round := range rounds {
		is.True(len(round) > 0) // no empty round
		in := map[string]bool{}
		for k, p := range round {
			is.Equal(p.Round, r+1)
			is.Equal(p.MatchID, fmt.Sprintf("R%dM%d", r+1, k+1))
			is.True(p.A != p.B)
			is.True(!in[p.A] && !in[p.B]) // one match a player a round
			in[p.A], in[p.B] = true, true
			key := [2]string{min(p.A, p.B), max(p.A, p.B)}
			met[key]++
			if p.A == key[0] {
				asA[key]++
			}
			roles[p.A]++
			roles[p.B]--
			total++
		}
	}
	is.Equal(total, wantMatches) // the plan's matches
	games := max(f.Games, 1)
	seeds := max(f.Seeds, 1)
	for i, a := range players {
		for _, b := range players[i+1:] {
			key := [2]string{a, b}
			want := games
			switch {
			case f.Kind == league.FormatDouble:
				want = 2 * games
			case f.Kind == league.FormatGauntlet && !(a < players[seeds] && b >= players[seeds]):
				want = 0 // seed against seed, or non-seeds
			}
			is.Equal(met[key], want) // each pair's count
			if want%2 == 0 {
				is.Equal(asA[key], want/2) // an even count: roles alternate exactly
			} else {
				d := asA[key] - (want - asA[key])
				is.True(d == 1 || d == -1) // an odd count: one more one way
			}
		}
	}
	for _, id := range players {
		is.True(roles[id] >= -1 && roles[id] <= 1) // each player's roles balanced, give or take one
	}
}

// TestGamesInSeparateRounds: a pairing's games are in rounds of their
// own, one after the other, roles alternating.
func TestGamesInSeparateRounds(t *testing.T) {
	is := is.New(t)
	rounds, err := league.Format{Games: 2}.Build(ids(4))
	is.NoErr(err)
	is.Equal(rounds[:2], [][]league.Pairing{
		{{1, "R1M1", "P01", "P04"}, {1, "R1M2", "P02", "P03"}},
		{{2, "R2M1", "P04", "P01"}, {2, "R2M2", "P03", "P02"}},
	})
}

func TestGauntletSixPlayers(t *testing.T) {
	is := is.New(t)
	rounds, err := league.Format{Kind: league.FormatGauntlet}.Build(ids(6))
	is.NoErr(err)
	is.Equal(len(rounds), 5) // P01 against each of the five others
	for _, round := range rounds {
		is.Equal(len(round), 1)
		is.True(round[0].A == "P01" || round[0].B == "P01") // the seed plays every match
	}
}

func TestFormatValidate(t *testing.T) {
	for _, tt := range []struct {
		f    league.Format
		n    int
		want string
	}{
		{league.Format{Kind: "knockout"}, 4, `format "knockout": want one of roundrobin, double, gauntlet, swiss`},
		{league.Format{Games: 101}, 4, "games 101: want 1 to 100 matches per pairing"},
		{league.Format{Kind: league.FormatGauntlet, Seeds: 4}, 4, "gauntlet of 4 players: --gauntlet-seeds 4 leaves no one for the seeds to play; want 1 to 3"},
		{league.Format{Kind: league.FormatSwiss, Rounds: 4}, 4, "swiss of 4 players: --rounds 4 is more than the 3 rounds in which no pair meets twice; want 1 to 3"},
	} {
		is := is.New(t)
		err := tt.f.Validate(tt.n)
		is.True(err != nil)
		is.Equal(err.Error(), tt.want)
	}
	is := is.New(t)
	is.NoErr(league.Format{Kind: league.FormatSwiss, Rounds: 3}.Validate(4))
	is.NoErr(league.Format{}.Validate(2))
}

func TestSwissPlan(t *testing.T) {
	is := is.New(t)
	rounds, matches := league.Format{Kind: league.FormatSwiss, Rounds: 5}.Plan(16)
	is.Equal(rounds, 5)
	is.Equal(matches, 40) // K × floor(N/2)
	rounds, matches = league.Format{Kind: league.FormatSwiss, Games: 2}.Plan(7)
	is.Equal(rounds, 12)  // N-1 swiss rounds of 2 games
	is.Equal(matches, 36) // 6 × 3 × 2
}
