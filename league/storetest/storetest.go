// Package storetest is the test suite every league store passes: what
// league.Store, league.ScheduleWriter and league.EventSeqStore promise, and
// the ledger that export writes, checked the same way on SQLite and on
// PostgreSQL.
package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// Store is a store under test.
type Store interface {
	league.Store
	league.ScheduleWriter
	league.EventSeqStore
	// Ledger is one row per scheduled match, in schedule order.
	Ledger(ctx context.Context) ([]league.LedgerRow, error)
	Close() error
}

// Reader is a store opened as export opens it: it reads and writes
// nothing.
type Reader interface {
	Load(ctx context.Context) (*league.Saved, error)
	Ledger(ctx context.Context) ([]league.LedgerRow, error)
	Close() error
}

// Database is one new, empty database of the store under test, for the
// league LeagueID.
type Database interface {
	// Open opens a store of the league on the database, ready to write
	// (for PostgreSQL: leading the league). The suite closes each store
	// it opens before it opens the next.
	Open(t *testing.T) Store
	// Reader opens the database as export does.
	Reader(t *testing.T) Reader
}

// LeagueID is the league every test of the suite writes.
const LeagueID = "league_2025_even_odd"

// Run runs the suite, each test on a database of its own from newDB.
func Run(t *testing.T, newDB func(t *testing.T) Database) {
	for _, c := range []struct {
		name string
		test func(t *testing.T, db Database)
	}{
		{"RoundTrip", testRoundTrip},
		{"SaveResultIdempotent", testSaveResultIdempotent},
		{"ConcurrentResults", testConcurrentResults},
		{"ConcurrentResultsOneMatch", testConcurrentResultsOneMatch},
		{"AgentsDuplicatesRefused", testAgentsDuplicatesRefused},
		{"AgentsRejoin", testAgentsRejoin},
		{"ScheduleInBatches", testScheduleInBatches},
		{"SchedulePartWritten", testSchedulePartWritten},
		{"EventSeq", testEventSeq},
		{"Ledger", testLedger},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, newDB(t)) })
	}
}

// At is a time of the test league, ns nanoseconds after 10:30:00 UTC.
func At(ns int64) time.Time {
	return time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC).Add(time.Duration(ns))
}

// Ctx is a test's context, with a deadline.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestLeague is the league the suite records: a seed of every bit, which
// neither SQLite's nor PostgreSQL's integers hold.
var TestLeague = league.LeagueRecord{LeagueID: LeagueID, Seed: math.MaxUint64,
	Scoring: league.Scoring{Win: 5, Draw: 2, Loss: -1}, CreatedAt: At(0)}

// AgentRec is a registration of the test league.
func AgentRec(id string, role protocol.Role, capacity int, registered time.Time) league.AgentRecord {
	token := "tok_" + string(role) + "_" + id + "_00112233445566778899aabbccddeeff"
	return league.AgentRecord{ID: id, Role: role, DisplayName: "Agent " + id, Endpoint: "http://agents.invalid/" + id,
		TokenHash: sha256.Sum256([]byte(token)), Capacity: capacity, RegisteredAt: registered}
}

// OneRound is a schedule of n matches in one round.
func OneRound(n int) [][]league.Pairing {
	round := make([]league.Pairing, n)
	for i := range round {
		round[i] = league.Pairing{Round: 1, MatchID: fmt.Sprintf("R1M%d", i+1), A: fmt.Sprintf("P%03d", 2*i+1), B: fmt.Sprintf("P%03d", 2*i+2)}
	}
	return [][]league.Pairing{round}
}

// Players are n player ids, P001 on.
func Players(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("P%03d", i+1)
	}
	return ids
}

// Win is a result of p that A won.
func Win(p league.Pairing, referee string, reported time.Time) league.ResultRecord {
	return league.ResultRecord{MatchID: p.MatchID, Round: p.Round, Referee: referee, StatusA: protocol.ResultWin,
		StatusB: protocol.ResultLoss, Winner: p.A, DrawnNumber: 4, ChoiceA: "even", ChoiceB: "odd",
		ConversationID: "conv-" + p.MatchID, ReportedAt: reported}
}

