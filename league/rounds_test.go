package league_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestFullLeague plays four players with one scripted referee of capacity 2
// that holds its reports until both of its slots are taken, so that the
// manager must run a round's matches at once and must never hand it a third.
func TestFullLeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		// R1: P01-P04 P02-P03, R2: P03-P01 P04-P02, R3: P01-P02 P03-P04.
		script := map[string]string{"R1M1": "A", "R1M2": "D", "R2M1": "B", "R2M2": "TA", "R3M1": "D", "R3M2": "A"}
		ref := h.referee("REF01", 2, modeGate, script)
		ref.remaining = map[int]int{1: 2, 2: 2, 3: 2}
		players := []*fakePlayer{h.player("P01"), h.player("P02"), h.player("P03"), h.player("P04")}
		h.play()
		lc := h.wait()

		final := []protocol.StandingRow{
			srow(1, "P01", 2, 1, 0, 0, 7),
			srow(2, "P02", 1, 2, 0, 0, 5),
			srow(3, "P03", 1, 1, 1, 0, 4),
			srow(4, "P04", 0, 0, 3, 1, 0),
		}
		is.Equal(lc.TotalRounds, 3)
		is.Equal(lc.TotalMatches, 6)
		is.Equal(lc.Champion, &protocol.Champion{PlayerID: "P01", DisplayName: "Player 01", Points: 7})
		is.Equal(lc.FinalStandings, final) // final standings
		is.Equal(lc.Sender, mgrSend)
		is.Equal(ref.maxHeld(), 2) // both slots used, never more
		is.Equal(h.onResults(), [][2]int{{1, 6}, {2, 6}, {3, 6}, {4, 6}, {5, 6}, {6, 6}})
		is.Equal(h.status(), league.Status{LeagueID: leagueID, State: league.StateCompleted, CurrentRound: 3,
			TotalRounds: 3, TotalMatches: 6, MatchesPlayed: 6, Players: 4, Referees: 1})

		// The referee was told the end, with its own token.
		select {
		case got := <-ref.completed:
			is.Equal(got.AuthToken, ref.token)
			is.Equal(got.FinalStandings, final)
			is.Equal(got.Champion.PlayerID, "P01")
		default:
			t.Fatal("referee got no LEAGUE_COMPLETED")
		}
		// Every START_MATCH carried the referee's token and the players.
		var started []string
		for range 6 {
			sm := ref.nextStart()
			is.Equal(sm.AuthToken, ref.token)
			is.Equal(sm.Sender, mgrSend)
			started = append(started, fmt.Sprintf("%s %s-%s", sm.MatchID, sm.PlayerA(), sm.PlayerB()))
		}
		is.Equal(started[:2], sortedPair(started[:2], "R1M1 P01-P04", "R1M2 P02-P03"))
		is.Equal(started[2:4], sortedPair(started[2:4], "R2M1 P03-P01", "R2M2 P04-P02"))
		is.Equal(started[4:], sortedPair(started[4:], "R3M1 P01-P02", "R3M2 P03-P04"))

		afterRound := [][]protocol.StandingRow{
			{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 1, 0, 0, 1), srow(3, "P03", 0, 1, 0, 0, 1), srow(4, "P04", 0, 0, 1, 0, 0)},
			{srow(1, "P01", 2, 0, 0, 0, 6), srow(2, "P02", 1, 1, 0, 0, 4), srow(3, "P03", 0, 1, 1, 0, 1), srow(4, "P04", 0, 0, 2, 1, 0)},
			final,
		}
		summaries := []protocol.RoundSummary{
			{TotalMatches: 2, Wins: 1, Draws: 1},
			{TotalMatches: 2, Wins: 1, TechnicalLosses: 1},
			{TotalMatches: 2, Wins: 1, Draws: 1},
		}
		mref := func(id, a, b string) protocol.MatchRef {
			return protocol.MatchRef{MatchID: id, GameType: protocol.GameEvenOdd, PlayerAID: a, PlayerBID: b, RefereeEndpoint: ref.ep}
		}
		announced := [][]protocol.MatchRef{
			{mref("R1M1", "P01", "P04"), mref("R1M2", "P02", "P03")},
			{mref("R2M1", "P03", "P01"), mref("R2M2", "P04", "P02")},
			{mref("R3M1", "P01", "P02"), mref("R3M2", "P03", "P04")},
		}
		for _, p := range players {
			msgs := p.messages()
			var seq []string
			for _, m := range msgs {
				seq = append(seq, describe(m))
				is.Equal(m.Env().AuthToken, p.token) // every broadcast carries the player's own token
				is.Equal(m.Env().Sender, mgrSend)
				is.Equal(m.Env().LeagueID, leagueID)
			}
			is.Equal(seq, []string{
				"ROUND_ANNOUNCEMENT 1", "LEAGUE_STANDINGS_UPDATE 1", "ROUND_COMPLETED 1",
				"ROUND_ANNOUNCEMENT 2", "LEAGUE_STANDINGS_UPDATE 2", "ROUND_COMPLETED 2",
				"ROUND_ANNOUNCEMENT 3", "LEAGUE_STANDINGS_UPDATE 3", "ROUND_COMPLETED 3",
				"LEAGUE_COMPLETED",
			}) // broadcasts in order
			for r := range 3 {
				is.Equal(msgs[3*r].(*protocol.RoundAnnouncement).Matches, announced[r])          // matches of the round
				is.Equal(msgs[3*r+1].(*protocol.LeagueStandingsUpdate).Standings, afterRound[r]) // standings after the round
				rc := msgs[3*r+2].(*protocol.RoundCompleted)
				is.Equal(rc.MatchesCompleted, 2)
				is.Equal(*rc.Summary, summaries[r]) // summary of the round
				if r < 2 {
					is.Equal(*rc.NextRoundID, r+2)
				} else {
					is.Equal(rc.NextRoundID, nil) // last round
				}
			}
			end := msgs[9].(*protocol.LeagueCompleted)
			is.Equal(end.FinalStandings, final)
			is.Equal(end.TotalMatches, 6)
			// Each round's end (standings, completed, and the next
			// announcement) went as one batch, the player's server taking
			// batches.
			is.Equal(p.batchesHad(), 3) // batches
		}
	})
}

