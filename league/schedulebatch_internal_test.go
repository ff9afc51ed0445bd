package league

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/transport"
)

// TestScheduleBatchReplyBounded: a registered player's batch of 40
// GET_SCHEDULE queries, each within its rate limit and built in turn
// within MaxScheduleAnswers, made the manager hold one reply of all 40
// answers (a megabyte each) until it was written: a 11 KB request, a
// 40 MB reply. The reply stops at transport.MaxBatchReply, and the
// queries after it are answered E016, to be sent again.
func TestScheduleBatchReplyBounded(t *testing.T) {
	is := is.New(t)
	m := runningManager(t, 200) // 19,900 matches: an answer of the whole schedule holds 10,000
	m.opts.LeagueID = "league_2025_even_odd"
	m.agents["P001"].tokenHash = sha256.Sum256([]byte("tok-P001"))
	mux := m.Handler()
	mux.SetRateLimit(transport.RateLimit{PerSecond: 1000, Burst: 1000, RegistrationPerSecond: 5, RegistrationBurst: 50,
		Trusted: m.Vouches}) // the defaults of limits.*

	query := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"league_query","id":%d,"params":{"protocol":"league.v2",`+
			`"message_type":"LEAGUE_QUERY","sender":"player:P001","timestamp":"2026-11-21T12:00:00Z",`+
			`"conversation_id":"c%d","auth_token":"tok-P001","league_id":"league_2025_even_odd","query_type":"GET_SCHEDULE"}}`, i, i)
	}
	const n = 40 // a batch may hold 100 (protocol.MaxBatch); 40 keeps the test short
	qs := make([]string, n)
	for i := range qs {
		qs[i] = query(i)
	}
	body := []byte("[" + strings.Join(qs, ",") + "]")
	reply := transport.ServeJSON(t.Context(), mux, body, transport.Peer{Network: "http", Addr: "203.0.113.7:40000"})
	one := transport.ServeJSON(t.Context(), mux, []byte(query(0)), transport.Peer{Network: "http", Addr: "203.0.113.8:40000"})
	t.Logf("a body of %d bytes got a reply of %d bytes; one answer is %d bytes; answers built at once at most %d",
		len(body), len(reply), len(one), m.scheduleAnswers.peak.Load())
	is.True(strings.Contains(string(one), `"next_round_id"`)) // one answer: part of the schedule
	is.True(!strings.Contains(string(reply), `"E014"`))       // no query was over a limit
	// What one request may make the manager hold: the bound, and the
	// answer that crossed it.
	is.True(len(reply) <= transport.MaxBatchReply+len(one))
	is.True(strings.Contains(string(reply), `"error_code":"E016"`)) // the rest: to be sent again
}
