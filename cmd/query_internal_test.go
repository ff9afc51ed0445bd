package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// TestQueryTableHeaders: the standings say whether their round is over,
// and a next-match with none says why.
func TestQueryTableHeaders(t *testing.T) {
	for _, c := range []struct {
		qt, data, first string
	}{
		{protocol.QueryStandings, `{"round_id":0,"rounds_completed":0,"standings":[]}`, "Standings before the first round"},
		{protocol.QueryStandings, `{"round_id":2,"rounds_completed":1,"standings":[]}`, "Standings during round 2 (1 completed)"},
		{protocol.QueryStandings, `{"round_id":3,"rounds_completed":3,"standings":[]}`, "Standings after round 3"},
		{protocol.QueryStandings, `{"round_id":2,"standings":[]}`, "Standings after round 2"}, // another manager's, which does not say
		{protocol.QueryNextMatch, `{"next_match":null,"state":"REGISTRATION"}`, "The league has not started: no schedule yet."},
		{protocol.QueryNextMatch, `{"next_match":null,"state":"COMPLETED"}`, "No match left to play."},
	} {
		t.Run(c.first, func(t *testing.T) {
			is := is.New(t)
			var out bytes.Buffer
			is.NoErr(writeQueryTable(&out, c.qt, jsontext.Value(c.data)))
			first, _, _ := strings.Cut(out.String(), "\n")
			is.Equal(first, c.first)
		})
	}
}