// open opens a store on db and closes it when the test ends (a test may
// close it before).
func open(t *testing.T, db Database) Store {
	t.Helper()
	s := db.Open(t)
	t.Cleanup(func() { s.Close() })
	return s
}

// started opens a store on db holding TestLeague with a schedule.
func started(t *testing.T, db Database, rounds [][]league.Pairing) Store {
	t.Helper()
	is := is.New(t)
	s := open(t, db)
	ctx := Ctx(t)
	is.NoErr(s.CreateLeague(ctx, TestLeague))
	is.NoErr(s.SaveSchedule(ctx, At(1), rounds))
	return s
}

// testRoundTrip: everything written is read back as it was given, times
// in UTC to the nanosecond, by a store opened again on the database.
func testRoundTrip(t *testing.T, db Database) {
	is := is.New(t)
	ctx := Ctx(t)

	empty := open(t, db)
	sv, err := empty.Load(ctx)
	is.NoErr(err)
	is.Equal(sv, nil) // an empty database holds no league
	is.NoErr(empty.Close())

	s := open(t, db)
	is.NoErr(s.CreateLeague(ctx, TestLeague))
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(*sv, league.Saved{League: TestLeague, State: league.StateRegistration}) // a new league: nothing else, all nil

	paris := time.FixedZone("CET", 3600)
	ref := AgentRec("REF01", protocol.RoleReferee, 2, At(100).In(paris))
	p1 := AgentRec("P01", protocol.RolePlayer, 0, At(999999999))
	p1.TokenNonce = []byte{0, 1, 2, 0xfe, 0xff}                   // made with the token key; the others without
	p2 := AgentRec("P02", protocol.RolePlayer, 0, At(1000000000)) // a whole second
	for _, a := range []league.AgentRecord{ref, p1, p2} {
		is.NoErr(s.SaveAgent(ctx, a))
	}
	rounds := [][]league.Pairing{
		{{Round: 1, MatchID: "R1M1", A: "P01", B: "P02"}},
		{{Round: 2, MatchID: "R2M1", A: "P02", B: "P01"}},
	}
	is.NoErr(s.SaveSchedule(ctx, At(2000000001), rounds))
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF01", At(3000000000)))
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF01", At(3500000000))) // again: the first time stands
	r1 := league.ResultRecord{MatchID: "R1M1", Round: 1, Referee: "REF01", StatusA: protocol.ResultDraw,
		StatusB: protocol.ResultDraw, DrawnNumber: 10, ChoiceA: "even", ChoiceB: "even", Reason: "both even",
		ConversationID: "conv-R1M1", ReportedAt: At(4000000001).In(paris)}
	r2 := league.ResultRecord{MatchID: "R2M1", Round: 2, Referee: "REF01", StatusA: protocol.ResultWin,
		StatusB: protocol.ResultTechnicalLoss, Winner: "P02",
		TechnicalLosses: []protocol.TechnicalLoss{{PlayerID: "P01", ErrorCode: protocol.ErrTimeout, Action: "forfeit", Reason: "no answer in 30 s"}},
		ConversationID:  "conv-R2M1", ReportedAt: At(5000000000)}
	for _, r := range []league.ResultRecord{r1, r2} {
		inserted, err := s.SaveResult(ctx, r)
		is.NoErr(err)
		is.True(inserted)
	}
	is.NoErr(s.SaveRoundClosed(ctx, 2))
	is.NoErr(s.SaveRoundClosed(ctx, 1)) // never goes back
	is.NoErr(s.SaveCompletion(ctx, At(6000000000)))
	is.NoErr(s.Close())

	sv, err = open(t, db).Load(ctx)
	is.NoErr(err)
	utc := func(a league.AgentRecord) league.AgentRecord { a.RegisteredAt = a.RegisteredAt.UTC(); return a }
	r1.ReportedAt = r1.ReportedAt.UTC()
	want := league.Saved{
		League:      TestLeague,
		State:       league.StateCompleted,
		ClosedRound: 2,
		StartedAt:   At(2000000001),
		CompletedAt: At(6000000000),
		Agents:      []league.AgentRecord{utc(ref), p1, p2},
		Rounds:      rounds,
		Assignments: map[string][]string{"R1M1": {"REF01"}},
		Results:     []league.ResultRecord{r1, r2},
	}
	is.Equal(sv.League, want.League) // seed, scoring, creation time
	is.Equal(sv.League.Seed, uint64(math.MaxUint64))
	is.Equal(sv.Agents, want.Agents) // token hashes and nonces or nil, capacities, times in UTC
	is.Equal(sv.Rounds, want.Rounds)
	is.Equal(sv.Assignments, want.Assignments)
	is.Equal(sv.Results, want.Results) // choices, drawn number or none, technical losses or nil
	is.Equal(*sv, want)                // all of it
}

