package cmd

import (
	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/player"
)

// completeFlagValues registers, on c and every command beneath it, the
// shell completion of the flags whose values are a fixed list, where the
// command has not registered its own (export's --output is json or csv).
func completeFlagValues(c *cobra.Command) {
	values := map[string][]string{
		"output":    {"table", "json"},
		"strategy":  player.StrategyNames(),
		"transport": {"mem", "http"},
		"format":    config.Formats(),
		"log-level": config.LogLevels(),
	}
	for name, vs := range values {
		if c.LocalFlags().Lookup(name) == nil {
			continue
		}
		if _, ok := c.GetFlagCompletionFunc(name); ok {
			continue
		}
		_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp))
	}
	for _, sub := range c.Commands() {
		completeFlagValues(sub)
	}
}
