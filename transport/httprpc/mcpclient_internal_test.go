package httprpc

import (
	"testing"

	"github.com/matryer/is"
)

func TestNeedsMCP(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"go sdk, accept", 400, "Accept must contain both 'application/json' and 'text/event-stream'\n", true},
		{"typescript sdk, accept", 406, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Not Acceptable: Client must accept both application/json and text/event-stream"},"id":null}`, true},
		{"python sdk, accept", 406, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Acceptable: Client must accept both application/json and text/event-stream"}}`, true},
		{"typescript sdk, no session", 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"},"id":null}`, true},
		{"typescript sdk, not initialized", 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`, true},
		{"python sdk, no session", 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`, true},
		{"no id at all", 400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`, true},
		{"python manager, no session", 400, "Bad Request: No valid session ID provided", true},
		{"csharp sdk, no session", 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: A new session can only be created by an initialize request."},"id":null}`, true},
		{"league error answering the request", 400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"session id: Accept text/event-stream"},"id":7}`, false},
		{"league error with a code", 400, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Bad Request: Missing session ID","data":{"error_code":"E012"}},"id":null}`, false},
		{"another status", 404, "Accept must contain both 'application/json' and 'text/event-stream'", false},
		{"a 500", 500, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Not Acceptable: Client must accept both application/json and text/event-stream"},"id":null}`, false},
		{"a plain 400", 400, "Bad Request", false},
		{"invalid request", 400, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}`, false},
		{"empty", 400, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(needsMCP(c.status, []byte(c.body)), c.want)
		})
	}
}
