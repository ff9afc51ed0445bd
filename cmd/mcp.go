package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

type mcpOptions struct {
	*rootOptions
	http        string // --http: the address of Streamable HTTP; "": stdio
	leagueIDSet bool   // --league-id was given: the queries name the league
}

func newMCPCmd(ro *rootOptions) *cobra.Command {
	o := &mcpOptions{rootOptions: ro}
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve leaguectl to an AI assistant over MCP: simulate, standings, schedule, next_match, check",
		Long: `Serve leaguectl's commands as MCP tools, for people who run leagues from an AI
assistant: simulate (a whole league in memory), standings, schedule and
next_match (queries of a league manager) and check (grades an agent).

MCP is spoken over stdin and stdout, as assistants start local servers; logs go
to stderr. With --http it is Streamable HTTP at http://ADDR/mcp instead, whose
endpoint is the first line of stdout. The config (--config, LEAGUECTL_*, the
config flags) is read once, at start, for every tool call.`,
		Example: `  leaguectl mcp
  leaguectl mcp --http 127.0.0.1:8765`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := ro.loadConfig(c)
			if err != nil {
				return err
			}
			o.leagueIDSet = c.Flags().Changed("league-id")
			return runtimeErr(runMCP(c.Context(), o, c.InOrStdin(), cfg))
		},
	}
	c.Flags().StringVar(&o.http, "http", "", "serve Streamable HTTP on this address (host:port; port 0: a free one) instead of stdio")
	return c
}

func runMCP(ctx context.Context, o *mcpOptions, stdin io.Reader, cfg config.Config) error {
	level := o.logLevel
	if level == "" {
		level = "warn"
	}
	// Calls run concurrently, each with loggers of its own on stderr.
	stderr := &lockedWriter{w: o.stderr}
	logger, err := newLogger(stderr, level)
	if err != nil {
		return err
	}
	// The tools get no stdout: over stdio it is the transport's, and one
	// stray line would break the session.
	tools := &mcpTools{ro: &rootOptions{logLevel: o.logLevel, stdout: io.Discard, stderr: stderr},
		cfg: cfg, leagueIDSet: o.leagueIDSet}
	srv := newMCPServer(ctx, tools, logger)
	if o.http != "" {
		return serveMCPHTTP(ctx, o.stdout, o.http, srv, logger)
	}
	return serveMCPStdio(ctx, srv, stdin, o.stdout)
}

// serveMCPStdio serves one session over in and out until the client
// closes in, or ctx ends (SIGINT, SIGTERM): either is a normal end.
func serveMCPStdio(ctx context.Context, srv *mcp.Server, in io.Reader, out io.Writer) error {
	var t mcp.Transport = &mcp.StdioTransport{}
	if in != os.Stdin || out != os.Stdout {
		t = &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	}
	ss, err := srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	// Not Server.Run: it logs an interrupted session as an error. Closing
	// waits for the calls in flight, which ctx's end has cancelled.
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	if err := ss.Wait(); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// The limits of leaguectl mcp --http are a league agent's (httprpc's),
// but for the write timeout: a tool call may play a whole league, or check
// a manager's, before it answers.
const mcpWriteTimeout = 10 * time.Minute

// serveMCPHTTP serves Streamable HTTP on addr, printing its endpoint on
// stdout, until ctx ends; then calls in flight are cancelled, and their
// answers given, within shutdownGrace.
func serveMCPHTTP(ctx context.Context, stdout io.Writer, addr string, srv *mcp.Server, logger *slog.Logger) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return &exitError{code: ExitNetwork, err: fmt.Errorf("--http: listen on %s: %w", addr, err)}
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && (&serverFlags{host: host}).reachableBeyondLoopback(ctx) != "" {
		logger.LogAttrs(ctx, slog.LevelWarn, "reachable beyond loopback, without authentication: whoever reaches it can run leagues and make this host call any URL",
			slog.String("http", addr))
	}
	// The agents' server settings, with the write timeout a whole league
	// takes.
	hs := httprpc.NewServer(addr, mcpHTTPHandler(srv, logger), httprpc.ServerConfig{WriteTimeout: mcpWriteTimeout}, logger)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	endpoint := advertised(ctx, ln.Addr().(*net.TCPAddr), "", net.InterfaceAddrs)
	if _, err := fmt.Fprintln(stdout, endpoint); err != nil {
		_ = hs.Close()
		<-served
		return runtimeErr(err)
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "listening", slog.String("endpoint", endpoint))
	select {
	case err := <-served:
		return &exitError{code: ExitNetwork, err: fmt.Errorf("--http: %w", err)}
	case <-ctx.Done():
	}
	logger.LogAttrs(context.Background(), slog.LevelInfo, "shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: ExitNetwork, err: fmt.Errorf("--http: %w", err)}
	}
	return nil
}

// mcpHTTPHandler serves srv over Streamable HTTP at /mcp, and GET /health.
//
// Stateless: a tool call is one POST and its answer, and the server keeps
// nothing between them, so no session outlives its client and no stream
// outlives the write timeout. Without sessions a client's cancel
// notification reaches no call; its hanging up does (callContext).
func mcpHTTPHandler(srv *mcp.Server, logger *slog.Logger) http.Handler {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              logger,
		MaxRequestBodyBytes: httprpc.DefaultMaxBodyBytes,
	})
	mux := http.NewServeMux()
	// A web page the user visits must not drive it: the SDK already
	// refuses other hosts' names on loopback (DNS rebinding).
	mux.Handle(httprpc.Path, http.NewCrossOriginProtection().Handler(withCallContext(sdk, mcpWriteTimeout)))
	mux.HandleFunc("GET "+httprpc.HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	return mux
}

// callContextKey carries, to the tools, the context of the HTTP request a
// call came in: the SDK runs a call on a context of its own, which the
// client's hanging up does not end.
type callContextKey struct{}

// withCallContext gives h's requests a context that ends when the client
// goes, or when the answer could no longer be written (timeout), and
// hands it to the tools.
func withCallContext(h http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(context.WithValue(ctx, callContextKey{}, ctx)))
	})
}

// mcpVersion is the module's version in the build, as serverInfo gives it.
func mcpVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// lockedWriter serializes writes to w: log lines of calls running at once
// stay whole on a writer that is not a file.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// nopWriteCloser leaves the command's stdout open when the session ends:
// it is not the session's to close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
