package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestBehindProxy: a serve-* process refuses an MCP request that came to
// its loopback address with a Host that is not a loopback name (DNS
// rebinding), answering a JSON-RPC error; with --behind-proxy, as a
// reverse proxy on the same host forwards with the public name, it is
// served.
func TestBehindProxy(t *testing.T) {
	is := is.New(t)
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--min-players", "100")
	plain := startServer(t, "player", "serve-player", "--port", "0", "--manager", mgr.endpoint)
	proxied := startServer(t, "proxied player", "serve-player", "--port", "0", "--manager", mgr.endpoint, "--behind-proxy")
	initialize := func(endpoint string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		is.NoErr(err)
		req.Host = "league.example.org"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Transport{DisableKeepAlives: true}).RoundTrip(req)
		is.NoErr(err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		is.NoErr(err)
		return resp.StatusCode, string(b)
	}
	status, body := initialize(plain.endpoint)
	is.Equal(status, http.StatusForbidden)
	is.Equal(body, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"MCP: Forbidden: invalid Host header \"league.example.org\""},"id":null}`)
	status, body = initialize(proxied.endpoint)
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(body, `"serverInfo":{"name":"leaguectl","version":"1.0.0"}`))
}