// testSaveResultIdempotent: the first result of a match stands; a result
// of a match not in the schedule is refused.
func testSaveResultIdempotent(t *testing.T, db Database) {
	is := is.New(t)
	ctx := Ctx(t)
	rounds := OneRound(1)
	s := started(t, db, rounds)
	first := Win(rounds[0][0], "REF01", At(10))
	inserted, err := s.SaveResult(ctx, first)
	is.NoErr(err)
	is.True(inserted)
	second := first
	second.Referee, second.Winner, second.StatusA, second.StatusB = "REF02", "P002", protocol.ResultLoss, protocol.ResultWin
	inserted, err = s.SaveResult(ctx, second)
	is.NoErr(err)
	is.True(!inserted) // the match had a result
	inserted, err = s.SaveResult(ctx, first)
	is.NoErr(err)
	is.True(!inserted) // the same one again changes nothing either
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Results, []league.ResultRecord{first}) // the first stands

	unknown := first
	unknown.MatchID = "R9M9"
	_, err = s.SaveResult(ctx, unknown)
	is.True(err != nil) // not a match of the schedule
}

// testConcurrentResults: 50 results written at once, one per match, are
// each recorded once, as written.
func testConcurrentResults(t *testing.T, db Database) {
	s := started(t, db, OneRound(50))
	ConcurrentResults(t, s, s)
}

