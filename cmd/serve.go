package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/dashboard"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// agentMCPVersion is the version our agents' MCP servers give in serverInfo:
// the agents' own.
const agentMCPVersion = player.Version

// shutdownGrace bounds a graceful stop: calls in flight get this long.
const shutdownGrace = 30 * time.Second

// serverFlags are the flags every serve-* command has.
type serverFlags struct {
	host      string
	port      int
	advertise string
	// trustedProxies are --trusted-proxy's, as given; proxies, once
	// validate has read them.
	trustedProxies []string
	proxies        []netip.Prefix
	// behindProxy turns off the MCP door's DNS-rebinding protection, for
	// a reverse proxy on this host that forwards with the public Host.
	behindProxy bool
	// dashboardToken guards the read-only pages (the dashboard, /events,
	// /metrics) of a server other machines can reach; noDashboard serves
	// none of them.
	dashboardToken string
	noDashboard    bool
}

// dashboardTokenEnv names the environment variable of the dashboard
// token, kept out of the process list as the other tokens are.
const dashboardTokenEnv = "LEAGUECTL_DASHBOARD_TOKEN"

func (f *serverFlags) add(c *cobra.Command, defaultPort int) {
	c.Flags().StringVar(&f.host, "host", "127.0.0.1", "address to listen on; anything but loopback is your explicit choice")
	c.Flags().IntVar(&f.port, "port", defaultPort, "port to listen on (0: a free one)")
	c.Flags().StringVar(&f.advertise, "advertise", "", "endpoint URL to give the others (default: http://<host>:<port>/mcp; when --host is 0.0.0.0 or ::, an agent's address that reaches the manager, the manager's first non-loopback address)")
	c.Flags().BoolVar(&f.behindProxy, "behind-proxy", false, "a reverse proxy on this host forwards requests to this server with its public Host name: let them through (turns off the DNS-rebinding protection of /mcp, which refuses an MCP client's or a web page's request to a loopback address that names another host; docs/mcp.md)")
	c.Flags().StringVar(&f.dashboardToken, "dashboard-token", "", "token that the read-only pages (the manager's dashboard at /, /events, /metrics) require, as Authorization: Bearer T or a browser's first /?token=T (or "+dashboardTokenEnv+"); without one they are served on loopback alone, and refused on any other address")
	c.Flags().BoolVar(&f.noDashboard, "no-dashboard", false, "serve none of the read-only pages (the dashboard at /, /events, /metrics), on any address")
	c.Flags().StringSliceVar(&f.trustedProxies, "trusted-proxy", nil, "CIDR or address of a reverse proxy in front of this server: X-Forwarded-For is believed from it alone, and names the client every per-address limit counts; repeat or separate with commas")
}

func (f *serverFlags) validate() error {
	if f.port < 0 || f.port > 65535 {
		return usagef(fmt.Errorf("--port must be between 0 and 65535, got %d", f.port))
	}
	if f.advertise != "" {
		if err := checkURL("--advertise", f.advertise); err != nil {
			return err
		}
	}
	if f.noDashboard && f.dashboardToken != "" {
		return usagef(errors.New("--no-dashboard serves no dashboard, and --dashboard-token guards one: give one of them"))
	}
	f.proxies = f.proxies[:0]
	for _, s := range f.trustedProxies {
		p, err := httprpc.ParseProxy(strings.TrimSpace(s))
		if err != nil {
			return usagef(fmt.Errorf("--trusted-proxy must be a CIDR such as 10.0.0.0/8 or an address such as 10.0.0.7, got %q", s))
		}
		f.proxies = append(f.proxies, p)
	}
	return nil
}

