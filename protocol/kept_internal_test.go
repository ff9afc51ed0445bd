package protocol

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/mutate"
)

// unkept is m with its kept tables decoded into their fields, as full
// decoding would have left it.
func unkept(m Message) Message {
	switch m := m.(type) {
	case *LeagueStandingsUpdate:
		c := *m
		c.Standings, c.standings = m.Rows(), kept{}
		return &c
	case *RoundAnnouncement:
		c := *m
		c.Matches, c.matches = m.AllMatches(), kept{}
		return &c
	}
	return m
}

// keptBytes is the table m keeps unread, nil for none.
func keptBytes(m Message) []byte {
	switch m := m.(type) {
	case *LeagueStandingsUpdate:
		return m.standings.raw
	case *RoundAnnouncement:
		return m.matches.raw
	}
	return nil
}

// sameHeld checks that a message read through a TableCache after an
// earlier one (first) that kept its table kept it too, from the cache: the
// same bytes, not a copy.
func sameHeld(t *testing.T, data []byte, first, again Message) {
	t.Helper()
	if a, b := keptBytes(first), keptBytes(again); a != nil && (b == nil || &a[0] != &b[0]) {
		t.Fatalf("a table held in a TableCache was not found again on\n%s", data)
	}
}

// sameKept checks a message decoded keeping its tables unread against the
// same params decoded in full: the same message once its tables are read,
// the same verdict of validation, the same bytes when encoded again.
func sameKept(t *testing.T, data []byte, full, kept Message) {
	t.Helper()
	switch {
	case kept == nil && full == nil:
		return
	case kept == nil || full == nil:
		t.Fatalf("decoded in full: %T, keeping tables: %T, on\n%s", full, kept, data)
	case !reflect.DeepEqual(unkept(kept), full):
		t.Fatalf("keeping tables decodes differently on\n%s\nkept %#v\nfull %#v", data, unkept(kept), full)
	}
	if ferr, kerr := Validate(full), Validate(kept); fmt.Sprint(ferr) != fmt.Sprint(kerr) {
		t.Fatalf("validation differs on\n%s\nkept: %v\nfull: %v", data, kerr, ferr)
	}
	fb, ferr := AppendJSON(nil, full)
	kb, kerr := AppendJSON(nil, kept)
	if !bytes.Equal(fb, kb) || (ferr == nil) != (kerr == nil) {
		t.Fatalf("encoded again differently on\n%s\nkept: %s (%v)\nfull: %s (%v)", data, kb, kerr, fb, ferr)
	}
}