// sortedPair returns want in the order got has, when got holds the same two
// strings: the matches of a round start in any order.
func sortedPair(got []string, a, b string) []string {
	if len(got) == 2 && got[0] == b {
		return []string{b, a}
	}
	return []string{a, b}
}

// TestOddLeagueTwoReferees plays five players (a bye each round) on two
// referees of capacity 1.
func TestOddLeagueTwoReferees(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		// Every match is won by PLAYER_A.
		r1 := h.referee("REF01", 1, modeReport, nil)
		r2 := h.referee("REF02", 1, modeReport, nil)
		var players []*fakePlayer
		for i := 1; i <= 5; i++ {
			players = append(players, h.player(fmt.Sprintf("P%02d", i)))
		}
		h.play()
		lc := h.wait()
		is.Equal(lc.TotalRounds, 5)
		is.Equal(lc.TotalMatches, 10)
		wins := map[string]int{}
		for _, round := range league.Schedule([]string{"P01", "P02", "P03", "P04", "P05"}) {
			for _, m := range round {
				wins[m.A]++
			}
		}
		total := 0
		for _, r := range lc.FinalStandings {
			is.Equal(r.Played, 4)              // every player plays every other once
			is.Equal(r.Wins, wins[r.PlayerID]) // as PLAYER_A
			is.Equal(r.Points, 3*wins[r.PlayerID])
			total += r.Wins
		}
		is.Equal(total, 10)        // every match counted once
		is.True(r1.maxHeld() <= 1) // capacity 1
		is.True(r2.maxHeld() <= 1)
		is.Equal(len(r1.starts)+len(r2.starts), 10) // one START_MATCH per match
		for _, p := range players {
			is.Equal(len(p.messages()), 16) // 5 rounds of 3 broadcasts and the end
		}
		for _, f := range []*fakeReferee{r1, r2} {
			select {
			case got := <-f.completed:
				is.Equal(got.AuthToken, f.token) // its own token
			default:
				t.Fatalf("%s got no LEAGUE_COMPLETED", f.id)
			}
		}
	})
}

// manualLeague plays P01 against P02 with REF01, whose results the test
// reports.
func manualLeague(t *testing.T, n *transporttest.Net, opts league.Options) (*harness, *fakeReferee, []*fakePlayer) {
	h := newHarness(t, n, opts)
	ref := h.referee("REF01", 1, modeManual, nil)
	players := []*fakePlayer{h.player("P01"), h.player("P02")}
	h.play()
	return h, ref, players
}

