// Command leaguectl runs Even/Odd leagues of AI agents under League
// Protocol v2 (league.v2).
package main

import (
	"context"
	"os"

	"github.com/leaguectl/leaguectl/cmd"
)

func main() {
	ctx, stop := cmd.WithSignals(context.Background())
	err := cmd.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(cmd.ExitCode(err))
}
