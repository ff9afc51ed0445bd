package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

func strategiesOf(t *testing.T, names ...string) []player.Strategy { return strategiesOfB(t, names...) }

func strategiesOfB(t testing.TB, names ...string) []player.Strategy {
	t.Helper()
	out := make([]player.Strategy, len(names))
	for i, n := range names {
		s, err := player.StrategyByName(n)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out
}

// playLeague runs a whole league on n and returns LEAGUE_COMPLETED.
func playLeague(t *testing.T, n *transporttest.Net, spec leagueSpec) *protocol.LeagueCompleted {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer n.CloseIdle()
	lc, err := runLocalLeague(ctx, n, n.Client(spec.cfg.Timeouts.Generic), spec, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

// checkInvariants checks what every healthy league must show.
func checkInvariants(t *testing.T, lc *protocol.LeagueCompleted, players int, scoring config.Scoring) {
	t.Helper()
	is := is.New(t)
	wantRounds := players - 1
	if players%2 == 1 {
		wantRounds = players
	}
	is.Equal(lc.MessageType, protocol.TypeLeagueCompleted)
	is.NoErr(protocol.Validate(lc))                  // a valid LEAGUE_COMPLETED
	is.Equal(lc.TotalRounds, wantRounds)             // circle method rounds
	is.Equal(lc.TotalMatches, players*(players-1)/2) // N(N-1)/2 matches
	is.Equal(len(lc.FinalStandings), players)        // every player ranked
	wins, losses, draws := 0, 0, 0
	seen := map[string]bool{}
	for i, r := range lc.FinalStandings {
		is.Equal(r.Rank, i+1)      // ranks 1..N in order
		is.True(!seen[r.PlayerID]) // once each
		seen[r.PlayerID] = true
		is.Equal(r.Played, players-1)                                                     // each plays N-1 matches
		is.Equal(r.Played, r.Wins+r.Draws+r.Losses)                                       // played = W+D+L
		is.Equal(r.TechnicalLosses, 0)                                                    // a healthy league
		is.Equal(r.Points, scoring.Win*r.Wins+scoring.Draw*r.Draws+scoring.Loss*r.Losses) // points
		if i > 0 {
			is.True(r.Points <= lc.FinalStandings[i-1].Points) // sorted by points
		}
		wins += r.Wins
		losses += r.Losses
		draws += r.Draws
	}
	is.Equal(wins, losses)                                        // every win is someone's loss
	is.Equal(draws%2, 0)                                          // draws come in pairs
	is.Equal(wins+draws/2, lc.TotalMatches)                       // every match counted once
	is.Equal(lc.Champion.PlayerID, lc.FinalStandings[0].PlayerID) // the champion tops the table
	is.Equal(lc.Champion.Points, lc.FinalStandings[0].Points)
}

// TestWholeLeagues plays leagues of 2 to 17 players on both networks and
// checks every invariant, and that both networks give the same standings.
func TestWholeLeagues(t *testing.T) {
	cfg := config.Default()
	all := strategiesOf(t, player.StrategyNames()...)
	results := map[string]map[int][]protocol.StandingRow{}
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		results[n.Name] = map[int][]protocol.StandingRow{}
		for players := 2; players <= 17; players++ {
			t.Run(fmt.Sprint(players), func(t *testing.T) {
				lc := playLeague(t, n, leagueSpec{cfg: cfg, seed: uint64(1000 + players), players: players,
					referees: 1 + players%3, strategies: all, maxConcurrent: 2})
				checkInvariants(t, lc, players, cfg.Scoring)
				results[n.Name][players] = lc.FinalStandings
			})
		}
	})
	is := is.New(t)
	is.Equal(len(results), 3) // every network ran
	for players := 2; players <= 17; players++ {
		is.Equal(results["mem"][players], results["http"][players])       // same standings on every network
		is.Equal(results["mem-codec"][players], results["http"][players]) // same standings on every network
	}
}

// TestDeterminism: the same seed gives the same standings run after run,
// whatever the concurrency and the network; another seed gives other
// standings.
func TestDeterminism(t *testing.T) {
	cfg := config.Default()
	spec := leagueSpec{cfg: cfg, seed: 77, players: 12, referees: 3, maxConcurrent: 4,
		strategies: strategiesOf(t, "random", "adaptive", "winstay", "cycle")}
	first := playLeague(t, transporttest.Mem(), spec)
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		for _, conc := range []int{1, 2, 50} {
			s := spec
			s.maxConcurrent, s.referees = conc, 1+conc%2
			again := playLeague(t, n, s)
			is.Equal(again.FinalStandings, first.FinalStandings) // same seed, same standings
		}
		s := spec
		s.seed = 78
		other := playLeague(t, n, s)
		is.True(fmt.Sprint(other.FinalStandings) != fmt.Sprint(first.FinalStandings)) // the seed matters
	})
}

// TestScoringConfig: points follow the configured scoring.
func TestScoringConfig(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		cfg := config.Default()
		cfg.Scoring = config.Scoring{Win: 2, Draw: 1, Loss: 0}
		lc := playLeague(t, n, leagueSpec{cfg: cfg, seed: 5, players: 6, referees: 1,
			maxConcurrent: 3, strategies: strategiesOf(t, "random")})
		checkInvariants(t, lc, 6, cfg.Scoring)
	})
}