// keptStandings is a LEAGUE_STANDINGS_UPDATE request of n rows, row bad
// (if in range) with an invalid player_id.
func keptStandings(n, bad int) []byte {
	rows := make([]StandingRow, n)
	for i := range rows {
		rows[i] = StandingRow{Rank: i + 1, PlayerID: "P" + strconv.Itoa(i+1), DisplayName: "Player " + strconv.Itoa(i+1),
			Played: 3, Wins: 1, Draws: 1, Losses: 1, Points: 4}
	}
	if bad >= 0 && bad < n {
		rows[bad].PlayerID = "not an id"
	}
	params, err := Marshal(&LeagueStandingsUpdate{Envelope: Envelope{Protocol: Version, MessageType: TypeLeagueStandingsUpdate,
		Sender: "league_manager:LM01", Timestamp: "2026-11-21T05:29:41Z", LeagueID: "league_2025_even_odd", AuthToken: "tok"},
		RoundID: 2, Standings: rows})
	if err != nil {
		panic(err)
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"LEAGUE_STANDINGS_UPDATE","params":%s,"id":7}`, params)
}

// TestKeptTables: a player's standings and round announcement are kept
// unread, as the same requests decoded in full, in a batch too; a table
// with a bad row is decoded in full, for validation to name the row.
func TestKeptTables(t *testing.T) {
	is := is.New(t)
	keep := Reading{KeepTables: true}

	body := keptStandings(64, -1)
	in, ok := keep.Request(body)
	is.True(ok)
	su := in.Decoded.(*LeagueStandingsUpdate)
	is.True(su.Standings == nil) // kept
	is.Equal(su.standings.n, 64)
	is.Equal(len(su.Rows()), 64)
	is.Equal(su.Rows()[63].PlayerID, "P64")
	full, _ := DecodeRequest(body)
	sameKept(t, body, full.Decoded, in.Decoded)
	is.NoErr(Validate(su))

	// Its strings are its own, not the body's: the body is a buffer used again.
	rows := su.Rows()
	for i := range body {
		body[i] = 'x'
	}
	is.Equal(su.Rows(), rows)
	is.Equal(rows[0].PlayerID, "P1")

	bad := keptStandings(3, 1)
	in, _ = keep.Request(bad)
	su = in.Decoded.(*LeagueStandingsUpdate)
	is.Equal(len(su.Standings), 3) // decoded in full
	err := Validate(su)
	is.True(err != nil)
	is.Equal(err.(*Error).Fields[0].Field, "standings[1].player_id")

	announce := `{"jsonrpc":"2.0","method":"ROUND_ANNOUNCEMENT","params":{"protocol":"league.v2","message_type":"ROUND_ANNOUNCEMENT",` +
		`"sender":"league_manager:LM01","timestamp":"2026-11-21T05:29:41Z","league_id":"L","auth_token":"tok","round_id":1,` +
		`"matches":[{"match_id":"R1M1","game_type":"even_odd","player_A_id":"P1","player_B_id":"P2","referee_endpoint":"http://127.0.0.1:8001/mcp"},` +
		`{"match_id":"R1M2","game_type":"even_odd","player_A_id":"P3","player_B_id":"P4","referee_endpoint":"http://127.0.0.1:8001/mcp"}]},"id":8}`
	batch := []byte("[" + string(keptStandings(4, -1)) + "," + announce + "]")
	items, isBatch := keep.Requests(batch)
	is.True(isBatch)
	is.Equal(len(items), 2)
	fullItems, _ := DecodeRequests(batch)
	for i := range items {
		sameKept(t, batch, fullItems[i].Decoded, items[i].Decoded)
	}
	ra := items[1].Decoded.(*RoundAnnouncement)
	is.True(ra.Matches == nil)
	is.Equal(ra.MatchCount(), 2)
	is.Equal(ra.AllMatches()[1].MatchID, "R1M2")

	// Not a table it takes as it is: null, a null row, a row json would
	// refuse, a missing table; each decoded in full, as without keeping.
	for _, params := range []string{
		`{"round_id":1,"standings":null}`, `{"round_id":1,"standings":[null]}`, `{"round_id":1,"standings":[{"player_id":1}]}`,
		`{"round_id":1}`, `{"round_id":1,"standings":[]}`, `{"round_id":1,"standings":[{"player_id":"P\u0031"}]}`,
		`{"round_id":1,"standings":[{"player_id":"P1","wins":-1}]}`, `{"round_id":1,"standings":{}}`,
	} {
		sameRequest(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"LEAGUE_STANDINGS_UPDATE","params":%s,"id":1}`, params))
		sameRequest(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"ROUND_ANNOUNCEMENT","params":%s,"id":1}`,
			bytes.ReplaceAll([]byte(params), []byte("standings"), []byte("matches"))))
	}
}

// FuzzKeptTables: whatever params a player is sent as its standings or a
// round's matches, keeping the tables unread decodes, validates and encodes
// them as decoding in full does, or leaves them to be decoded in full.
func FuzzKeptTables(f *testing.F) {
	f.Add([]byte(`{"round_id":1,"standings":[{"rank":1,"player_id":"P1","played":1,"wins":1,"draws":0,"losses":0,"technical_losses":0,"points":3}]}`))
	f.Add([]byte(`{"round_id":1,"matches":[{"match_id":"R1M1","game_type":"even_odd","player_A_id":"P1","player_B_id":"P2","referee_endpoint":"http://h:1/mcp"}]}`))
	f.Add([]byte(`{"standings":[{"player_id":"P1"},{"player_id":"P1","player_id":"P2"}],"matches":[]}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		for _, method := range []string{"LEAGUE_STANDINGS_UPDATE", "ROUND_ANNOUNCEMENT", "notify_standings"} {
			sameRequest(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q,"params":%s,"id":1}`, method, params))
		}
	})
}

// TestKeptTableEncodedEverywhere: a message with a kept table encodes as
// the full one does however it is encoded: by json, as a value, inside a
// container (a handler's result), and by its generated encoder.
func TestKeptTableEncodedEverywhere(t *testing.T) {
	is := is.New(t)
	body := keptStandings(2, -1)
	in, _ := Reading{KeepTables: true}.Request(body)
	su := in.Decoded.(*LeagueStandingsUpdate)
	is.True(su.Standings == nil) // kept
	full, _ := DecodeRequest(body)
	want, err := AppendJSON(nil, full.Decoded)
	is.NoErr(err)
	for _, v := range []any{su, *su} {
		got, err := AppendJSON(nil, v)
		is.NoErr(err)
		is.Equal(string(got), string(want))
		got, err = json.Marshal(v, json.Deterministic(true))
		is.NoErr(err)
		is.Equal(string(got), string(want))
	}
	nested, err := AppendJSON(nil, []any{su, map[string]any{"m": *su}})
	is.NoErr(err)
	is.Equal(string(nested), "["+string(want)+`,{"m":`+string(want)+"}]")

	ra := `{"jsonrpc":"2.0","method":"ROUND_ANNOUNCEMENT","params":{"round_id":1,"matches":[{"match_id":"R1M1","player_A_id":"P1","player_B_id":"P2"}]},"id":1}`
	kin, _ := Reading{KeepTables: true}.Request([]byte(ra))
	fin, _ := DecodeRequest([]byte(ra))
	want, _ = AppendJSON(nil, fin.Decoded)
	got, err := json.Marshal([]any{*kin.Decoded.(*RoundAnnouncement)})
	is.NoErr(err)
	is.Equal(string(got), "["+string(want)+"]")
}

// TestKeptTableReplacedByDecoding: decoding again into a message whose
// table was kept replaces the table, by the generated decoder and by json
// (escapes send params to json).
func TestKeptTableReplacedByDecoding(t *testing.T) {
	is := is.New(t)
	for _, again := range []string{
		`{"protocol":"league.v2","round_id":3,"standings":null}`,
		`{"protocol":"league.v2","round_id":3,"standings":null,"sender":"league_manager:LM\u0030"}`, // to json
		`{"round_id":3,"standings":[{"player_id":"P9"}]}`,
	} {
		in, _ := Reading{KeepTables: true}.Request(keptStandings(2, -1))
		su := in.Decoded.(*LeagueStandingsUpdate)
		fresh := &LeagueStandingsUpdate{Envelope: su.Envelope, RoundID: su.RoundID} // the same but for the table
		is.NoErr(DecodeInto([]byte(again), su))
		is.NoErr(DecodeInto([]byte(again), fresh))
		is.Equal(su.Rows(), fresh.Rows())
		is.Equal(fmt.Sprint(Validate(su)), fmt.Sprint(Validate(fresh)))
	}
}

// snapshot renders what decoded requests hold that must not alias their
// body: errors, messages with their tables read, validation verdicts.
func snapshot(items []Incoming) string {
	var b bytes.Buffer
	for _, in := range items {
		fmt.Fprintf(&b, "%v|", in.Err)
		if in.Decoded != nil {
			fmt.Fprintf(&b, "%+v|%v", reflect.ValueOf(unkept(in.Decoded)).Elem().Interface(), Validate(in.Decoded))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestKeptNothingAliasesBody: nothing that reading with KeepTables returns
// (messages, tables, errors, validation) changes when the body is
// overwritten afterwards, as a pooled buffer is: the strings that alias the
// body while a table is checked do not outlive the check.
func TestKeptNothingAliasesBody(t *testing.T) {
	announce := `{"jsonrpc":"2.0","method":"ROUND_ANNOUNCEMENT","params":{"protocol":"league.v2","sender":"league_manager:LM01","round_id":1,` +
		`"matches":[{"match_id":"R1M1","game_type":"even_odd","player_A_id":"P1","player_B_id":"P2","referee_endpoint":"http://127.0.0.1:8001/mcp"},` +
		`{"match_id":"R1M2","player_A_id":"P3","player_B_id":"P4"}]},"id":2}`
	bases := []string{string(keptStandings(3, -1)), string(keptStandings(3, 1)), announce,
		"[" + string(keptStandings(2, -1)) + "," + announce + "]"}
	const alphabet = `{}[],:"\ nul0123456789-eE.tfabxP_` + "\x00\xff"
	r := rand.New(rand.NewPCG(7, 8))
	keep := Reading{KeepTables: true}
	for range 20000 {
		body := []byte(bases[r.IntN(len(bases))])
		body = mutate.Bytes(r, body, alphabet, 2)
		orig := bytes.Clone(body)
		items, _ := keep.Requests(body)
		before := snapshot(items)
		for i := range body {
			body[i] = 'Z'
		}
		if after := snapshot(items); after != before {
			t.Fatalf("what was read changed with its body:\n%s\nbefore %s\nafter  %s", orig, before, after)
		}
	}
}

// held lists the tables c holds, newest first.
func held(c *TableCache) []checkedTable {
	if p := c.tables.Load(); p != nil {
		return *p
	}
	return nil
}

// TestTableCache: recipients sharing a TableCache check a table once and
// share its bytes; a table is found only of the same element type, checked
// at the same nesting, and only if it passed; the cache holds the newest
// tableCacheSize tables.
func TestTableCache(t *testing.T) {
	is := is.New(t)
	tables := NewTableCache()
	shared := Reading{KeepTables: true, Tables: tables}

	// The same table to two recipients, in messages that differ elsewhere.
	first := keptStandings(64, -1)
	second := bytes.Replace(first, []byte(`"auth_token":"tok"`), []byte(`"auth_token":"other"`), 1)
	is.True(!bytes.Equal(first, second))
	a, _ := shared.Request(first)
	is.Equal(len(held(tables)), 1)
	b, _ := shared.Request(second)
	is.Equal(len(held(tables)), 1) // found, not added again
	is.Equal(tables.Found(), int64(1))
	ka, kb := a.Decoded.(*LeagueStandingsUpdate), b.Decoded.(*LeagueStandingsUpdate)
	is.True(ka.Standings == nil && kb.Standings == nil) // both kept
	is.True(&ka.standings.raw[0] == &kb.standings.raw[0])
	is.Equal(cap(kb.standings.raw), len(kb.standings.raw)) // an append copies
	is.Equal(kb.Envelope.AuthToken, "other")
	full, _ := DecodeRequest(second)
	sameKept(t, second, full.Decoded, b.Decoded)
	// Neither body is held: both are buffers used again.
	for i := range first {
		first[i], second[i] = 'x', 'x'
	}
	is.Equal(kb.Rows()[63].PlayerID, "P64")

	// A table that fails its check is not held, and fails again.
	bad := keptStandings(3, 1)
	for range 2 {
		in, _ := shared.Request(bad)
		is.Equal(len(in.Decoded.(*LeagueStandingsUpdate).Standings), 3) // decoded in full
		is.Equal(len(held(tables)), 1)
	}

	// The same bytes as another element type: checked as that type. A row
	// of standings is no match (it has no match_id).
	rows := `[{"player_id":"P1","points":3}]`
	standings := fmt.Sprintf(`{"jsonrpc":"2.0","method":"LEAGUE_STANDINGS_UPDATE","params":{"round_id":1,"standings":%s},"id":1}`, rows)
	announce := fmt.Sprintf(`{"jsonrpc":"2.0","method":"ROUND_ANNOUNCEMENT","params":{"round_id":1,"matches":%s},"id":1}`, rows)
	in, _ := shared.Request([]byte(standings))
	is.True(in.Decoded.(*LeagueStandingsUpdate).Standings == nil) // kept, and held
	is.Equal(len(held(tables)), 2)
	in, _ = shared.Request([]byte(announce))
	ra := in.Decoded.(*RoundAnnouncement)
	is.Equal(len(ra.Matches), 1) // decoded in full, to be refused
	is.True(Validate(ra) != nil)
	sameRequest(t, []byte(announce))

	// The same table one level deeper, in a batch: a row nested to the
	// scanner's limit in a request alone passes it in a batch, where the
	// table is declined and decoded in full (json goes deeper).
	deep := `{"x":` + strings.Repeat("[", maxDepth-4) + strings.Repeat("]", maxDepth-4) + `,"player_id":"P1"}`
	alone := fmt.Sprintf(`{"jsonrpc":"2.0","method":"LEAGUE_STANDINGS_UPDATE","params":{"round_id":1,"standings":[%s]},"id":1}`, deep)
	in, _ = shared.Request([]byte(alone))
	is.True(in.Decoded.(*LeagueStandingsUpdate).Standings == nil) // kept at the limit
	items, _ := shared.Requests([]byte("[" + alone + "]"))
	is.Equal(len(items[0].Decoded.(*LeagueStandingsUpdate).Standings), 1) // one level too deep: decoded in full
	sameBatchKept(t, []byte("["+alone+"]"))

	// The newest tableCacheSize tables.
	for i := range 2 * tableCacheSize {
		in, _ := shared.Request(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"LEAGUE_STANDINGS_UPDATE","params":{"round_id":1,"standings":[{"player_id":"P%d"}]},"id":1}`, i))
		is.True(in.Decoded.(*LeagueStandingsUpdate).Standings == nil)
	}
	h := held(tables)
	is.Equal(len(h), tableCacheSize)
	is.Equal(string(h[0].raw), fmt.Sprintf(`[{"player_id":"P%d"}]`, 2*tableCacheSize-1))
}

// TestTableCacheConcurrent: recipients decoding at once through one
// TableCache (run with -race) each get their message as decoded alone.
func TestTableCacheConcurrent(t *testing.T) {
	tables := NewTableCache()
	bodies := make([][]byte, 12)
	for i := range bodies {
		bodies[i] = keptStandings(8+i%3, -1) // three tables, twelve bodies
		bodies[i] = bytes.Replace(bodies[i], []byte(`"tok"`), fmt.Appendf(nil, `"tok%d"`, i), 1)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 50 {
				body := bodies[(g+k)%len(bodies)]
				in, ok := Reading{KeepTables: true, Tables: tables}.Request(body)
				full, _ := DecodeRequest(body)
				kb, kerr := AppendJSON(nil, in.Decoded)
				fb, ferr := AppendJSON(nil, full.Decoded)
				if !ok || !reflect.DeepEqual(unkept(in.Decoded), full.Decoded) || fmt.Sprint(Validate(in.Decoded)) != fmt.Sprint(Validate(full.Decoded)) ||
					!bytes.Equal(kb, fb) || kerr != nil || ferr != nil {
					t.Errorf("decoded through a shared TableCache differently:\n%s", body)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := len(held(tables)); n != 3 {
		t.Errorf("the cache holds %d tables, want 3", n)
	}
}