// reachableBeyondLoopback says why a server of f can be called from other
// machines, or "" when it cannot: it listens on an address that is not
// loopback (a host name, on any of its addresses that is not), or it
// takes requests through a reverse proxy. A host name that does not
// resolve says nothing: listening on it fails anyway.
func (f *serverFlags) reachableBeyondLoopback(ctx context.Context) string {
	if len(f.proxies) > 0 {
		return "it takes requests through --trusted-proxy"
	}
	listensOn := "it listens on --host " + f.host
	if strings.EqualFold(f.host, "localhost") {
		return ""
	}
	if ip, err := netip.ParseAddr(f.host); err == nil {
		if ip.Unmap().IsLoopback() {
			return ""
		}
		return listensOn
	}
	if f.host == "" {
		return listensOn + " (every address)"
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", f.host)
	if err != nil {
		return ""
	}
	for _, ip := range ips {
		if !ip.Unmap().IsLoopback() {
			return listensOn
		}
	}
	return ""
}

// pagesGate is who may read a server's read-only pages, and whether they
// are served at all (--no-dashboard): with a token, its holders; without
// one, anyone on a server only its host can reach, else nobody, with a
// message that says how to let them in. The league is not secret from
// its host's users, but its agents' endpoints and failures are nobody
// else's business.
func (f *serverFlags) pagesGate(ctx context.Context) (dashboard.Gate, bool) {
	if f.noDashboard {
		return dashboard.Gate{}, false
	}
	if token := tokenFrom(f.dashboardToken, dashboardTokenEnv); token != "" {
		return dashboard.Gate{Token: token}, true
	}
	why := f.reachableBeyondLoopback(ctx)
	if why == "" {
		return dashboard.Gate{Open: true, AnyHost: f.behindProxy}, true
	}
	return dashboard.Gate{Refusal: fmt.Sprintf("the dashboard, /events and /metrics are off: other machines can reach this server (%s) "+
		"and it has no dashboard token; give it --dashboard-token T (or %s), or --no-dashboard", why, dashboardTokenEnv)}, true
}

// checkURL refuses an endpoint flag that is not an http(s) URL.
func checkURL(flag, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef(fmt.Errorf("%s must be an http:// or https:// URL such as http://127.0.0.1:8000/mcp, got %q", flag, s))
	}
	return nil
}

// serverLogger is the logger of a serve-* command: info by default.
func (o *rootOptions) serverLogger(name *agentName) (*slog.Logger, error) {
	level := o.logLevel
	if level == "" {
		level = "info"
	}
	l, err := newLogger(o.stderr, level)
	if err != nil {
		return nil, err
	}
	return slog.New(newNamedHandler(l.Handler(), name)), nil
}

// agentServer is what a serve-* command runs: an agent's methods, and what
// it does on its own until ctx ends.
type agentServer struct {
	mux *transport.Mux
	run func(ctx context.Context) error
	// listening, when set, is given the listener once it serves (a player
	// that crashes on purpose closes it).
	listening func(l transport.Listener)
	// trusted, when set, vouches for the requests of the agent's own
	// league, which the rate limit does not hold back.
	trusted func(*transport.Request) (string, bool)
	// pages are the agent's read-only pages by net/http pattern ("GET
	// /metrics"), served behind the gate of --dashboard-token.
	pages map[string]http.Handler
}

