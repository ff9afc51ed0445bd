package cmd

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league/sqlite"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestFormats plays the formats and games per pairing with real agents on
// every network, and counts what was played: the matches the league
// announced, the results in the standings and the pairings in its store.
func TestFormats(t *testing.T) {
	tests := []struct {
		name          string
		players       int
		league        config.League
		rounds        int
		matches       int
		pairs         int // distinct pairs that met
		perPair       int // matches of each pair that met
		maxPlayerSeen int // matches of the player who played most
	}{
		{"roundrobin games 2", 4, config.League{Format: "roundrobin", Games: 2, GauntletSeeds: 1}, 6, 12, 6, 2, 6},
		{"gauntlet of 6", 6, config.League{Format: "gauntlet", Games: 1, GauntletSeeds: 1}, 5, 5, 5, 1, 5},
		{"swiss 16 players 5 rounds", 16, config.League{Format: "swiss", Games: 1, GauntletSeeds: 1, Rounds: 5}, 5, 40, 40, 1, 5},
		{"double of 4", 4, config.League{Format: "double", Games: 1, GauntletSeeds: 1}, 6, 12, 6, 2, 6},
	}
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				is := is.New(t)
				ctx := context.Background()
				store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "league.db"))
				is.NoErr(err)
				defer store.Close()
				cfg := config.Default()
				cfg.League = tt.league
				is.NoErr(cfg.Validate())
				lc := playLeague(t, n, leagueSpec{cfg: cfg, seed: 9, players: tt.players, referees: 2,
					maxConcurrent: 3, strategies: strategiesOf(t, "random", "adaptive"), store: store})
				is.Equal(lc.TotalRounds, tt.rounds)   // rounds announced
				is.Equal(lc.TotalMatches, tt.matches) // matches announced
				played, most := 0, 0
				for _, r := range lc.FinalStandings {
					played += r.Played
					most = max(most, r.Played)
					is.Equal(r.TechnicalLosses, 0) // a healthy league
				}
				is.Equal(played, 2*tt.matches)   // every match counted, once
				is.Equal(most, tt.maxPlayerSeen) // the busiest player's matches
				saved, err := store.Load(ctx)
				is.NoErr(err)
				is.Equal(len(saved.Rounds), tt.rounds)   // every round stored
				is.Equal(len(saved.Results), tt.matches) // every result stored
				met := map[[2]string]int{}
				for _, round := range saved.Rounds {
					in := map[string]bool{}
					for _, p := range round {
						is.True(!in[p.A] && !in[p.B]) // one match a player a round
						in[p.A], in[p.B] = true, true
						met[[2]string{min(p.A, p.B), max(p.A, p.B)}]++
					}
				}
				is.Equal(len(met), tt.pairs) // pairs that met
				for pair, k := range met {
					if k != tt.perPair {
						t.Fatalf("%v met %d times, want %d", pair, k, tt.perPair) // no pairing more often than its games
					}
				}
			})
		}
	})
}