func TestReports(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h, ref, _ := manualLeague(t, n, league.Options{})
		defer h.stop()
		sm := ref.nextStart()
		is.Equal(sm.MatchID, "R1M1")
		is.Equal(sm.PlayerA(), "P01")
		is.Equal(sm.PlayerB(), "P02")
		// A referee that joins late was never given the match.
		other := h.referee("REF02", 1, modeManual, nil)

		check := func(err error, code protocol.Code, rpc int) {
			t.Helper()
			gotCode, gotRPC := codes(err)
			is.Equal(gotCode, code)
			is.Equal(gotRPC, rpc)
		}
		_, err := ref.reportAs("REF01", ref.token, 1, "R9M9", resultOf("A", "P01", "P02"))
		check(err, protocol.ErrMatchNotFound, -32007) // unknown match
		_, err = other.reportAs("REF02", other.token, 1, "R1M1", resultOf("A", "P01", "P02"))
		check(err, protocol.ErrAuthenticationFailed, -32001) // not this referee's match
		_, err = ref.reportAs("REF01", ref.token, 2, "R1M1", resultOf("A", "P01", "P02"))
		check(err, protocol.ErrInvalidMessageFormat, -32002) // wrong round
		bad := resultOf("A", "P01", "P02")
		bad.PlayerBStatus = protocol.ResultWin
		_, err = ref.reportAs("REF01", ref.token, 1, "R1M1", bad)
		check(err, protocol.ErrInvalidMessageFormat, -32002) // two winners
		bad = resultOf("A", "P01", "P02")
		bad.Winner = &sm.PlayerBID
		_, err = ref.reportAs("REF01", ref.token, 1, "R1M1", bad)
		check(err, protocol.ErrInvalidMessageFormat, -32002) // winner against the statuses
		stranger := "P07"
		bad = resultOf("A", "P01", "P02")
		bad.Winner = &stranger
		_, err = ref.reportAs("REF01", ref.token, 1, "R1M1", bad)
		check(err, protocol.ErrInvalidMessageFormat, -32002) // winner not in the match
		is.Equal(h.status().MatchesPlayed, 0)                // nothing counted

		line := dialectLine(t, "dialect-a.jsonl", "MATCH_RESULT_REPORT", "2dfe77ce5bf3fdc0d5c0e169efecbc10", ref.token)
		resp := h.roundTrip(strings.Replace(line, `"league_id": "league_2025_even_odd"`, `"league_id": "league_99"`, 1))
		is.Equal(resp.Error.LeagueCode(), protocol.ErrLeagueNotFound) // a report for another league
		is.Equal(h.status().MatchesPlayed, 0)                         // nothing counted

		ack, err := ref.reportAs("REF01", ref.token, 1, "R1M1", resultOf("D", "P01", "P02"))
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusAccepted)
		is.Equal(ack.MatchID, "R1M1")
		is.Equal(ack.MessageType, protocol.TypeMatchResultReportAck)
		is.Equal(ack.ConversationID, "conv-test") // the report's conversation
		is.Equal(ack.AuthToken, ref.token)        // the referee's own token
		lc := h.wait()
		want := []protocol.StandingRow{srow(1, "P01", 0, 1, 0, 0, 1), srow(2, "P02", 0, 1, 0, 0, 1)}
		is.Equal(lc.FinalStandings, want)

		ack, err = ref.reportAs("REF01", ref.token, 1, "R1M1", resultOf("B", "P01", "P02"))
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusDuplicate) // counted once
		is.Equal(ack.AuthToken, ref.token)
		var st standingsData
		is.NoErr(h.call(protocol.MethodGetStandings, nil, &st))
		is.Equal(st.Standings, want) // unchanged
		is.Equal(h.onResults(), [][2]int{{1, 1}})
		_, err = other.reportAs("REF02", other.token, 1, "R1M1", resultOf("B", "P01", "P02"))
		check(err, protocol.ErrAuthenticationFailed, -32001) // still not its match
	})
}

// TestReportAnyDrawnNumber: no document bounds the drawn number (our
// referee draws 1 to 10); a referee of another implementation that draws
// 0 to 9, or 1 to 100, has its report counted.
func TestReportAnyDrawnNumber(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h, ref, _ := manualLeague(t, n, league.Options{})
		defer h.stop()
		sm := ref.nextStart()
		res := resultOf("A", sm.PlayerA(), sm.PlayerB())
		drawn := 42
		res.Details.DrawnNumber = &drawn
		ack, err := ref.reportAs("REF01", ref.token, 1, sm.MatchID, res)
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusAccepted)
		lc := h.wait()
		is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 0, 1, 0, 0)})
	})
}

