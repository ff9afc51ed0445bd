package cmd

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"
)

// TestLogLinesHaveUniqueKeys: every line every agent logs at debug level,
// through a league with misbehaving players and two referees, is one JSON
// object whose names are each given once (a reader keeps either value of
// a name given twice, or refuses the line; encoding/json/v2 refuses it).
func TestLogLinesHaveUniqueKeys(t *testing.T) {
	is := is.New(t)
	var stdout, stderr bytes.Buffer
	err := Run(t.Context(), []string{"simulate", "--players", "6", "--referees", "2", "--seed", "3",
		"--log-level", "debug", "--output", "json", "--fault", "P02=invalid", "--fault", "P03=decline"}, &stdout, &stderr)
	is.NoErr(err)
	lines := 0
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var fields map[string]any
		if err := json.Unmarshal(sc.Bytes(), &fields); err != nil {
			t.Errorf("%v in the log line %s", err, sc.Bytes())
		}
		lines++
	}
	is.True(lines > 100) // debug logs every call
}
