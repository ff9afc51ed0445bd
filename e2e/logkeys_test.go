package e2e

import (
	"bufio"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"
)

// TestServersLogUniqueKeys: every line that serve-manager, serve-referee
// and serve-player log at debug level through a whole league, their
// shutdown included, is a JSON object whose names are each given once
// (encoding/json/v2 refuses a name given twice).
func TestServersLogUniqueKeys(t *testing.T) {
	is := is.New(t)
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--seed", "4", "--log-level", "debug")
	servers := []*server{mgr, startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint,
		"--id", "REF01", "--seed", "4", "--log-level", "debug")}
	for _, id := range []string{"P01", "P02", "P03"} {
		servers = append(servers, startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint,
			"--id", id, "--seed", "4", "--log-level", "debug"))
	}
	_, errs, code := runCLI(t, "start", "--manager", mgr.endpoint, "--min-players", "3", "--wait", "--output", "json")
	if code != 0 {
		t.Fatalf("start --wait exited %d: %s", code, errs)
	}
	// Players first, the manager last, as an organiser stops a league; each
	// has written its last line once it has exited.
	for i := len(servers) - 1; i >= 0; i-- {
		s := servers[i]
		s.stop(t)
		s.killed = true // stopped: startServer's cleanup has nothing left to do
		debug := 0
		sc := bufio.NewScanner(strings.NewReader(s.stderr.String()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var fields map[string]any
			if err := json.Unmarshal(sc.Bytes(), &fields); err != nil {
				t.Errorf("%s: %v in the log line %s", s.name, err, sc.Bytes())
			}
			if fields["level"] == "DEBUG" {
				debug++
			}
		}
		is.True(debug >= 4) // every agent logs each league message it serves at debug
	}
}