// dialectLine is a request of a capture, with the capture's token of its
// referee replaced by the one this manager issued.
func dialectLine(t *testing.T, file, name, oldToken, newToken string) string {
	lines := interopRequests(t, file, name)
	if len(lines) != 1 {
		t.Fatalf("%s: %d %s requests", file, len(lines), name)
	}
	if !strings.Contains(lines[0], oldToken) {
		t.Fatalf("%s: no token %s", file, oldToken)
	}
	return strings.ReplaceAll(lines[0], oldToken, newToken)
}

func TestReportDialectA(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h, ref, _ := manualLeague(t, n, league.Options{})
		defer h.stop()
		is.Equal(ref.nextStart().MatchID, "R1M1")
		// In the capture the match was P02 (A) against P01 (B), and P01 won:
		// player_a_status LOSS, player_b_status WIN. Here P01 is A, and a
		// dialect-a referee reports the statuses of the START_MATCH it got.
		line := dialectLine(t, "dialect-a.jsonl", "MATCH_RESULT_REPORT", "2dfe77ce5bf3fdc0d5c0e169efecbc10", ref.token)
		line = strings.Replace(line, `"player_a_status": "LOSS", "player_b_status": "WIN"`,
			`"player_a_status": "WIN", "player_b_status": "LOSS"`, 1)
		resp := h.roundTrip(line)
		is.Equal(resp.Error, nil)
		var ack protocol.MatchResultReportAck
		is.NoErr(json.Unmarshal(resp.Result, &ack)) // inline reply
		is.Equal(ack.Status, protocol.StatusAccepted)
		is.Equal(ack.ConversationID, "conv-015a339d-9f1c-431f-8e33-2ad4caf39c0b")
		lc := h.wait()
		is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 0, 1, 0, 0)})

		// The capture's own statuses contradict its winner for this match.
		resp = h.roundTrip(dialectLine(t, "dialect-a.jsonl", "MATCH_RESULT_REPORT", "2dfe77ce5bf3fdc0d5c0e169efecbc10", ref.token))
		is.Equal(resp.Error, nil)
		is.NoErr(json.Unmarshal(resp.Result, &ack))
		is.Equal(ack.Status, protocol.StatusDuplicate) // a counted match stays as it is
	})
}

func TestReportDialectB(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h, ref, _ := manualLeague(t, n, league.Options{})
		defer h.stop()
		is.Equal(ref.nextStart().MatchID, "R1M1")
		// winner P02 and a score, no statuses, through tools/call.
		resp := h.roundTrip(dialectLine(t, "dialect-b.jsonl", protocol.MethodReportMatchResult, "tok_REF01_a6d7fa56f3ce", ref.token))
		is.Equal(resp.Error, nil)
		is.Equal(string(resp.ID), "114388")
		var ack protocol.MatchResultReportAck
		is.NoErr(json.Unmarshal(mcpText(t, resp.Result), &ack)) // MCP-wrapped reply
		is.Equal(ack.Status, protocol.StatusAccepted)
		is.Equal(ack.MatchID, "R1M1")
		lc := h.wait()
		is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P02", 1, 0, 0, 0, 3), srow(2, "P01", 0, 0, 1, 0, 0)})
	})
}