// ConcurrentResults checks that 50 results written at once, one per match
// of s's schedule OneRound(50), by writers in turn, are each recorded
// once, as written, as s reads them back.
func ConcurrentResults(t *testing.T, s league.Store, writers ...league.Store) {
	is := is.New(t)
	ctx := Ctx(t)
	rounds := OneRound(50)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	want := map[string]league.ResultRecord{}
	for i, p := range rounds[0] {
		r := Win(p, fmt.Sprintf("REF%02d", i%5+1), At(int64(i)))
		want[p.MatchID] = r
		w := writers[i%len(writers)]
		wg.Go(func() {
			inserted, err := w.SaveResult(ctx, r)
			if err == nil && !inserted {
				err = fmt.Errorf("%s not inserted", r.MatchID)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err) // every write succeeds
	}
	sv, err := s.Load(ctx)
	is.NoErr(err)
	got := map[string]league.ResultRecord{}
	for _, r := range sv.Results {
		got[r.MatchID] = r
	}
	is.Equal(len(sv.Results), 50) // each once
	is.Equal(got, want)           // all 50, as written
}

// testConcurrentResultsOneMatch: of 20 different results of one match
// written at once, exactly one is inserted, and it is the one stored.
func testConcurrentResultsOneMatch(t *testing.T, db Database) {
	s := started(t, db, OneRound(1))
	ConcurrentResultsOneMatch(t, s, s)
}

// ConcurrentResultsOneMatch checks that of 20 different results of the
// one match of s's schedule OneRound(1), written at once by writers in
// turn, exactly one is inserted, and it is the one s reads back.
func ConcurrentResultsOneMatch(t *testing.T, s league.Store, writers ...league.Store) {
	is := is.New(t)
	ctx := Ctx(t)
	p := OneRound(1)[0][0]
	type saved struct {
		r        league.ResultRecord
		inserted bool
		err      error
	}
	out := make(chan saved, 20)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 20 {
		r := Win(p, fmt.Sprintf("REF%02d", i+1), At(int64(i)))
		if i%2 == 1 {
			r.Winner, r.StatusA, r.StatusB = p.B, protocol.ResultLoss, protocol.ResultWin
		}
		w := writers[i%len(writers)]
		wg.Go(func() {
			<-start
			inserted, err := w.SaveResult(ctx, r)
			out <- saved{r, inserted, err}
		})
	}
	close(start)
	wg.Wait()
	close(out)
	var winners []league.ResultRecord
	for s := range out {
		is.NoErr(s.err)
		if s.inserted {
			winners = append(winners, s.r)
		}
	}
	is.Equal(len(winners), 1) // exactly one write inserted
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Results, winners) // and it is the one the store has
}

// testAgentsDuplicatesRefused: an id, or a role's endpoint, is registered
// once; a player may share a referee's endpoint.
func testAgentsDuplicatesRefused(t *testing.T, db Database) {
	is := is.New(t)
	ctx := Ctx(t)
	s := open(t, db)
	is.NoErr(s.CreateLeague(ctx, TestLeague))
	p1 := AgentRec("P01", protocol.RolePlayer, 0, At(1))
	is.NoErr(s.SaveAgent(ctx, p1))
	sameID := AgentRec("P01", protocol.RolePlayer, 0, At(2))
	sameID.Endpoint = "http://agents.invalid/other"
	is.True(s.SaveAgent(ctx, sameID) != nil) // id taken
	sameEndpoint := AgentRec("P02", protocol.RolePlayer, 0, At(3))
	sameEndpoint.Endpoint = p1.Endpoint
	is.True(s.SaveAgent(ctx, sameEndpoint) != nil) // endpoint taken in the role
	ref := AgentRec("REF01", protocol.RoleReferee, 4, At(4))
	ref.Endpoint = p1.Endpoint
	is.NoErr(s.SaveAgent(ctx, ref)) // another role's seat
	is.NoErr(s.SaveAgent(ctx, p1))  // the same registration again: a write tried again after its answer was lost
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Agents, []league.AgentRecord{p1, ref}) // nothing else recorded
}

// testAgentsRejoin: an agent's new token, capacity and tickets replace
// the old ones; an unknown agent's rejoin is refused.
func testAgentsRejoin(t *testing.T, db Database) {
	is := is.New(t)
	ctx := Ctx(t)
	s := open(t, db)
	is.NoErr(s.CreateLeague(ctx, TestLeague))
	p1 := AgentRec("P01", protocol.RolePlayer, 0, At(1))
	p1.MatchTickets = true
	p2 := AgentRec("P02", protocol.RolePlayer, 0, At(2))
	ref := AgentRec("REF01", protocol.RoleReferee, 2, At(3))
	for _, a := range []league.AgentRecord{p1, p2, ref} {
		is.NoErr(s.SaveAgent(ctx, a))
	}
	// Each back after a restart of its own, as another build: P01 asks
	// for no tickets now, P02 does; the referee takes more matches.
	p1.TokenHash, p1.TokenNonce, p1.MatchTickets = sha256.Sum256([]byte("new P01")), []byte{1}, false
	p2.TokenHash, p2.TokenNonce, p2.MatchTickets = sha256.Sum256([]byte("new P02")), []byte{2}, true
	ref.TokenHash, ref.Capacity = sha256.Sum256([]byte("new REF01")), 8
	is.NoErr(s.SaveRejoin(ctx, "P01", p1.TokenHash, p1.TokenNonce, 0, false))
	is.NoErr(s.SaveRejoin(ctx, "P02", p2.TokenHash, p2.TokenNonce, 0, true))
	is.NoErr(s.SaveRejoin(ctx, "REF01", ref.TokenHash, nil, 8, false))
	is.True(s.SaveRejoin(ctx, "P99", p1.TokenHash, nil, 0, false) != nil) // not registered
	is.NoErr(s.Close())
	sv, err := open(t, db).Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Agents, []league.AgentRecord{p1, p2, ref})
}

