package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

type pingOptions struct {
	*rootOptions
	output string
}

func newPingCmd(ro *rootOptions) *cobra.Command {
	o := &pingOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "ping [URL]",
		Short: "Send one JSON-RPC ping to an agent and print the round-trip time",
		Long: `Send one JSON-RPC 'ping' (implementation-guide §5.12.2) to an agent's /mcp
endpoint and print the round-trip time. Exit 2 when nothing answers.
Without a URL it pings the league manager of LEAGUECTL_MANAGER or the
manager config key.`,
		Example: `  leaguectl ping http://127.0.0.1:8101/mcp`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := ro.loadConfig(c)
			if err != nil {
				return err
			}
			url := cfg.Manager
			if len(args) == 1 {
				url = args[0]
			}
			if url == "" {
				return usagef(errors.New("ping needs the URL of an agent (or LEAGUECTL_MANAGER, or the manager config key)"))
			}
			return runtimeErr(runPing(c.Context(), o, url, cfg))
		},
	}
	c.Flags().StringVarP(&o.output, "output", "o", "table", "table or json")
	return c
}

// notAnAgent is err, said to be from a server that is not a league agent
// when what answered is HTTP but no JSON-RPC agent: not JSON-RPC, a
// page-not-found, or a JSON-RPC server that does not know ping.
func notAnAgent(url string, err error) error {
	e, ok := errors.AsType[*transport.Error](err)
	if !ok {
		return err
	}
	switch {
	case e.Kind == transport.KindBadResponse,
		e.Kind == transport.KindStatus && e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests,
		e.Kind == transport.KindRemote && e.RPC != nil && e.RPC.Code == protocol.CodeMethodNotFound:
		return fmt.Errorf("%s answers, but is not a league agent (an agent's JSON-RPC endpoint is its /mcp): %w", url, err)
	}
	return err
}

func runPing(ctx context.Context, o *pingOptions, url string, cfg config.Config) error {
	if err := checkURL("URL", url); err != nil {
		return err
	}
	if o.output != "table" && o.output != "json" {
		return usagef(fmt.Errorf("--output must be table or json, got %q", o.output))
	}
	var reply jsontext.Value
	start := time.Now()
	err := newHTTPCaller(cfg).Call(ctx, url, protocol.MethodPing, nil, &reply)
	rtt := time.Since(start)
	if err != nil {
		return notAnAgent(url, err)
	}
	if o.output == "json" {
		return writeJSON(o.stdout, map[string]any{"endpoint": url, "rtt_ms": float64(rtt.Microseconds()) / 1000, "reply": reply})
	}
	_, err = fmt.Fprintf(o.stdout, "%s: reply in %s: %s\n", url, rtt.Round(10*time.Microsecond), reply)
	return err
}