func TestRedispatch(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("refused", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{})
			defer h.stop()
			bad := h.referee("REF01", 1, modeRefuse, nil)
			good := h.referee("REF02", 1, modeReport, map[string]string{"R1M1": "B"})
			h.player("P01")
			h.player("P02")
			h.play()
			lc := h.wait()
			is.Equal(bad.nextStart().MatchID, "R1M1")  // tried first
			is.Equal(good.nextStart().MatchID, "R1M1") // then handed over
			is.Equal(good.nextAck(), "R1M1 ACCEPTED")
			is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P02", 1, 0, 0, 0, 3), srow(2, "P01", 0, 0, 1, 0, 0)})
			is.Equal(h.onResults(), [][2]int{{1, 1}}) // counted once
		})
		t.Run("unreachable", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{})
			defer h.stop()
			gone := n.ListenStoppable(t, "referee-gone", transport.NewMux(nil))
			r, err := h.registerReferee("referee:REF01", gone.Endpoint(), 1)
			is.NoErr(err)
			is.Equal(r.RefereeID, "REF01")
			is.NoErr(gone.Close()) // nothing answers there any more
			good := h.referee("REF02", 1, modeReport, nil)
			h.player("P01")
			h.player("P02")
			h.play()
			lc := h.wait()
			is.Equal(good.nextStart().MatchID, "R1M1")
			is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 0, 1, 0, 0)})
			is.Equal(h.onResults(), [][2]int{{1, 1}})
		})
		t.Run("no result in time", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{MatchTimeout: quietAfter})
			defer h.stop()
			slow := h.referee("REF01", 1, modeSilent, nil)
			good := h.referee("REF02", 1, modeReport, map[string]string{"R1M1": "B"})
			h.player("P01")
			h.player("P02")
			h.play()
			sm := slow.nextStart()
			is.Equal(sm.MatchID, "R1M1")
			is.Equal(good.nextStart().MatchID, "R1M1")
			is.Equal(good.nextAck(), "R1M1 ACCEPTED") // the second referee's result counts
			status, err := slow.report(sm, "A")       // the first one's, late
			is.NoErr(err)
			is.Equal(status, protocol.StatusDuplicate)
			lc := h.wait()
			is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P02", 1, 0, 0, 0, 3), srow(2, "P01", 0, 0, 1, 0, 0)})
			is.Equal(h.onResults(), [][2]int{{1, 1}}) // counted once
		})
		t.Run("late report before the other referee's", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{MatchTimeout: quietAfter})
			defer h.stop()
			slow := h.referee("REF01", 1, modeManual, nil)
			other := h.referee("REF02", 1, modeManual, nil)
			h.player("P01")
			h.player("P02")
			h.play()
			sm := slow.nextStart()
			is.Equal(other.nextStart().MatchID, "R1M1") // handed over after the timeout
			status, err := slow.report(sm, "A")         // the first referee still reports
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted) // it was given the match: it counts
			status, err = other.report(sm, "B")
			is.NoErr(err)
			is.Equal(status, protocol.StatusDuplicate)
			lc := h.wait()
			is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 0, 1, 0, 0)})
		})
	})
}

// TestMatchesSpreadOverReferees: with two referees of capacity 2 and two
// matches a round, each referee gets one match of every round.
func TestMatchesSpreadOverReferees(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		r1 := h.referee("REF01", 2, modeReport, nil)
		r2 := h.referee("REF02", 2, modeReport, nil)
		players := []*fakePlayer{h.player("P01"), h.player("P02"), h.player("P03"), h.player("P04")}
		h.play()
		h.wait()
		is.Equal(len(r1.starts), 3) // one match a round
		is.Equal(len(r2.starts), 3) // one match a round
		for round := range 3 {
			ann := players[0].messages()[3*round].(*protocol.RoundAnnouncement)
			is.Equal(ann.Matches[0].RefereeEndpoint, r1.ep) // announced round robin over the referees
			is.Equal(ann.Matches[1].RefereeEndpoint, r2.ep)
		}
	})
}

// TestSlowPlayerHoldsOnlyItsMatch: a player slow to take the end of a round
// holds back its own match of the next round, not the other matches, and
// every player still hears every message in order.
func TestSlowPlayerHoldsOnlyItsMatch(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h, ref, players, held, release := heldLeague(t, n, nil, modeManual, "ROUND_COMPLETED 1") // P04: R2M2 P04-P02
		defer h.stop()
		h.play()
		for range 2 {
			sm := ref.nextStart()
			is.Equal(sm.RoundID, 1)
			status, err := ref.report(sm, crashScript[sm.MatchID])
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
		}
		sm := ref.nextStart()
		is.Equal(sm.MatchID, "R2M1") // P03-P01 starts while P04 has not answered
		select {
		case <-held:
		case <-h.ctx.Done():
			t.Fatal("P04 got no ROUND_COMPLETED 1")
		}
		is.Equal(describeAll(t, players[3].messages(), players[3].token),
			[]string{"ROUND_ANNOUNCEMENT 1", "LEAGUE_STANDINGS_UPDATE 1", "ROUND_COMPLETED 1"})
		select {
		case sm := <-ref.starts:
			t.Fatalf("%s started before P04 heard of round 2", sm.MatchID)
		default:
		}
		status, err := ref.report(sm, crashScript[sm.MatchID])
		is.NoErr(err)
		is.Equal(status, protocol.StatusAccepted)
		is.Equal(h.status().MatchesPlayed, 3) // counted while P04 still holds the end of round 1

		release()
		finishCrashScript(t, ref)
		lc := h.wait()
		is.Equal(lc.FinalStandings, crashFinal())
		for _, p := range players {
			is.Equal(describeAll(t, p.messages(), p.token), []string{
				"ROUND_ANNOUNCEMENT 1", "LEAGUE_STANDINGS_UPDATE 1", "ROUND_COMPLETED 1",
				"ROUND_ANNOUNCEMENT 2", "LEAGUE_STANDINGS_UPDATE 2", "ROUND_COMPLETED 2",
				"ROUND_ANNOUNCEMENT 3", "LEAGUE_STANDINGS_UPDATE 3", "ROUND_COMPLETED 3",
				"LEAGUE_COMPLETED",
			})
			is.Equal(p.messages()[4].(*protocol.LeagueStandingsUpdate).Standings, []protocol.StandingRow{
				srow(1, "P01", 2, 0, 0, 0, 6), srow(2, "P02", 1, 1, 0, 0, 4),
				srow(3, "P03", 0, 1, 1, 0, 1), srow(4, "P04", 0, 0, 2, 1, 0),
			}) // after round 2: all of round 2, though R2M1 was counted first
		}
	})
}

