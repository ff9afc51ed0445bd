package cmd_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// startedLeague serves over loopback HTTP a manager whose league of n
// players (P001…) and a referee has started, and returns its endpoint.
// Nothing is played: its schedule is all PENDING.
func startedLeague(t *testing.T, n int) string {
	t.Helper()
	net := transporttest.HTTP()
	mgr := league.New(league.Options{LeagueID: "league_2025_even_odd"}, net.Client(5*time.Second), slog.New(slog.DiscardHandler))
	ep := net.Serve(t, "league_manager", mgr.Handler())
	c := net.Client(5 * time.Second)
	ctx := t.Context()
	env := func(t protocol.MessageType, sender string) protocol.Envelope {
		return protocol.Envelope{Protocol: protocol.Version, MessageType: t, Sender: sender,
			Timestamp: "2025-01-15T10:30:00Z", ConversationID: "conv-register"}
	}
	ref := &protocol.RefereeRegisterRequest{Envelope: env(protocol.TypeRefereeRegisterRequest, "referee:REF01"),
		RefereeMeta: &protocol.RefereeMeta{DisplayName: "Referee", Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd},
			ContactEndpoint: "http://127.0.0.1:1/referee", MaxConcurrentMatches: 1}}
	if err := c.Call(ctx, ep, protocol.MethodRegisterReferee, ref, nil); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("P%03d", i)
		p := &protocol.LeagueRegisterRequest{Envelope: env(protocol.TypeLeagueRegisterRequest, "player:"+id),
			PlayerMeta: &protocol.PlayerMeta{DisplayName: "Player " + id, Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd},
				ContactEndpoint: "http://127.0.0.1:1/" + id}}
		if err := c.Call(ctx, ep, protocol.MethodRegisterPlayer, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := mgr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ep
}

// scheduleLines are the rows of `query schedule`'s table, split in fields.
func scheduleLines(t *testing.T, out string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if strings.Join(strings.Fields(lines[0]), " ") != "ROUND MATCH PLAYER_A PLAYER_B REFEREE STATUS RESULT" {
		t.Fatalf("header %q", lines[0])
	}
	var rows [][]string
	for _, l := range lines[1:] {
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

// TestQuerySchedule asks a league of 150 players (149 rounds of 75
// matches: 11,175, more than one answer holds) for its schedule: a round,
// a player's matches, and all of it, which the command asks for a part at
// a time and prints whole.
func TestQuerySchedule(t *testing.T) {
	ep := startedLeague(t, 150)

	t.Run("a round", func(t *testing.T) {
		is := is.New(t)
		out, errs, code := run(t, "query", "schedule", "--manager", ep, "--round", "2")
		is.Equal(errs, "")
		is.Equal(code, 0)
		rows := scheduleLines(t, out)
		is.Equal(len(rows), 75) // round 2's matches
		for i, r := range rows {
			is.Equal(r[0], "2")                       // round 2 only
			is.Equal(r[1], fmt.Sprintf("R2M%d", i+1)) // in order
		}
	})
	t.Run("a player's round", func(t *testing.T) {
		is := is.New(t)
		out, _, code := run(t, "query", "schedule", "--manager", ep, "--round", "7", "--player", "P042")
		is.Equal(code, 0)
		rows := scheduleLines(t, out)
		is.Equal(len(rows), 1)
		is.Equal(rows[0][0], "7")
		is.True(rows[0][2] == "P042" || rows[0][3] == "P042")
	})
	t.Run("a player", func(t *testing.T) {
		is := is.New(t)
		out, _, code := run(t, "query", "schedule", "--manager", ep, "--player", "P042")
		is.Equal(code, 0)
		rows := scheduleLines(t, out)
		is.Equal(len(rows), 149) // a match a round
		for i, r := range rows {
			is.Equal(r[0], fmt.Sprint(i+1))
			is.True(r[2] == "P042" || r[3] == "P042")
		}
	})
	t.Run("all of it", func(t *testing.T) {
		is := is.New(t)
		out, errs, code := run(t, "query", "schedule", "--manager", ep)
		is.Equal(errs, "")
		is.Equal(code, 0)
		rows := scheduleLines(t, out)
		is.Equal(len(rows), 150*149/2) // every match
		seen := map[string]bool{}
		for i, r := range rows {
			round := i/75 + 1
			is.Equal(r[0], fmt.Sprint(round)) // round by round
			is.Equal(r[1], fmt.Sprintf("R%dM%d", round, i%75+1))
			is.True(!seen[r[1]]) // once each
			seen[r[1]] = true
			is.Equal(r[5], "PENDING")
		}
	})
	t.Run("all of it as JSON", func(t *testing.T) {
		is := is.New(t)
		out, _, code := run(t, "query", "schedule", "--manager", ep, "--output", "json")
		is.Equal(code, 0)
		var resp struct {
			protocol.Envelope
			QueryType string         `json:"query_type"`
			Success   bool           `json:"success"`
			Data      map[string]any `json:"data"`
		}
		is.NoErr(json.Unmarshal([]byte(out), &resp)) // one answer
		is.Equal(resp.QueryType, protocol.QuerySchedule)
		is.Equal(resp.MessageType, protocol.TypeLeagueQueryResponse)
		is.True(resp.Success)
		_, next := resp.Data["next_round_id"]
		is.True(!next) // nothing left to ask for
		var d league.ScheduleData
		b, err := json.Marshal(resp.Data)
		is.NoErr(err)
		is.NoErr(json.Unmarshal(b, &d))
		is.Equal(len(d.Rounds), 149)
		for i, r := range d.Rounds {
			is.Equal(r.RoundID, i+1)
			is.Equal(len(r.Matches), 75)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			msg  string
		}{
			{[]string{"schedule", "--round", "150"}, "leaguectl: E002 INVALID_MESSAGE_FORMAT: query_params.round_id must be from 1 to 149 (the league's rounds), got 150\n"},
			{[]string{"schedule", "--round", "0"}, "leaguectl: --round must be 1 or more, got 0\nRun 'leaguectl query --help' for usage.\n"},
			{[]string{"standings", "--round", "2"}, "leaguectl: --round goes with query schedule, not standings\nRun 'leaguectl query --help' for usage.\n"},
			{[]string{"schedule", "--player", "P151"}, `leaguectl: E004 AGENT_NOT_REGISTERED: no player "P151" in league league_2025_even_odd` + "\n"},
		} {
			t.Run(strings.Join(c.args, " "), func(t *testing.T) {
				is := is.New(t)
				out, errs, code := run(t, append([]string{"query", "--manager", ep}, c.args...)...)
				is.True(code != 0)
				is.Equal(out, "")
				is.Equal(errs, c.msg)
			})
		}
	})
}
