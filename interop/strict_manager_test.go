package interop_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/cmd"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// strictManager answers a registration as the manager of
// testdata/interop/strict-manager.jsonl does: its recorded refusal when
// player_meta.protocol_version does not start with "2.", its recorded
// acceptance otherwise, each with the request's id.
func strictManager(t *testing.T) (endpoint string, firstRequest []byte) {
	t.Helper()
	raw, err := os.ReadFile("../testdata/interop/strict-manager.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	if len(lines) != 4 {
		t.Fatalf("strict-manager.jsonl has %d lines", len(lines))
	}
	refusal, acceptance := resultOf(t, lines[1]), resultOf(t, lines[3])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     jsontext.Value `json:"id"`
			Params struct {
				PlayerMeta struct {
					ProtocolVersion string `json:"protocol_version"`
				} `json:"player_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		result := refusal
		if strings.HasPrefix(req.Params.PlayerMeta.ProtocolVersion, "2.") {
			result = acceptance
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(protocol.AppendResult(nil, []byte(req.ID), result))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", lines[0]
}

func resultOf(t *testing.T, line []byte) jsontext.Value {
	t.Helper()
	var resp struct {
		Result jsontext.Value `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Result
}

// TestStrictManagerAcceptsOurPlayer: our player registers with a manager
// that requires player_meta.protocol_version, as protocol-v2.md's example
// sends it.
func TestStrictManagerAcceptsOurPlayer(t *testing.T) {
	is := is.New(t)
	ep, _ := strictManager(t)
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	t.Cleanup(hc.CloseIdleConnections)
	p := player.New(player.Options{RequestedID: "P01", DisplayName: "Player 01", ManagerEndpoint: ep,
		Endpoint: "http://127.0.0.1:8101/mcp", CallTimeout: 5 * time.Second}, transport.NewClient(hc, 5*time.Second), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	is.NoErr(p.Register(ctx))
	is.Equal(p.ID(), "P01")
}

// TestStrictManagerRefusalSurfaces: the manager's refusal, a LEAGUE_ERROR
// inside MCP content, comes back as its own code, description, text and
// context, verbatim, and is read by its name (its E018 names our E011),
// for the exit code too; not as a registration "rejected: no reason given".
func TestStrictManagerRefusalSurfaces(t *testing.T) {
	is := is.New(t)
	ep, request := strictManager(t)
	var params jsontext.Value
	var req struct {
		Params *jsontext.Value `json:"params"`
	}
	req.Params = &params
	is.NoErr(json.Unmarshal(request, &req))
	hc := httprpc.NewClient(httprpc.ClientConfig{})
	t.Cleanup(hc.CloseIdleConnections)
	var resp protocol.LeagueRegisterResponse
	err := transport.NewClient(hc, 5*time.Second).Call(context.Background(), ep, protocol.MethodRegisterPlayer, params, &resp)
	e, ok := errors.AsType[*transport.Error](err)
	is.True(ok)
	is.Equal(e.Kind, transport.KindRemote) // a refusal, not an answer
	is.Equal(e.RPC.Message, `E018 PROTOCOL_VERSION_MISMATCH: player_meta.protocol_version must start with 2. (context {"received": null, "supported": "2.x"})`)
	is.True(strings.Contains(err.Error(), "[E018, read as E011 PROTOCOL_VERSION_MISMATCH]"))
	is.Equal(protocol.CodeOf(err), protocol.ErrProtocolMismatch)         // by its name
	is.Equal(cmd.ExitCode(err), protocol.ErrProtocolMismatch.ExitCode()) // the exit code of our E011
	is.True(!strings.Contains(err.Error(), "no reason given"))
}
