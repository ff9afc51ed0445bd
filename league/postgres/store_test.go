package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/pgtest"
	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/league/postgres"
	"github.com/leaguectl/leaguectl/league/storetest"
	"github.com/leaguectl/leaguectl/protocol"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// open opens the store of league id in the database at url, closed when
// the test ends; it does not lead.
func open(t testing.TB, url, id, holder string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(testCtx(t), url, id, postgres.Options{Holder: holder, PingInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// leader is open, leading.
func leader(t testing.TB, url, id, holder string) *postgres.Store {
	t.Helper()
	s := open(t, url, id, holder)
	if err := s.Lead(testCtx(t), func(h string) { t.Errorf("%s waits for %s", holder, h) }); err != nil {
		t.Fatalf("lead: %v", err)
	}
	return s
}

const leagueID = "league_2025_even_odd"

func testLeague(id string) league.LeagueRecord {
	return league.LeagueRecord{LeagueID: id, Seed: math.MaxUint64,
		Scoring: league.Scoring{Win: 5, Draw: 2, Loss: -1}, CreatedAt: storetest.At(0)}
}

// started is a leading store of a league with a schedule.
func started(t testing.TB, url string, rounds [][]league.Pairing) *postgres.Store {
	t.Helper()
	is := is.New(t)
	s := leader(t, url, leagueID, "host-a:1")
	ctx := testCtx(t)
	is.NoErr(s.CreateLeague(ctx, testLeague(leagueID)))
	is.NoErr(s.SaveSchedule(ctx, storetest.At(1), rounds))
	return s
}

func TestRoundTrip(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	url := pgtest.Database(t)

	s := leader(t, url, leagueID, "host-a:1")
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv, nil) // the league is not in the database yet
	is.NoErr(s.CreateLeague(ctx, testLeague(leagueID)))
	sv, err = s.Load(ctx)
	is.NoErr(err)
	is.Equal(*sv, league.Saved{League: testLeague(leagueID), State: league.StateRegistration}) // a new league: nothing else, all nil

	paris := time.FixedZone("CET", 3600)
	ref := storetest.AgentRec("REF01", protocol.RoleReferee, 2, storetest.At(100).In(paris))
	p1 := storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(999999999))
	p1.TokenNonce = []byte{0, 1, 2, 0xfe, 0xff} // made with the token key; the others without
	p1.MatchTickets = true
	p2 := storetest.AgentRec("P02", protocol.RolePlayer, 0, storetest.At(1000000000)) // a whole second
	for _, a := range []league.AgentRecord{ref, p1, p2} {
		is.NoErr(s.SaveAgent(ctx, a))
	}
	rounds := [][]league.Pairing{
		{{Round: 1, MatchID: "R1M1", A: "P01", B: "P02"}},
		{{Round: 2, MatchID: "R2M1", A: "P02", B: "P01"}},
	}
	is.NoErr(s.SaveSchedule(ctx, storetest.At(2000000001), rounds))
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF01", storetest.At(3000000000)))
	is.NoErr(s.SaveAssignment(ctx, "R1M1", "REF01", storetest.At(3500000000))) // again: the first time stands
	r1 := league.ResultRecord{MatchID: "R1M1", Round: 1, Referee: "REF01", StatusA: protocol.ResultDraw,
		StatusB: protocol.ResultDraw, DrawnNumber: 10, ChoiceA: "even", ChoiceB: "even", Reason: "both even",
		ConversationID: "conv-R1M1", ReportedAt: storetest.At(4000000001).In(paris)}
	r2 := league.ResultRecord{MatchID: "R2M1", Round: 2, Referee: "REF01", StatusA: protocol.ResultWin,
		StatusB: protocol.ResultTechnicalLoss, Winner: "P02",
		TechnicalLosses: []protocol.TechnicalLoss{{PlayerID: "P01", ErrorCode: protocol.ErrTimeout, Action: "forfeit", Reason: "no answer in 30 s"}},
		ConversationID:  "conv-R2M1", ReportedAt: storetest.At(5000000000)}
	for _, r := range []league.ResultRecord{r2, r1} { // counted in this order
		inserted, err := s.SaveResult(ctx, r)
		is.NoErr(err)
		is.True(inserted)
	}
	is.NoErr(s.SaveRoundClosed(ctx, 2))
	is.NoErr(s.SaveRoundClosed(ctx, 1)) // never goes back
	is.NoErr(s.SaveEventSeq(ctx, 4097))
	is.NoErr(s.SaveCompletion(ctx, storetest.At(6000000999)))
	is.NoErr(s.Close())

	again := leader(t, url, leagueID, "host-b:2")
	sv, err = again.Load(ctx)
	is.NoErr(err)
	utc := func(a league.AgentRecord) league.AgentRecord { a.RegisteredAt = a.RegisteredAt.UTC(); return a }
	r1.ReportedAt = r1.ReportedAt.UTC()
	want := league.Saved{
		League:      testLeague(leagueID),
		State:       league.StateCompleted,
		ClosedRound: 2,
		StartedAt:   storetest.At(2000000001),
		CompletedAt: storetest.At(6000000999),
		Agents:      []league.AgentRecord{utc(ref), p1, p2},
		Rounds:      rounds,
		Assignments: map[string][]string{"R1M1": {"REF01"}},
		Results:     []league.ResultRecord{r2, r1},
		EventSeq:    4097,
	}
	is.Equal(sv.League, want.League) // seed, scoring, creation time
	is.Equal(sv.League.Seed, uint64(math.MaxUint64))
	is.Equal(sv.Agents, want.Agents) // token hashes and nonces or nil, capacities, tickets, times in UTC to the nanosecond
	is.Equal(sv.Rounds, want.Rounds)
	is.Equal(sv.Assignments, want.Assignments)
	is.Equal(sv.Results, want.Results) // in counted order; drawn number or none, technical losses or nil
	is.Equal(*sv, want)                // all of it

	r, err := postgres.OpenReader(ctx, url, leagueID) // as export does
	is.NoErr(err)
	defer r.Close()
	sv, err = r.Load(ctx)
	is.NoErr(err)
	is.Equal(*sv, want)
	is.True(errors.Is(r.SaveRoundClosed(ctx, 3), postgres.ErrReadOnly)) // a reader never writes
	is.True(errors.Is(r.Lead(ctx, nil), postgres.ErrReadOnly))
}

func TestAgents(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	url := pgtest.Database(t)
	s := leader(t, url, leagueID, "host-a:1")
	is.NoErr(s.CreateLeague(ctx, testLeague(leagueID)))
	p1 := storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(1))
	is.NoErr(s.SaveAgent(ctx, p1))
	sameID := storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(2))
	sameID.Endpoint = "http://agents.invalid/other"
	is.True(s.SaveAgent(ctx, sameID) != nil) // id taken
	sameEndpoint := storetest.AgentRec("P02", protocol.RolePlayer, 0, storetest.At(3))
	sameEndpoint.Endpoint = p1.Endpoint
	is.True(s.SaveAgent(ctx, sameEndpoint) != nil) // endpoint taken in the role
	ref := storetest.AgentRec("REF01", protocol.RoleReferee, 3, storetest.At(4))
	ref.Endpoint = p1.Endpoint
	is.NoErr(s.SaveAgent(ctx, ref)) // the same endpoint in another role

	p1.TokenHash, p1.TokenNonce, p1.MatchTickets = sha256.Sum256([]byte("new P01")), []byte{1}, true
	is.NoErr(s.SaveRejoin(ctx, "P01", p1.TokenHash, p1.TokenNonce, 0, true))
	ref.TokenHash, ref.Capacity = sha256.Sum256([]byte("new REF01")), 5
	is.NoErr(s.SaveRejoin(ctx, "REF01", ref.TokenHash, nil, 5, false))
	is.True(s.SaveRejoin(ctx, "P99", p1.TokenHash, nil, 0, false) != nil) // not registered

	// Another league's agent of the same id and endpoint is its own.
	other := leader(t, url, "other", "host-a:1")
	is.NoErr(other.CreateLeague(ctx, testLeague("other")))
	is.NoErr(other.SaveAgent(ctx, storetest.AgentRec("P01", protocol.RolePlayer, 0, storetest.At(1))))
	is.True(other.CreateLeague(ctx, testLeague(leagueID)) != nil) // a store writes its own league only

	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.Agents, []league.AgentRecord{p1, ref}) // in registration order, rejoins kept, nothing else recorded
}

