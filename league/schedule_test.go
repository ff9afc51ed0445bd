package league_test

import (
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
)

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("P%02d", i+1)
	}
	return out
}

func TestScheduleProperties(t *testing.T) {
	for n := 2; n <= 40; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			is := is.New(t)
			rounds := league.Schedule(ids(n))
			wantRounds := n - 1
			if n%2 == 1 {
				wantRounds = n
			}
			is.Equal(len(rounds), wantRounds) // circle method round count
			met := map[[2]string]bool{}
			games, asA, asB, byes := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
			matchIDs := map[string]bool{}
			total := 0
			for r, round := range rounds {
				is.Equal(len(round), n/2) // every round is full but for the bye
				inRound := map[string]bool{}
				for k, p := range round {
					is.Equal(p.Round, r+1)
					is.Equal(p.MatchID, fmt.Sprintf("R%dM%d", r+1, k+1))
					is.True(!matchIDs[p.MatchID]) // unique match ids
					matchIDs[p.MatchID] = true
					is.True(p.A != p.B)
					is.True(!inRound[p.A] && !inRound[p.B]) // nobody plays twice in a round
					inRound[p.A], inRound[p.B] = true, true
					key := [2]string{min(p.A, p.B), max(p.A, p.B)}
					is.True(!met[key]) // every pair meets once
					met[key] = true
					games[p.A]++
					games[p.B]++
					asA[p.A]++
					asB[p.B]++
					total++
				}
				for _, id := range ids(n) {
					if !inRound[id] {
						byes[id]++
					}
				}
			}
			is.Equal(total, n*(n-1)/2) // N(N-1)/2 matches
			for _, id := range ids(n) {
				is.Equal(games[id], n-1) // each player plays N-1 matches
				d := asA[id] - asB[id]
				is.True(d >= -1 && d <= 1) // roles balanced
				if n%2 == 1 {
					is.Equal(byes[id], 1) // one bye each for odd N
				} else {
					is.Equal(byes[id], 0)
				}
			}
		})
	}
}

func TestScheduleFour(t *testing.T) {
	is := is.New(t)
	got := league.Schedule(ids(4))
	want := [][]league.Pairing{
		{{1, "R1M1", "P01", "P04"}, {1, "R1M2", "P02", "P03"}},
		{{2, "R2M1", "P03", "P01"}, {2, "R2M2", "P04", "P02"}},
		{{3, "R3M1", "P01", "P02"}, {3, "R3M2", "P03", "P04"}},
	}
	is.Equal(got, want)
	is.Equal(len(league.Schedule(ids(1))), 0)
}