// TestSlowPlayerStillHearsTheRest: a player too slow with one message of a
// round's end still gets the messages after it, whether they came one call
// each (a call timeout for the slow one) or as one batch (over HTTP: as
// many call timeouts as messages, and the server serves the rest after the
// caller gave up).
func TestSlowPlayerStillHearsTheRest(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{Seed: 42, CallTimeout: time.Second})
		defer h.stop()
		ref := h.referee("REF01", 2, modeManual, nil)
		players := []*fakePlayer{h.player("P01"), h.player("P02"), h.player("P03"), h.player("P04")}
		_, release := players[3].holdAt(t, "LEAGUE_STANDINGS_UPDATE 1") // given up by the manager, never released
		defer release()
		h.play()
		for i := range 6 { // the rounds' matches start one round after the other
			sm := ref.nextStart()
			is.Equal(sm.RoundID, i/2+1)
			if i == 3 {
				// Round 2's last result lets its end go to P04. Over HTTP
				// the rest of the batch the manager gave up on is served
				// after the manager went on, and could be overtaken.
				players[3].waitMessages(t, 4)
			}
			status, err := ref.report(sm, crashScript[sm.MatchID])
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
		}
		lc := h.wait()
		is.Equal(lc.FinalStandings, crashFinal())
		is.Equal(describeAll(t, players[3].messages(), players[3].token), []string{
			"ROUND_ANNOUNCEMENT 1", "LEAGUE_STANDINGS_UPDATE 1", "ROUND_COMPLETED 1",
			"ROUND_ANNOUNCEMENT 2", "LEAGUE_STANDINGS_UPDATE 2", "ROUND_COMPLETED 2",
			"ROUND_ANNOUNCEMENT 3", "LEAGUE_STANDINGS_UPDATE 3", "ROUND_COMPLETED 3",
			"LEAGUE_COMPLETED",
		})
	})
}

// TestRefereeBounds: no document bounds max_concurrent_matches, and the
// manager keeps a slot for each: 2^62 of them crashed it (and it crashed
// again on every restart from its store). A referee is given at most
// league.MaxRefereeCapacity matches at once. A completed league takes no
// referee, as it takes no player.
func TestRefereeBounds(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		ref := h.referee("REF01", 1<<62, modeManual, nil)
		h.player("P01")
		h.player("P02")
		h.play()
		sm := ref.nextStart()
		ack, err := ref.reportAs("REF01", ref.token, 1, sm.MatchID, resultOf("A", sm.PlayerA(), sm.PlayerB()))
		is.NoErr(err)
		is.Equal(ack.Status, protocol.StatusAccepted)
		lc := h.wait()
		is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 0, 1, 0, 0)})

		late, err := h.registerReferee("referee:REF02", endpoint("ref-late"), 1)
		is.NoErr(err)
		is.Equal(late.Status, protocol.StatusRejected)
		is.Equal(*late.Reason, "the league is over")
		is.Equal(late.AuthToken, "")
		is.Equal(h.status().Referees, 1)
	})
}