// TestEventSeqWithoutLeague: the bound of the event numbers is a
// league's, refused without one; the rest of what it does is the store
// suite's (storetest, testEventSeq).
func TestEventSeqWithoutLeague(t *testing.T) {
	is := is.New(t)
	s := leader(t, pgtest.Database(t), leagueID, "host-a:1")
	is.True(s.SaveEventSeq(testCtx(t), 1) != nil) // no league
}

func TestTokenKey(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	url := pgtest.Database(t)
	s := open(t, url, leagueID, "host-a:1")
	_, _, err := s.TokenKey(ctx, []byte("fresh key 1"))
	is.True(errors.Is(err, postgres.ErrNotLeader)) // keeping one is a write
	is.NoErr(s.Lead(ctx, nil))
	key, created, err := s.TokenKey(ctx, []byte("fresh key 1"))
	is.NoErr(err)
	is.True(created)
	is.Equal(key, []byte("fresh key 1"))
	key, created, err = s.TokenKey(ctx, []byte("fresh key 2"))
	is.NoErr(err)
	is.True(!created)
	is.Equal(key, []byte("fresh key 1")) // the one kept
	is.NoErr(s.Close())

	b := leader(t, url, leagueID, "host-b:2")
	key, created, err = b.TokenKey(ctx, []byte("fresh key 3"))
	is.NoErr(err)
	is.True(!created)
	is.Equal(key, []byte("fresh key 1")) // the next leader's too
	o := leader(t, url, "other", "host-b:2")
	key, created, err = o.TokenKey(ctx, []byte("other key"))
	is.NoErr(err)
	is.True(created)
	is.Equal(key, []byte("other key")) // each league its own
}

