package httprpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// ClientConfig holds the limits of a client. Zero fields take the defaults.
type ClientConfig struct {
	// MaxResponseBytes bounds a response body (default 8 MiB).
	MaxResponseBytes int64
	// MaxIdleConnsPerHost is how many idle connections are kept per peer
	// (default 64: a referee's concurrent matches reuse them).
	MaxIdleConnsPerHost int
	// MaxIdleConns is how many idle connections are kept in all (default
	// DefaultMaxIdleConns()). Each agent of a league is a peer of its own,
	// so this is what bounds the league a client can call without dialing
	// again: a manager keeps one to each player, and a bound below the
	// number of players closes and dials connections all through the
	// league.
	MaxIdleConns int
	// DialTimeout bounds connecting (default 5s; the call's deadline also
	// applies).
	DialTimeout time.Duration
	// Version is our version in the clientInfo of the MCP sessions we
	// open with agents that speak only MCP (default "dev").
	Version string
}

// idleConnTimeout is how long an idle connection is kept: less than a
// server's idle timeout (DefaultIdleTimeout), so that the client, not the
// server, ends a connection that idles, and never sends a request on one
// the server is closing.
const idleConnTimeout = 90 * time.Second

// Defaults of ClientConfig.
const (
	DefaultMaxResponseBytes    = 8 << 20
	DefaultMaxIdleConnsPerHost = 64
	DefaultDialTimeout         = 5 * time.Second
)

// DefaultMaxIdleConns is the idle connections a client keeps by default:
// 4,096, one for each agent of a league of thousands, or a quarter of the
// files the process may open when that is less (an idle connection is a
// file, and in a league of one process its server's end is another), but
// never fewer than 256.
func DefaultMaxIdleConns() int { return idleConnsFor(openFiles()) }

func idleConnsFor(files uint64) int {
	if files == 0 {
		return 4096
	}
	return int(max(256, min(4096, files/4)))
}

// Client is the HTTP transport.RoundTripper: one POST per exchange on an
// http.Client of its own, whose connections are kept alive. An endpoint
// that answers that it speaks only MCP gets its calls as MCP tools/call
// over a session (mcpclient.go), from that exchange on.
type Client struct {
	hc    *http.Client
	limit int64
	ids   atomic.Uint64
	sent  atomic.Uint64
	mcp   *mcpClient
}