// TestQuietRefereeGetsNoMoreMatches: a referee that takes matches and
// never reports cost every round a match timeout; now, once a match of
// its runs out of time, it is given none while another referee answers.
func TestQuietRefereeGetsNoMoreMatches(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{MatchTimeout: quietAfter})
		defer h.stop()
		silent := h.referee("REF01", 1, modeSilent, nil)
		good := h.referee("REF02", 1, modeReport, nil)
		for _, id := range []string{"P01", "P02", "P03", "P04"} {
			h.player(id)
		}
		h.play()
		lc := h.wait()
		is.Equal(lc.TotalMatches, 6)
		is.Equal(len(silent.starts), 1) // one match, then no more
		is.Equal(len(good.starts), 6)   // every match, the silent one's too
	})
}

// TestQuietRefereeHeardAgain: a quiet referee that reports, late or not,
// is given matches again; and one that is quiet is given the match back
// when the other referee refuses it (refused, it is quiet too).
func TestQuietRefereeHeardAgain(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("late report", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{MatchTimeout: quietAfter})
			defer h.stop()
			slow := h.referee("REF01", 1, modeManual, nil)
			good := h.referee("REF02", 1, modeManual, nil)
			for _, id := range []string{"P01", "P02", "P03", "P04"} {
				h.player(id)
			}
			h.play()
			first := slow.nextStart()
			own := good.nextStart() // the round's other match
			_, err := good.report(own, "A")
			is.NoErr(err)
			is.Equal(good.nextStart().MatchID, first.MatchID) // first's, handed over: REF01 is quiet
			status, err := slow.report(first, "A")            // late, before REF02's: it counts
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
			good.reportAll(t)          // whatever REF02 is given from now on
			second := slow.nextStart() // heard from: given a match again
			status, err = slow.report(second, "A")
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
			slow.reportAll(t) // a match of round 3 it may be given is not left to run out of time
			is.Equal(h.wait().TotalMatches, 6)
		})
		t.Run("the other refuses", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{MatchTimeout: quietAfter})
			defer h.stop()
			silent := h.referee("REF01", 1, modeManual, nil)
			h.referee("REF02", 1, modeRefuse, nil)
			h.player("P01")
			h.player("P02")
			h.play()
			first := silent.nextStart() // never reported: quiet
			again := silent.nextStart() // REF02 refuses it: the match comes back
			is.Equal(again.MatchID, first.MatchID)
			status, err := silent.report(again, "A")
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
			is.Equal(h.wait().TotalMatches, 1)
		})
	})
}

// TestShownTokenCannotReport: the token a referee shows its players
// (protocol.ShownToken, made from its own) does not sign a report in the
// referee's name: E012, and the match stays open for the referee's own.
func TestShownTokenCannotReport(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h, ref, _ := manualLeague(t, n, league.Options{})
		defer h.stop()
		sm := ref.nextStart()
		shown := protocol.ShownToken(protocol.RoleReferee, "REF01", ref.token)
		is.True(shown != ref.token)
		_, err := ref.reportAs("REF01", shown, 1, sm.MatchID, resultOf("B", sm.PlayerA(), sm.PlayerB()))
		code, _ := codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // the shown token is not the referee's
		status, err := ref.report(sm, "A")
		is.NoErr(err)
		is.Equal(status, protocol.StatusAccepted) // the referee's own result counts
		lc := h.wait()
		is.Equal(lc.FinalStandings, []protocol.StandingRow{srow(1, "P01", 1, 0, 0, 0, 3), srow(2, "P02", 0, 0, 1, 0, 0)})
	})
}

// TestReportByScoreOnly: a report in message-structures §4.6.2's form
// (winner and score, no statuses) with no winner is a draw when the
// score gives each player a point, and a loss of both when it gives
// neither any: an audit's Python referee reported a double technical loss
// so, and it was counted as a draw.
func TestReportByScoreOnly(t *testing.T) {
	three := 3
	played := &protocol.ResultDetails{DrawnNumber: &three, Choices: map[string]string{"P01": protocol.Even, "P02": protocol.Even}}
	for _, c := range []struct {
		name    string
		score   map[string]any
		details *protocol.ResultDetails
		want    []protocol.StandingRow
	}{
		{"a draw", map[string]any{"P01": 1, "P02": 1}, nil, []protocol.StandingRow{srow(1, "P01", 0, 1, 0, 0, 1), srow(2, "P02", 0, 1, 0, 0, 1)}},
		{"both lost", map[string]any{"P01": 0, "P02": 0}, nil, []protocol.StandingRow{srow(1, "P01", 0, 0, 1, 1, 0), srow(2, "P02", 0, 0, 1, 1, 0)}},
		// Both guessed wrong, scored as right guesses: played, a draw.
		{"a played draw scored 0-0", map[string]any{"P01": 0, "P02": 0}, played,
			[]protocol.StandingRow{srow(1, "P01", 0, 1, 0, 0, 1), srow(2, "P02", 0, 1, 0, 0, 1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
				is := is.New(t)
				h, ref, _ := manualLeague(t, n, league.Options{})
				defer h.stop()
				sm := ref.nextStart()
				ack, err := ref.reportAs("REF01", ref.token, 1, sm.MatchID, &protocol.MatchResult{Score: c.score, Details: c.details})
				is.NoErr(err)
				is.Equal(ack.Status, protocol.StatusAccepted)
				is.Equal(h.wait().FinalStandings, c.want)
			})
		})
	}
}

