// Package cmd is leaguectl's command line: cobra wiring, one file per
// subcommand, each with an options struct and a plain function that does
// the work. Run is the whole program and can be called from tests.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/protocol"
)

// Run runs leaguectl with args (without the program name), writing to
// stdout and stderr, and returns the error to exit with (see ExitCode). The
// error has already been printed, once, to stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	failed, err := root.ExecuteContextC(ctx)
	if err == nil {
		return nil
	}
	if !typed(err) {
		// Only cobra's own errors (an unknown command, a missing
		// argument) arrive untyped: every subcommand types its errors.
		err = usagef(err)
	}
	msg := err.Error()
	if _, resumable := errors.AsType[*interruptedError](err); !resumable && ExitCode(err) == ExitInterrupted && ctx.Err() != nil {
		msg = "interrupted" // by a signal: "context canceled" says nothing to a user
	}
	// The error on one line, whatever its text, so a script can take it
	// with grep; cobra's "did you mean" on a line of its own.
	msg, suggestions, _ := strings.Cut(msg, "\n\nDid you mean this?\n")
	fmt.Fprintf(stderr, "leaguectl: %s\n", strings.Join(strings.Fields(msg), " "))
	if s := strings.Fields(suggestions); len(s) > 0 {
		fmt.Fprintf(stderr, "Did you mean %s?\n", strings.Join(s, " or "))
	}
	// A mistake in the command line ends with where to read how it goes.
	if _, usage := errors.AsType[*usageError](err); usage && failed != nil {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", failed.CommandPath())
	}
	return signalExit(ctx, err)
}

// rootOptions are the flags every command shares.
type rootOptions struct {
	configFile string
	logLevel   string
	stdout     io.Writer
	stderr     io.Writer
	flagKeys   map[string]string // config flags: flag name → config key
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &rootOptions{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "leaguectl",
		Short: "Run Even/Odd leagues of AI agents under League Protocol v2 (league.v2)",
		Long: `leaguectl runs Even/Odd leagues of AI agents under League Protocol v2:
JSON-RPC 2.0 over HTTP POST /mcp. A whole league runs in one process with
'simulate', or split across processes and machines with serve-manager,
serve-referee and serve-player.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(),
	}
	root.SetVersionTemplate("leaguectl {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&o.configFile, "config", "", "config file (YAML or JSON); see README for the keys")
	pf.StringVar(&o.logLevel, "log-level", "", "log level on stderr: debug, info, warn or error (default: warn for simulate, info for servers)")
	o.flagKeys = addConfigFlags(pf)
	o.flagKeys["log-level"] = "log_level"
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usagef(err) })
	// A misspelled LEAGUECTL_* variable is said, not ignored in silence;
	// before the command's own output, so a failure's lines come last.
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		// LEAGUECTL_BIN is scripts/local-league.sh's, which its leaguectl
		// processes inherit.
		for _, w := range config.UnknownEnv(os.Environ(), adminTokenEnv, refereeTokenEnv, registrationTokenEnv, dashboardTokenEnv, "LEAGUECTL_BIN") {
			fmt.Fprintf(stderr, "leaguectl: warning: %s\n", w)
		}
		return o.configDefaults(c)
	}
	root.AddCommand(newSimulateCmd(o), newServeManagerCmd(o), newServeRefereeCmd(o), newServePlayerCmd(o),
		newStartCmd(o), newQueryCmd(o), newPingCmd(o), newExportCmd(o), newCheckCmd(o), newMCPCmd(o))
	root.AddCommand(newWatchCmd(o), newLeaguesCmd(o))
	root.AddCommand(newVersionCmd(o))
	completeFlagValues(root)
	return root
}

// loadConfig reads defaults, the config file, LEAGUECTL_* and the config
// flags of c.
func (o *rootOptions) loadConfig(c *cobra.Command) (config.Config, error) {
	return config.Load(config.LoadOptions{File: o.configFile, Flags: c.Flags(), FlagKeys: withFormatFlags(o.flagKeys, c.Flags())})
}

// configDefaults fills, before cobra checks required flags, what the
// config file and LEAGUECTL_* give of the flags not set: --log-level,
// --manager, and the --db of the commands that open a league's database
// (not simulate's, whose --db is a choice to keep a run).
func (o *rootOptions) configDefaults(c *cobra.Command) error {
	mf := c.Flags().Lookup("manager")
	needManager := mf != nil && !mf.Changed
	df := c.Flags().Lookup("db")
	needDB := df != nil && !df.Changed && c.Name() != "simulate"
	if !needManager && !needDB && c.Flags().Changed("log-level") {
		return nil
	}
	cfg, err := o.loadConfig(c)
	if err != nil {
		if needManager || needDB {
			return err
		}
		// A command that reads the config says what is wrong with it;
		// one that does not (version) needs none of it.
		return nil
	}
	if o.logLevel == "" {
		o.logLevel = cfg.LogLevel
	}
	if needDB && cfg.DB != "" {
		if err := c.Flags().Set("db", cfg.DB); err != nil {
			return err
		}
	}
	if needManager && cfg.Manager != "" {
		return c.Flags().Set("manager", cfg.Manager) // as given: what cobra's required check reads
	}
	return nil
}

// typed reports whether err already says what exit code it deserves.
func typed(err error) bool {
	if _, ok := errors.AsType[*usageError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*exitError](err); ok {
		return true
	}
	if _, ok := errors.AsType[*config.Error](err); ok {
		return true
	}
	return protocol.CodeOf(err) != "" || errors.Is(err, context.Canceled)
}

// runtimeErr types an error that happened while running (exit 4), unless
// it says more about itself already.
func runtimeErr(err error) error {
	if err == nil || typed(err) {
		return err
	}
	return &exitError{code: ExitRuntime, err: err}
}