// NewClient returns a Client with its own connection pool.
func NewClient(cfg ClientConfig) *Client {
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxIdleConnsPerHost <= 0 {
		cfg.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	if cfg.MaxIdleConns <= 0 {
		cfg.MaxIdleConns = DefaultMaxIdleConns()
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	dialer := &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}
	// No proxy from the environment: agents talk to each other directly,
	// and a variable set for something else must not send a league's
	// tokens through a third party.
	tr := &http.Transport{
		DialContext:           dialer.DialContext,
		MaxIdleConns:          cfg.MaxIdleConns,
		MaxIdleConnsPerHost:   cfg.MaxIdleConnsPerHost,
		IdleConnTimeout:       idleConnTimeout,
		TLSHandshakeTimeout:   cfg.DialTimeout,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
	c := &Client{
		hc: &http.Client{
			Transport: tr,
			// A league endpoint does not redirect; following one could
			// send a token elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		limit: cfg.MaxResponseBytes,
	}
	c.mcp = newMCPClient(tr, cfg.MaxResponseBytes, cfg.Version, &c.sent)
	return c
}

// CloseIdleConnections drops kept-alive connections, and ends the MCP
// sessions no call is using (the next call to their endpoint opens
// another).
func (c *Client) CloseIdleConnections() {
	c.mcp.close(false)
	c.hc.CloseIdleConnections()
}

// Close ends every MCP session, waiting for the calls still on them, and
// drops kept-alive connections. The Client stays usable.
func (c *Client) Close() error {
	c.mcp.close(true)
	c.hc.CloseIdleConnections()
	return nil
}

// BytesSent is how many bytes of request bodies the client has sent.
func (c *Client) BytesSent() uint64 { return c.sent.Load() }

// RoundTrip implements transport.RoundTripper: the calls go as one POST,
// one request object for one call and a batch for several. A non-2xx
// answer whose body is a JSON-RPC response is read as a 2xx one (some
// implementations answer errors with 4xx/5xx statuses); without one, the
// status is the error. An answer that says the endpoint speaks only MCP
// (needsMCP) sends the same calls again over an MCP session, and every
// later exchange with that endpoint goes so.
func (c *Client) RoundTrip(ctx context.Context, endpoint string, calls ...*transport.Call) error {
	if len(calls) == 0 {
		return nil
	}
	if p := c.mcp.peer(endpoint); p != nil {
		return c.mcp.roundTrip(ctx, p, calls)
	}
	n := uint64(len(calls))
	firstID := c.ids.Add(n) - n + 1
	body, ok := transport.EncodeCalls(calls, firstID)
	if !ok {
		return nil // every call has its Err
	}
	status, data, err := c.post(ctx, endpoint, body)
	if err != nil {
		return err
	}
	if status/100 != 2 && needsMCP(status, data) {
		return c.mcp.roundTrip(ctx, c.mcp.learn(endpoint), calls)
	}
	if status/100 != 2 && !isRPCResponse(data) {
		return statusError(endpoint, status, data)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return &transport.Error{Kind: transport.KindBadResponse, Endpoint: endpoint,
			Err: fmt.Errorf("empty reply (HTTP %d) to a call", status)}
	}
	return transport.DecodeReplies(data, calls, firstID, endpoint)
}

// Post POSTs an encoded JSON-RPC body to endpoint and returns the reply
// body as it came: empty for notifications only, and a JSON-RPC error
// body whatever its status. It is plain JSON-RPC always, even to an
// endpoint that speaks only MCP: its bytes are what the caller chose.
func (c *Client) Post(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	status, data, err := c.post(ctx, endpoint, body)
	if err != nil {
		return nil, err
	}
	if status/100 != 2 && !isRPCResponse(data) {
		return nil, statusError(endpoint, status, data)
	}
	return data, nil
}

// post sends body and reads the answer, within the response limit.
func (c *Client) post(ctx context.Context, endpoint string, body []byte) (status int, data []byte, err error) {
	if err := checkEndpoint(endpoint); err != nil {
		return 0, nil, &transport.Error{Kind: transport.KindBadEndpoint, Endpoint: endpoint, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, nil, &transport.Error{Kind: transport.KindBadEndpoint, Endpoint: endpoint, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	c.sent.Add(uint64(len(body)))
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, classify(ctx, endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 {
		// 101 Switching Protocols hands over the connection itself as the
		// body, which the request's context no longer governs: a peer
		// could hold the call past its deadline by sending nothing.
		return 0, nil, &transport.Error{Kind: transport.KindBadResponse, Endpoint: endpoint,
			Err: fmt.Errorf("HTTP %d instead of an answer", resp.StatusCode)}
	}
	// No read of the body outlives the call, whatever the body is.
	stop := context.AfterFunc(ctx, func() { _ = resp.Body.Close() })
	defer stop()
	data, err = io.ReadAll(io.LimitReader(resp.Body, c.limit+1))
	if err != nil {
		return 0, nil, classify(ctx, endpoint, err)
	}
	if int64(len(data)) > c.limit {
		return 0, nil, &transport.Error{Kind: transport.KindBadResponse, Endpoint: endpoint,
			Err: fmt.Errorf("response larger than %d bytes", c.limit)}
	}
	return resp.StatusCode, data, nil
}

// checkEndpoint refuses an endpoint that no request could reach, before
// net/http says so in words of its own.
func checkEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http:// or https:// URL")
	}
	return nil
}

// classify turns a failed exchange into an *transport.Error: a timeout
// when the call's deadline passed, E018 when the host name does not
// resolve (an endpoint that cannot exist, and will not by trying again),
// and unreachable otherwise. The caller giving up is not the peer's
// failure: its context's error is returned as it is.
func classify(ctx context.Context, endpoint string, err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	if dns, ok := errors.AsType[*net.DNSError](err); ok && dns.IsNotFound {
		return &transport.Error{Kind: transport.KindBadEndpoint, Endpoint: endpoint, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &transport.Error{Kind: transport.KindTimeout, Endpoint: endpoint, Err: err}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &transport.Error{Kind: transport.KindTimeout, Endpoint: endpoint, Err: ctx.Err()}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &transport.Error{Kind: transport.KindUnreachable, Endpoint: endpoint, Err: err}
}

// statusError is the error of a non-2xx answer without a JSON-RPC body:
// unreachable for the statuses of a proxy or a server that cannot serve
// now, the bare status otherwise.
func statusError(endpoint string, status int, data []byte) error {
	kind := transport.KindStatus
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		kind = transport.KindUnreachable
	}
	return &transport.Error{Kind: kind, Endpoint: endpoint, Status: status, Err: errors.New(snippet(data))}
}

func isRPCResponse(data []byte) bool {
	var probe struct {
		JSONRPC jsontext.Value `json:"jsonrpc"`
		Result  jsontext.Value `json:"result"`
		Error   jsontext.Value `json:"error"`
	}
	if json.Unmarshal(data, &probe, jsontext.AllowDuplicateNames(true)) != nil {
		return false
	}
	return probe.JSONRPC != nil && (probe.Result != nil || probe.Error != nil)
}

func snippet(b []byte) string {
	return protocol.Clip(strings.TrimSpace(string(bytes.ToValidUTF8(b, []byte("?")))))
}

// Network serves listeners on free ports of one host and calls them over
// HTTP; it is what `simulate --transport http` runs on.
type Network struct {
	client *Client
	cfg    ServerConfig
	host   string
	logger *slog.Logger
}

// NewNetwork returns a Network that binds host (127.0.0.1 when empty) on
// free ports and calls through client (a new one when nil).
func NewNetwork(host string, cfg ServerConfig, client *Client, logger *slog.Logger) *Network {
	if host == "" {
		host = "127.0.0.1"
	}
	if client == nil {
		client = NewClient(ClientConfig{})
	}
	return &Network{client: client, cfg: cfg, host: host, logger: logger}
}

// Listen implements transport.Network: a new server on a free port.
func (n *Network) Listen(_ string, h transport.Handler) (transport.Listener, error) {
	return Serve(net.JoinHostPort(n.host, "0"), h, n.cfg, n.logger)
}

// RoundTrip implements transport.RoundTripper with the Network's client.
func (n *Network) RoundTrip(ctx context.Context, endpoint string, calls ...*transport.Call) error {
	return n.client.RoundTrip(ctx, endpoint, calls...)
}

// Post is the Network's client's Post.
func (n *Network) Post(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	return n.client.Post(ctx, endpoint, body)
}
