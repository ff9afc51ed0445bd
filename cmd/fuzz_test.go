package cmd

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
)

// FuzzAgents throws arbitrary bodies at the handlers of a manager with
// registered agents, a referee and a player. Every answer must be
// JSON-RPC 2.0, no handler may panic, and nothing a stranger sends may
// start the league or count a result. (Registration is open to anyone
// until the league starts, so a well-formed one may register.)
func FuzzAgents(f *testing.F) {
	for _, name := range []string{"dialect-a.jsonl", "dialect-b.jsonl"} {
		b, err := os.ReadFile("../testdata/interop/" + name)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			f.Add(line)
		}
	}
	vectors, err := os.ReadFile("../testdata/jsonrpc/vectors.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(vectors), "\n") {
		if r, ok := strings.CutPrefix(line, "> "); ok {
			f.Add([]byte(r))
		}
	}
	for _, b := range hostileBodies() {
		f.Add(b)
	}

	watch := &panicWatch{}
	logger := slog.New(watch)
	cfg := config.Default()
	caller := transport.NewClient(transport.Schemes{}, time.Second) // the agents cannot reach anyone
	mo := managerOptions(cfg, 1)
	mo.AdminToken = "secret"
	mgr := league.New(mo, caller, logger)
	mgrMux := mgr.Handler()
	for i, body := range []string{
		`{"jsonrpc":"2.0","method":"register_referee","params":{"protocol":"league.v2","sender":"referee:REF01","referee_meta":{"display_name":"R","version":"1","game_types":["even_odd"],"contact_endpoint":"mem://r","max_concurrent_matches":2}},"id":1}`,
		`{"jsonrpc":"2.0","method":"register_player","params":{"protocol":"league.v2","sender":"player:P01","player_meta":{"display_name":"A","version":"1","game_types":["even_odd"],"contact_endpoint":"mem://a"}},"id":2}`,
		`{"jsonrpc":"2.0","method":"register_player","params":{"protocol":"league.v2","sender":"player:P02","player_meta":{"display_name":"B","version":"1","game_types":["even_odd"],"contact_endpoint":"mem://b"}},"id":3}`,
	} {
		if r, _ := protocol.DecodeResponse(transport.ServeJSON(context.Background(), mgrMux, []byte(body), transport.Peer{})); r.Error != nil {
			f.Fatalf("registration %d: %v", i, r.Error)
		}
	}
	before := mgr.Status()
	ref := referee.New(refereeOptions(cfg, 1), caller, logger)
	po := playerOptions(cfg, 1)
	po.RequestedID = "P01"
	muxes := []*transport.Mux{mgrMux, ref.Handler(), player.New(po, caller, logger).Handler()}
	// A stranger: not on the manager's host, so no admin rights either.
	peer := transport.Peer{Network: "http", Addr: "203.0.113.9:4000"}

	f.Fuzz(func(t *testing.T, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for _, m := range muxes {
			reply := transport.ServeJSON(ctx, m, body, peer)
			if reply != nil && !validResponse(reply) {
				t.Fatalf("not JSON-RPC 2.0: %.300s", reply)
			}
		}
		if st := mgr.Status(); st.State != before.State || st.MatchesPlayed != 0 || st.CurrentRound != 0 {
			t.Fatalf("a stranger moved the league: %+v → %+v", before, st)
		}
		watch.mu.Lock()
		defer watch.mu.Unlock()
		if len(watch.panics) > 0 {
			t.Fatalf("a handler panicked on %q", body)
		}
	})
}

func validResponse(reply []byte) bool {
	var rs []jsontext.Value
	if bytes.HasPrefix(reply, []byte("[")) {
		if json.Unmarshal(reply, &rs) != nil {
			return false
		}
	} else {
		rs = []jsontext.Value{reply}
	}
	for _, r := range rs {
		var w struct {
			JSONRPC string         `json:"jsonrpc"`
			Result  jsontext.Value `json:"result"`
			Error   jsontext.Value `json:"error"`
			ID      jsontext.Value `json:"id"`
		}
		if json.Unmarshal(r, &w) != nil || w.JSONRPC != "2.0" || w.ID == nil || (w.Result == nil) == (w.Error == nil) {
			return false
		}
	}
	return true
}