// serve binds the address, builds the agent for its endpoint, prints the
// endpoint as the first line of stdout, runs the agent, and on ctx's end
// (SIGINT, SIGTERM) stops gracefully: calls in flight are finished and the
// exit code is 0. An error of the agent's own run ends it with that error.
func serve(ctx context.Context, stdout io.Writer, f *serverFlags, peer string, cfg config.Config,
	logger *slog.Logger, build func(endpoint string, hc *httprpc.Client) (*agentServer, error)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return &exitError{code: ExitNetwork, err: fmt.Errorf("listen on %s:%d: %w", f.host, f.port, err)}
	}
	endpoint := f.advertise
	if endpoint == "" {
		endpoint = advertised(ctx, ln.Addr().(*net.TCPAddr), peer, net.InterfaceAddrs)
		if a := ln.Addr().(*net.TCPAddr); a.IP.IsUnspecified() {
			logger.LogAttrs(ctx, slog.LevelInfo, "listening on every address; advertising one of them (--advertise sets it)",
				slog.String("advertised", endpoint))
		}
	}
	// The agent's calls go through hc; its MCP sessions with agents that
	// speak only MCP are ended (DELETE) once it has stopped.
	hc := httprpc.NewClient(httprpc.ClientConfig{Version: agentMCPVersion})
	defer hc.Close()
	agent, err := build(endpoint, hc)
	if err != nil {
		ln.Close()
		return err
	}
	// A handler may take as long as a parity answer with its retries, or a
	// get_league_result wait; the write timeout must outlast both.
	srvCfg := httprpc.ServerConfig{WriteTimeout: max(httprpc.DefaultWriteTimeout, 2*cfg.Timeouts.Choice+3*cfg.Timeouts.Generic),
		MaxConns:                       cfg.Limits.Connections,
		MaxBodyBytesInFlight:           inFlightOf(cfg.Limits.BodyBytes),
		MaxBodyBytesInFlightPerAddress: inFlightOf(cfg.Limits.BodyBytesPerAddress),
		LimitLoopback:                  !cfg.Limits.ExemptLoopback,
		TrustedProxies:                 f.proxies,
		MCP:                            httprpc.MCPConfig{BehindProxy: f.behindProxy, Version: agentMCPVersion}}
	if gate, on := f.pagesGate(ctx); on && len(agent.pages) > 0 {
		srvCfg.Routes = make(map[string]http.Handler, len(agent.pages))
		for pattern, h := range agent.pages {
			srvCfg.Routes[pattern] = gate.Wrap(h)
		}
		if gate.Refusal != "" {
			logger.LogAttrs(ctx, slog.LevelWarn, gate.Refusal)
		}
	}
	agent.mux.SetRateLimit(rateLimitOf(cfg, agent.trusted))
	l := httprpc.ServeOn(ln, agent.mux, srvCfg, logger)
	if agent.listening != nil {
		agent.listening(l)
	}
	if _, err := fmt.Fprintln(stdout, endpoint); err != nil {
		_ = l.Close()
		return runtimeErr(err)
	}
	attrs := []slog.Attr{slog.String("endpoint", endpoint)}
	if len(f.proxies) > 0 {
		attrs = append(attrs, slog.String("trusted_proxies", strings.Trim(fmt.Sprint(f.proxies), "[]")))
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "listening", attrs...)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	finished := make(chan error, 1)
	go func() { finished <- agent.run(runCtx) }()
	var runErr error
	returned := false
	select {
	case <-ctx.Done():
	case runErr = <-finished:
		returned = true
		if runErr != nil && !errors.Is(runErr, context.Canceled) {
			logger.LogAttrs(ctx, slog.LevelError, "stopped", slog.String("error", runErr.Error()))
		} else {
			runErr = nil
			<-ctx.Done() // the agent is done; it keeps answering until told to stop
		}
	}
	logger.LogAttrs(context.Background(), slog.LevelInfo, "shutting down")
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	if err := l.Shutdown(sctx); err != nil {
		_ = l.Close()
	}
	cancel()
	if !returned {
		<-finished
	}
	return runErr
}

// inFlightOf is a limits.body_bytes* setting as httprpc.ServerConfig
// takes it: there 0 is the default, and a negative number none.
func inFlightOf(n int) int64 {
	if n == 0 {
		return -1
	}
	return int64(n)
}

// advertised is the endpoint to give others for a bound address: the
// address itself, or, for an unspecified one (0.0.0.0, ::), the local
// address that reaches peer (found by a UDP dial, which sends nothing),
// or without a peer (the manager) the first global address of addrs (the
// machine's interfaces); 127.0.0.1 when neither says.
func advertised(ctx context.Context, a *net.TCPAddr, peer string, addrs func() ([]net.Addr, error)) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
		if u, err := url.Parse(peer); err == nil && u.Host != "" {
			port := u.Port()
			if port == "" {
				port = "80"
			}
			var d net.Dialer
			if c, err := d.DialContext(ctx, "udp", net.JoinHostPort(u.Hostname(), port)); err == nil {
				host = c.LocalAddr().(*net.UDPAddr).IP.String()
				c.Close()
			}
		} else if ip := globalAddr(addrs); ip != nil {
			host = ip.String()
		}
	}
	return httprpc.EndpointFor(&net.TCPAddr{IP: net.ParseIP(host), Port: a.Port})
}

// globalAddr is the first global unicast IPv4 address of addrs, else the
// first IPv6 one; nil when there is none (or addrs fails).
func globalAddr(addrs func() ([]net.Addr, error)) net.IP {
	as, err := addrs()
	if err != nil {
		return nil
	}
	var v6 net.IP
	for _, a := range as {
		n, ok := a.(*net.IPNet)
		if !ok || !n.IP.IsGlobalUnicast() {
			continue
		}
		if n.IP.To4() != nil {
			return n.IP
		}
		if v6 == nil {
			v6 = n.IP
		}
	}
	return v6
}
