package cmd

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// TestStandingsTablePlurals: one round, one match and one point are
// singular.
func TestStandingsTablePlurals(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	err := Run(context.Background(), []string{"simulate", "--players", "2", "--seed", "1"}, &out, io.Discard)
	is.NoErr(err)
	is.True(strings.HasPrefix(out.String(), "League league_2025_even_odd: 2 players, 1 round, 1 match (seed 1)\n")) // singular
}

// TestStandingsTableChampion: the champion's name is shown only when it
// says more than the id.
func TestStandingsTableChampion(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{
		{"Player 01", "Champion: P01 (Player 01) with 7 points\n"},
		{"P01", "Champion: P01 with 7 points\n"},
		{"", "Champion: P01 with 7 points\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			res := &simulateResult{}
			res.Champion = &protocol.Champion{PlayerID: "P01", DisplayName: c.name, Points: 7}
			var out bytes.Buffer
			is.NoErr(writeStandingsTable(&out, res, nil, false))
			is.True(strings.HasSuffix(out.String(), "\n"+c.want)) // the champion line
		})
	}
}

// TestQueryTableFromThePlayersSide: player-stats shows each match from
// the asked player's side, and an empty schedule says why it is empty.
func TestQueryTableFromThePlayersSide(t *testing.T) {
	for _, c := range []struct {
		name, qt, data string
		want           []string
	}{
		{"player-stats", protocol.QueryPlayerStats, `{"player":{"rank":1,"player_id":"P02","display_name":"P02","points":4},"matches":[
			{"match_id":"R1M1","round_id":1,"player_A_id":"P01","player_B_id":"P02","status":"COMPLETED","winner":"P02","result":"LOSS-WIN"},
			{"match_id":"R2M1","round_id":2,"player_A_id":"P02","player_B_id":"P03","status":"COMPLETED","result":"DRAW-DRAW"},
			{"match_id":"R3M2","round_id":3,"player_A_id":"P02","player_B_id":"P04","status":"COMPLETED","winner":"P04","result":"TECHNICAL_LOSS-WIN"},
			{"match_id":"R4M1","round_id":4,"player_A_id":"P05","player_B_id":"P02","status":"PENDING"}]}`,
			[]string{"ROUND  MATCH  ROLE  STATUS     RESULT", "1      R1M1   B     COMPLETED  W vs P01", "2      R2M1   A     COMPLETED  D vs P03",
				"3      R3M2   A     COMPLETED  TL vs P04", "4      R4M1   B     PENDING    - vs P05"}},
		{"schedule before the start", protocol.QuerySchedule, `{"rounds":[],"state":"REGISTRATION"}`,
			[]string{"The league has not started: no schedule yet."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			var out bytes.Buffer
			is.NoErr(writeQueryTable(&out, c.qt, jsontext.Value(c.data)))
			for _, w := range c.want {
				is.True(strings.Contains(out.String(), w+"\n")) // a line of the table
			}
		})
	}
}

// TestPingNotAnAgent: a server that answers HTTP, but not as a league
// agent, is said to be no agent.
func TestPingNotAnAgent(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
	}{
		{"a web page", http.StatusOK, "<html>hello</html>"},
		{"not found", http.StatusNotFound, "404 page not found"},
		{"JSON, not JSON-RPC", http.StatusOK, `{"ok":true}`},
		{"no ping", http.StatusOK, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			err := Run(context.Background(), []string{"ping", srv.URL + "/mcp"}, io.Discard, io.Discard)
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), "is not a league agent")) // says so
		})
	}
}
