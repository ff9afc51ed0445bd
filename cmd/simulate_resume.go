package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/mem"
)

// dbCost is what --db costs simulate, measured (docs/persistence.md):
// simulate --players 200, five runs with and without --db alternated, on
// a busy 2-core machine with an ext4 disk: medians 9.3 s and 16.4 s (it
// was 4 to 6 times the time while every commit flushed the disk).
const dbCost = "1.7 times the time of a league in memory"

// resumeCommand is the command line of c as it was given, which run
// again resumes the league of its --db: the database holds the seed and
// the results, the flags say how to play the rest.
func resumeCommand(c *cobra.Command) string {
	words := []string{c.Root().Name(), c.Name()}
	c.Flags().Visit(func(f *pflag.Flag) {
		name := "--" + f.Name
		sv, isSlice := f.Value.(pflag.SliceValue)
		switch {
		case isSlice && f.Value.Type() == "stringSlice":
			words = append(words, name, shellQuote(strings.Join(sv.GetSlice(), ",")))
		case isSlice:
			for _, v := range sv.GetSlice() {
				words = append(words, name, shellQuote(v))
			}
		case f.Value.Type() == "bool":
			words = append(words, name+"="+f.Value.String())
		default:
			words = append(words, name, shellQuote(f.Value.String()))
		}
	})
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell, unless it needs none.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// resumable refuses to resume the league saved with options that would
// not carry it on: another league id, seed or number of agents, or agents
// whose endpoints this process cannot have again (a league played over
// loopback HTTP had ports that died with its process).
func (o *simulateOptions) resumable(saved *league.Saved, cfg config.Config) error {
	players, referees := 0, 0
	for _, a := range saved.Agents {
		if !strings.HasPrefix(a.Endpoint, mem.Scheme+"://") || o.transport != "mem" {
			return usagef(fmt.Errorf("--db %s holds league %s played over loopback HTTP, whose agents' ports ended with "+
				"their process: only a league of --transport mem can be resumed; give a new --db", shownDB(o.db), saved.League.LeagueID))
		}
		if a.Role == protocol.RoleReferee {
			referees++
		} else {
			players++
		}
	}
	why := ""
	switch {
	case saved.League.LeagueID != cfg.LeagueID:
		why = fmt.Sprintf("league %s, not %s", saved.League.LeagueID, cfg.LeagueID)
	case o.seedSet && o.seed != saved.League.Seed:
		why = fmt.Sprintf("seed %d, not %d", saved.League.Seed, o.seed)
	case saved.State == league.StateRegistration && (players > o.players || referees > o.referees),
		saved.State != league.StateRegistration && (players != o.players || referees != o.referees):
		why = fmt.Sprintf("%s and %s, not %s and %s", plural(players, "player", "players"), plural(referees, "referee", "referees"),
			plural(o.players, "player", "players"), plural(o.referees, "referee", "referees"))
	}
	if why != "" {
		return usagef(fmt.Errorf("--db %s holds a league of %s: resume it with the flags it was started with, or give a new --db", shownDB(o.db), why))
	}
	return nil
}
