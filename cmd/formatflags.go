package cmd

import (
	"fmt"
	"maps"
	"strings"

	"github.com/spf13/pflag"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
)

// formatFlags are the flags of a league's format (docs/formats.md) and the
// config keys they set: flags of the commands that run a league
// (simulate, serve-manager), short, since they are its first choice.
func formatFlags() map[string]string {
	return map[string]string{
		"format":         "league.format",
		"games":          "league.games",
		"gauntlet-seeds": "league.gauntlet_seeds",
		"rounds":         "league.rounds",
	}
}

// addFormatFlags adds the format flags to fs, with the config's defaults.
func addFormatFlags(fs *pflag.FlagSet) {
	d := config.Default().League
	fs.String("format", d.Format, "league format: "+strings.Join(config.Formats(), ", ")+" (docs/formats.md)")
	fs.Int("games", d.Games, "matches each pairing plays, each in a round of its own, roles alternating")
	fs.Int("gauntlet-seeds", d.GauntletSeeds, "gauntlet: the first N players (in id order) each play everyone else")
	fs.Int("rounds", d.Rounds, "swiss: rounds to play, at most players-1 (default players-1)")
}

// withFormatFlags is keys and, when fs has the format flags, theirs
// (--games tells: export's hidden --format is its output's old name).
func withFormatFlags(keys map[string]string, fs *pflag.FlagSet) map[string]string {
	if fs.Lookup("games") == nil {
		return keys
	}
	out := maps.Clone(keys)
	maps.Copy(out, formatFlags())
	return out
}

// leagueFormat is the league.Format of cfg.
func leagueFormat(cfg config.Config) league.Format {
	l := cfg.League
	return league.Format{Kind: l.Format, Games: l.Games, Seeds: l.GauntletSeeds, Rounds: l.Rounds}
}

// checkFormat refuses, before a league starts, a format its players
// cannot play (a gauntlet of no one, more swiss rounds than opponents).
func checkFormat(cfg config.Config, players int) error {
	if err := leagueFormat(cfg).Validate(players); err != nil {
		return usagef(fmt.Errorf("%w", err))
	}
	return nil
}