// queryInt is one number the database at url answers, on a connection
// of its own, closed at once: tests poll with it.
func queryInt(t testing.TB, url, sql string, args ...any) int64 {
	t.Helper()
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOpenWithoutCreateRight: a database at this build's schema is only
// read at start: a role that may read and write the tables, and create
// nothing (PostgreSQL 15's default for other roles than the owner), runs
// a manager on it.
func TestOpenWithoutCreateRight(t *testing.T) {
	is := is.New(t)
	ctx := testCtx(t)
	url := pgtest.Database(t)
	is.NoErr(leader(t, url, leagueID, "host-a:1").Close()) // the owner makes the schema
	admin := pgtest.Connect(t, url)
	var role string
	is.NoErr(admin.QueryRow(ctx, `SELECT 'dml_' || current_database()`).Scan(&role))
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
		`GRANT USAGE ON SCHEMA public TO ` + role,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ` + role,
		`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ` + role,
	} {
		_, err := admin.Exec(ctx, q)
		is.NoErr(err) // q
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), `DROP OWNED BY `+role)
		_, _ = admin.Exec(context.Background(), `DROP ROLE `+role)
	})
	cfg, err := pgx.ParseConfig(url)
	is.NoErr(err)
	dml := strings.Replace(url, "//"+cfg.User+"@", "//"+role+"@", 1)
	s := leader(t, dml, leagueID, "host-b:2")
	is.NoErr(s.CreateLeague(ctx, testLeague(leagueID))) // and it writes
	sv, err := s.Load(ctx)
	is.NoErr(err)
	is.Equal(sv.League.LeagueID, leagueID)
}
