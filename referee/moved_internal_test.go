package referee

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// TestMovedManager: where a report goes when the manager's endpoint fails
// it, for each failure and each endpoint a START_MATCH may have named.
func TestMovedManager(t *testing.T) {
	is := is.New(t)
	down := &transport.Error{Kind: transport.KindUnreachable}
	for _, c := range []struct {
		to, announced string
		err           error
		want          string
	}{
		{"http://10.0.0.5:8000/mcp", "http://10.0.0.6:8000/mcp", down, "http://10.0.0.6:8000/mcp"},
		{"http://10.0.0.5:8000/mcp", "http://10.0.0.6:8000/mcp", &transport.Error{Kind: transport.KindTimeout}, "http://10.0.0.6:8000/mcp"},
		{"http://10.0.0.5:8000/mcp", "http://10.0.0.6:8000/mcp", &transport.Error{Kind: transport.KindOpen}, "http://10.0.0.6:8000/mcp"},
		{"http://gone.invalid:8000/mcp", "http://10.0.0.6:8000/mcp", &transport.Error{Kind: transport.KindBadEndpoint}, "http://10.0.0.6:8000/mcp"},
		{"http://127.0.0.1:8000/mcp", "http://127.0.0.1:8001/mcp", down, "http://127.0.0.1:8001/mcp"}, // both on this host
		{"http://localhost:8000/mcp", "http://[::1]:8001/mcp", down, "http://[::1]:8001/mcp"},
		{"mem://manager", "mem://manager-2", down, "mem://manager-2"},
		// Not where a manager that answered is, nor anywhere when it failed otherwise.
		{"http://10.0.0.5:8000/mcp", "http://10.0.0.6:8000/mcp", &transport.Error{Kind: transport.KindRemote, RPC: protocol.NewRPCError(-32001, "no")}, ""},
		{"http://10.0.0.5:8000/mcp", "http://10.0.0.6:8000/mcp", &transport.Error{Kind: transport.KindStatus, Status: 404}, ""},
		{"http://10.0.0.5:8000/mcp", "http://10.0.0.6:8000/mcp", &transport.Error{Kind: transport.KindBadResponse}, ""},
		{"http://10.0.0.5:8000/mcp", "http://10.0.0.6:8000/mcp", errors.New("not a call's failure"), ""},
		// Nowhere else to go.
		{"http://10.0.0.5:8000/mcp", "http://10.0.0.5:8000/mcp", down, ""},
		{"http://10.0.0.5:8000/mcp", "", down, ""},
		// A manager on another host naming loopback names this host's server.
		{"http://10.0.0.5:8000/mcp", "http://127.0.0.1:8000/mcp", down, ""},
		{"http://league.example:8000/mcp", "http://localhost:8000/mcp", down, ""},
		{"http://10.0.0.5:8000/mcp", "http://[::1]:8000/mcp", down, ""},
		{"mem://manager", "http://127.0.0.1:8000/mcp", down, ""},
	} {
		r := &Referee{announced: c.announced}
		is.Equal(r.movedManager(c.to, c.err), c.want) // c.to, c.announced, c.err
	}
}