// TestStartWaitsForALatePlayer: a player that registered before its server
// listens, and whose endpoint refused the manager's first call, still
// hears round 1 once it listens: the manager waits for every player's
// endpoint to answer before round 1 (StartGrace), and tries a broadcast
// again when it fails as retryable.
func TestStartWaitsForALatePlayer(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{Seed: 42, StartGrace: 10 * time.Second})
		defer h.stop()
		h.referee("REF01", 2, modeReport, crashScript)
		players := []*fakePlayer{h.player("P01"), h.player("P02"), h.player("P03")}
		late, serve := h.latePlayer("P04")
		refused := make(chan struct{})
		var once sync.Once
		h.sent.mu.Lock()
		h.sent.failed = func(ep string) {
			if ep == late.ep {
				once.Do(func() { close(refused) })
			}
		}
		h.sent.mu.Unlock()
		h.play()
		select {
		case <-refused: // the manager has called it, and found nobody
		case <-h.ctx.Done():
			t.Fatal("the manager never called P04")
		}
		serve()
		lc := h.wait()
		is.Equal(lc.FinalStandings, crashFinal())
		for _, p := range append(players, late) {
			is.Equal(describeAll(t, p.messages(), p.token)[0], "ROUND_ANNOUNCEMENT 1") // every player heard round 1
		}
		is.True(!strings.Contains(h.logs.String(), "not listening")) // none left silent
	})
}

// TestStartGraceNamesTheSilent: a player whose endpoint never answers
// keeps its place; the league starts once StartGrace has passed, and a
// warning names the player.
func TestStartGraceNamesTheSilent(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		// The grace is waited out for P04, and every other player's ping
		// must be answered within it: twice the harness's call timeout
		// for a call of milliseconds, however loaded the machine.
		h := newHarness(t, n, league.Options{Seed: 42, StartGrace: 2 * time.Second})
		defer h.stop()
		h.referee("REF01", 2, modeReport, crashScript)
		players := []*fakePlayer{h.player("P01"), h.player("P02"), h.player("P03")}
		h.latePlayer("P04") // never listens
		h.play()
		lc := h.wait()
		is.Equal(len(lc.FinalStandings), 4) // P04 kept its place
		for _, p := range players {
			is.Equal(describeAll(t, p.messages(), p.token)[0], "ROUND_ANNOUNCEMENT 1")
		}
		var warned bool
		for line := range strings.Lines(h.logs.String()) {
			if strings.Contains(line, "players not listening when the league starts") {
				warned = strings.Contains(line, `"players":["P04"]`)
			}
		}
		is.True(warned) // the warning names P04, and only P04
	})
}

// TestMixedLeague: an agent that asks for no id is given P01; a later one
// that asks for P01 is not turned away but given the next free id, and
// told so; both play the whole league.
func TestMixedLeague(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{Seed: 42})
		defer h.stop()
		h.referee("REF01", 2, modeReport, crashScript)
		anonymous, serve1 := h.playerAs("player:pending", "P01")
		asked, serve2 := h.playerAs("player:P01", "P02")
		serve1()
		serve2()
		players := []*fakePlayer{anonymous, asked, h.player("P03"), h.player("P04")}
		h.play()
		lc := h.wait()
		got := lc.FinalStandings
		for i := range got {
			got[i].DisplayName = "" // named after what each sent
		}
		want := crashFinal()
		for i := range want {
			want[i].DisplayName = ""
		}
		is.Equal(got, want) // both played every match
		for _, p := range players {
			is.Equal(len(p.messages()), 10) // three rounds of three messages, and the league's end
		}
		is.True(strings.Contains(h.logs.String(), `"asked":"P01","given":"P02"`)) // the manager says so
	})
}