// testScheduleInBatches: a schedule of 100 players (4950 matches, five
// batches) is read back whole.
func testScheduleInBatches(t *testing.T, db Database) {
	is := is.New(t)
	ctx := Ctx(t)
	s := open(t, db)
	is.NoErr(s.CreateLeague(ctx, TestLeague))
	rounds := league.Schedule(Players(100))
	is.NoErr(s.SaveSchedule(ctx, At(1), rounds))
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.State, league.StateRunning)
	is.Equal(sv.Rounds, rounds)
	is.Equal(sv.StartedAt, At(1))
}

// testSchedulePartWritten: a league whose schedule was begun and not ended
// is STARTING, and read without any of it (nor shown by export); a new
// start drops what was written and writes it whole; a schedule ended with
// matches missing is refused; a running league's schedule is not begun
// again.
func testSchedulePartWritten(t *testing.T, db Database) {
	is := is.New(t)
	ctx := Ctx(t)
	s := open(t, db)
	is.NoErr(s.CreateLeague(ctx, TestLeague))
	rounds := league.Schedule(Players(6))
	is.NoErr(s.BeginSchedule(ctx, At(1)))
	is.NoErr(s.SaveMatches(ctx, []league.ScheduleRow{{Pairing: rounds[0][0]}, {Pairing: rounds[0][1], Position: 1}}))
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.State, league.StateStarting)
	is.Equal(sv.StartedAt, At(1))
	is.Equal(sv.Rounds, nil) // none of a schedule part written
	rows, err := s.Ledger(ctx)
	is.NoErr(err)
	is.Equal(len(rows), 0) // nor in the ledger
	err = s.EndSchedule(ctx, 15)
	is.True(err != nil) // 2 of 15 matches: not whole
	is.NoErr(s.Close())

	s = open(t, db)
	is.NoErr(s.SaveSchedule(ctx, At(1), rounds)) // begun again: the two dropped, all written
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.State, league.StateRunning)
	is.Equal(sv.Rounds, rounds)
	rows, err = s.Ledger(ctx)
	is.NoErr(err)
	is.Equal(len(rows), 15)
	is.NoErr(s.EndSchedule(ctx, 15))            // ended again, as a write whose answer was lost: no error
	is.True(s.EndSchedule(ctx, 14) != nil)      // but not another schedule
	is.True(s.BeginSchedule(ctx, At(2)) != nil) // a running league is not started again
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Rounds, rounds) // its schedule kept
}

// testEventSeq: the bound of the event numbers is kept across a reopen
// and never goes down, whatever order its writes come in.
func testEventSeq(t *testing.T, db Database) {
	is := is.New(t)
	ctx := Ctx(t)
	s := open(t, db)
	is.NoErr(s.CreateLeague(ctx, TestLeague))
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.EventSeq, uint64(0)) // none kept yet
	is.NoErr(s.SaveEventSeq(ctx, 4097))
	is.NoErr(s.SaveEventSeq(ctx, 8193))
	is.NoErr(s.SaveEventSeq(ctx, 4097)) // a write that came late
	is.True(s.SaveEventSeq(ctx, math.MaxUint64) != nil)
	is.NoErr(s.Close())

	sv, err = open(t, db).Load(ctx)
	is.NoErr(err)
	is.Equal(sv.EventSeq, uint64(8193)) // the highest, kept
}

