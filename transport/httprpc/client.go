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
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/internal/bufpool"
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
}

// idleConnTimeout is how long an idle connection is kept.
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

// Client is the HTTP RoundTripper: one POST per call, kept-alive
// connections, and no http.DefaultClient. Calls to http:// endpoints are
// its own HTTP/1.1 exchanges on its own pool (conn.go); https:// goes
// through net/http.
type Client struct {
	hc     *http.Client
	limit  int64
	dialer net.Dialer
	pool   pool
	// replies keeps the buffers of replies given back (RecycleReply),
	// for the next responses of announced length to be read into.
	replies bufpool.Pool
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
	c := &Client{
		replies: bufpool.Pool{Max: maxKeptReply},
		limit:   cfg.MaxResponseBytes,
		dialer:  net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second},
		pool: pool{
			idle: map[string][]*pconn{}, targets: map[string]*target{}, inOrder: map[string]bool{},
			perHost: cfg.MaxIdleConnsPerHost, maxTotal: cfg.MaxIdleConns,
			idleTimeout: idleConnTimeout,
		},
	}
	tr := &http.Transport{
		Proxy:                 nil, // agents talk directly; a proxy env var must not reroute a league
		DialContext:           c.dialer.DialContext,
		MaxIdleConns:          cfg.MaxIdleConns,
		MaxIdleConnsPerHost:   cfg.MaxIdleConnsPerHost,
		IdleConnTimeout:       idleConnTimeout,
		TLSHandshakeTimeout:   cfg.DialTimeout,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
		// A standings broadcast (5-10 KB with 64 players) goes out in one
		// write with its headers, not in 4 KiB pieces.
		WriteBufferSize: 32 << 10,
	}
	c.hc = &http.Client{
		Transport: tr,
		// A league endpoint does not redirect; following one could send
		// a token elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// CloseIdleConnections drops kept-alive connections.
func (c *Client) CloseIdleConnections() {
	c.pool.closeIdle()
	c.hc.CloseIdleConnections()
}

// RoundTrip POSTs body to endpoint. A 2xx body is returned as it is; a
// non-2xx body is returned too when it is a JSON-RPC response (some
// implementations answer errors with 4xx/5xx statuses), else the status is
// the error.
func (c *Client) RoundTrip(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	t, ok, err := c.pool.target(endpoint)
	if err != nil {
		return nil, &transport.Error{Kind: transport.KindBadEndpoint, Endpoint: endpoint, Err: err}
	}
	if ok && fastPath {
		status, data, err := c.fast(ctx, endpoint, t, body)
		if err != nil {
			return nil, err
		}
		return c.answer(endpoint, status, data)
	}
	return c.slow(ctx, endpoint, body)
}

// BatchesInOrder implements transport.InOrderPeers: the last connection
// dialed to endpoint's address had a first response saying so
// (BatchHeader). Only http:// endpoints, on the client's own exchanges,
// are asked; through net/http (https://) nothing is sent as a batch.
func (c *Client) BatchesInOrder(endpoint string) bool {
	return fastPath && c.pool.batchesInOrder(endpoint)
}

// ReturnsBody implements transport.BodyLender: the client's own exchanges
// (http:// endpoints) have written a request's body when RoundTrip returns
// and keep nothing of it.
func (c *Client) ReturnsBody(endpoint string) bool {
	_, ok, _ := c.pool.target(endpoint)
	return ok && fastPath
}

// RecycleReply implements transport.ReplyRecycler: a reply given back is
// the buffer a later response is read into.
func (c *Client) RecycleReply(_ string, reply []byte) { c.replies.Put(reply) }

// maxKeptReply is the largest reply buffer the client keeps: a match's
// replies are under 1 KiB, a round end's batch's under 4 KiB.
const maxKeptReply = 16 << 10

// slow is the exchange through net/http.
func (c *Client) slow(ctx context.Context, endpoint string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &transport.Error{Kind: transport.KindBadEndpoint, Endpoint: endpoint, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, classifyDial(endpoint, err)
	}
	defer resp.Body.Close()
	data, err := readBody(io.LimitReader(resp.Body, c.limit+1), resp.ContentLength, c.limit)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.limit {
		return nil, &transport.Error{Kind: transport.KindBadResponse, Endpoint: endpoint,
			Err: fmt.Errorf("response larger than %d bytes", c.limit)}
	}
	return c.answer(endpoint, resp.StatusCode, data)
}

// answer is the outcome of a response with status and body data.
func (c *Client) answer(endpoint string, status int, data []byte) ([]byte, error) {
	if status/100 == 2 {
		return data, nil
	}
	if isRPCResponse(data) {
		return data, nil
	}
	kind := transport.KindStatus
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		kind = transport.KindUnreachable
	}
	return nil, &transport.Error{Kind: kind, Endpoint: endpoint, Status: status,
		Err: errors.New(snippet(data))}
}

// classifyDial separates an endpoint that cannot exist (the host name does
// not resolve) from one where nobody answers (refused, reset).
func classifyDial(endpoint string, err error) error {
	if dns, ok := errors.AsType[*net.DNSError](err); ok && dns.IsNotFound {
		return &transport.Error{Kind: transport.KindBadEndpoint, Endpoint: endpoint, Err: err}
	}
	return err
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

// Network serves listeners on loopback ports and calls them over HTTP; it
// is what `simulate --transport http` runs on.
type Network struct {
	*Client
	cfg    ServerConfig
	host   string
	logger *slog.Logger
}

// NewNetwork returns a Network that binds host (127.0.0.1 when empty) on
// free ports.
func NewNetwork(host string, cfg ServerConfig, client *Client, logger *slog.Logger) *Network {
	if host == "" {
		host = "127.0.0.1"
	}
	if client == nil {
		client = NewClient(ClientConfig{})
	}
	return &Network{Client: client, cfg: cfg, host: host, logger: logger}
}

// Listen implements transport.Network: a new server on a free port.
func (n *Network) Listen(_ string, srv transport.MessageServer) (transport.Listener, error) {
	return Serve(net.JoinHostPort(n.host, "0"), srv, n.cfg, n.logger)
}
