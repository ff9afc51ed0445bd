package sqlite_test

import (
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league/storetest"
	"github.com/leaguectl/leaguectl/protocol"
)

// FuzzStoredResult: the text columns of a result that Load (a restarted
// manager) and Ledger (export) parse, technical_losses (JSON) and
// reported_at, as a hand-edited or damaged database may hold them. Neither
// reader panics; they agree on whether the technical losses can be read;
// what they read is every element of a JSON array of losses.
func FuzzStoredResult(f *testing.F) {
	for _, seed := range [][2]string{
		{`[{"player_id":"P01","error_code":"E001","action":"forfeit","reason":"no answer"}]`, "2025-01-15T10:30:05.5Z"},
		{`[]`, ""},
		{`null`, "not a time"},
		{`{}`, "2025-01-15T10:30:05+01:00"},
		{`[{"player_id":7}]`, "2025-13-45T99:99:99Z"},
		{`[{"error_code":"E999","reason":"\u0000"}, {}]`, "2025-01-15T10:30:05Z"},
		{`[`, "2025"},
	} {
		f.Add(seed[0], seed[1])
	}
	is := is.New(f)
	ctx := f.Context() // the fuzzing may outlast testCtx's bound
	rounds := storetest.OneRound(1)
	s := started(f, dbPath(f), rounds)
	_, err := s.SaveResult(ctx, storetest.Win(rounds[0][0], "REF01", storetest.At(2)))
	is.NoErr(err)
	f.Fuzz(func(t *testing.T, losses, reportedAt string) {
		_, err := s.DB().ExecContext(ctx, `UPDATE results SET technical_losses = ?, reported_at = ?`, losses, reportedAt)
		if err != nil {
			t.Fatal(err)
		}
		sv, loadErr := s.Load(ctx)
		rows, ledgerErr := s.Ledger(ctx)
		if (loadErr == nil) != (ledgerErr == nil) {
			t.Fatalf("Load: %v; Ledger: %v", loadErr, ledgerErr)
		}
		var want []protocol.TechnicalLoss
		if json.Unmarshal([]byte(losses), &want) != nil {
			if loadErr == nil {
				t.Fatalf("technical_losses %q read as %v", losses, sv.Results[0].TechnicalLosses)
			}
			return
		}
		if loadErr != nil {
			t.Fatalf("technical_losses %q: %v", losses, loadErr)
		}
		if got := sv.Results[0].TechnicalLosses; len(got) != len(want) {
			t.Fatalf("technical_losses %q read as %d losses, not %d", losses, len(got), len(want))
		}
		if len(rows) != 1 || (len(want) == 0) != (rows[0].TechnicalLoss == "") {
			t.Fatalf("technical_losses %q in the ledger: %+v", losses, rows)
		}
		if _, err := time.Parse(time.RFC3339Nano, reportedAt); err != nil && rows[0].ReportedAt != reportedAt {
			t.Fatalf("reported_at %q, which is no time, shown in the ledger as %q", reportedAt, rows[0].ReportedAt)
		}
	})
}