// testLedger: the ledger, read as export reads it, is one row per match
// in schedule order, with each match's first assignment, its result, and
// its technical losses in words.
func testLedger(t *testing.T, db Database) {
	is := is.New(t)
	ctx := Ctx(t)
	s := open(t, db)
	is.NoErr(s.CreateLeague(ctx, TestLeague))

	rows, err := s.Ledger(ctx)
	is.NoErr(err)
	is.Equal(len(rows), 0) // no schedule, no rows

	rounds := [][]league.Pairing{
		{{Round: 1, MatchID: "R1M1", A: "P01", B: "P04"}, {Round: 1, MatchID: "R1M2", A: "P02", B: "P03"}},
		{{Round: 2, MatchID: "R2M1", A: "P03", B: "P01"}, {Round: 2, MatchID: "R2M2", A: "P04", B: "P02"}},
	}
	is.NoErr(s.SaveSchedule(ctx, At(0), rounds))
	// R1M1: REF01 at 10:30:01, then REF02 half a second later.
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF01", At(1000000000)))
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF02", At(1500000000)))
	is.NoErr(s.SaveAssignment(ctx, "R1M2", "REF02", At(1250000000)))
	is.NoErr(s.SaveAssignment(ctx, "R2M1", "REF01", At(7000000000))) // in flight
	_, err = s.SaveResult(ctx, league.ResultRecord{MatchID: "R1M1", Round: 1, Referee: "REF02",
		StatusA: protocol.ResultWin, StatusB: protocol.ResultLoss, Winner: "P01", DrawnNumber: 7,
		ChoiceA: "odd", ChoiceB: "even", ConversationID: "c1", ReportedAt: At(2000000000)})
	is.NoErr(err)
	_, err = s.SaveResult(ctx, league.ResultRecord{MatchID: "R1M2", Round: 1, Referee: "REF02",
		StatusA: protocol.ResultTechnicalLoss, StatusB: protocol.ResultTechnicalLoss, ChoiceB: "odd",
		TechnicalLosses: []protocol.TechnicalLoss{
			{PlayerID: "P02", ErrorCode: protocol.ErrTimeout, Reason: "no choice in 30 s"},
			{PlayerID: "P03", ErrorCode: protocol.ErrTimeout, Reason: "no answer"},
		}, ConversationID: "c2", ReportedAt: At(3000000123)})
	is.NoErr(err)
	is.NoErr(s.Close())

	r := db.Reader(t) // as export does
	defer r.Close()
	rows, err = r.Ledger(ctx)
	is.NoErr(err)
	want := []league.LedgerRow{
		{Round: 1, MatchID: "R1M1", PlayerA: "P01", PlayerB: "P04", Status: "DONE", Referee: "REF02", ChoiceA: "odd",
			ChoiceB: "even", DrawnNumber: 7, Winner: "P01", ResultA: "WIN", ResultB: "LOSS",
			AssignedAt: "2025-01-15T10:30:01Z", ReportedAt: "2025-01-15T10:30:02Z"},
		{Round: 1, MatchID: "R1M2", PlayerA: "P02", PlayerB: "P03", Status: "DONE", Referee: "REF02", ChoiceB: "odd",
			ResultA: "TECHNICAL_LOSS", ResultB: "TECHNICAL_LOSS",
			TechnicalLoss: "P02 E001 TIMEOUT_ERROR: no choice in 30 s; P03 E001 TIMEOUT_ERROR: no answer",
			AssignedAt:    "2025-01-15T10:30:01.25Z", ReportedAt: "2025-01-15T10:30:03.000000123Z"},
		{Round: 2, MatchID: "R2M1", PlayerA: "P03", PlayerB: "P01", Status: "PENDING", AssignedAt: "2025-01-15T10:30:07Z"},
		{Round: 2, MatchID: "R2M2", PlayerA: "P04", PlayerB: "P02", Status: "PENDING"},
	}
	for i := range want {
		is.Equal(rows[i], want[i]) // each row
	}
	is.Equal(rows, want) // in schedule order
	is.Equal(rows[1].Record(), []string{"1", "R1M2", "P02", "P03", "DONE", "REF02", "", "odd", "", "", "TECHNICAL_LOSS",
		"TECHNICAL_LOSS", "P02 E001 TIMEOUT_ERROR: no choice in 30 s; P03 E001 TIMEOUT_ERROR: no answer",
		"2025-01-15T10:30:01.25Z", "2025-01-15T10:30:03.000000123Z"}) // as a CSV record
	is.Equal(len(league.LedgerColumns()), len(rows[0].Record()))
	sv, err := r.Load(ctx)
	is.NoErr(err)
	is.Equal(len(sv.Results), 2) // the reader reads the league too
}
