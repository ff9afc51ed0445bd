package protocol_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// absent, as the value of an edit, deletes the field.
type absent struct{}

// edit sets the field at path (dots between keys, numbers for array
// indexes: "matches.0.game_type") to value, or deletes it.
type edit struct {
	path  string
	value any
}

func set(path string, value any) edit { return edit{path, value} }
func drop(path string) edit           { return edit{path, absent{}} }

// variant is a valid message of the type with edits made to it: refused
// with code and exactly these field reasons, or accepted when code is "".
type variant struct {
	name   string
	edits  []edit
	code   protocol.Code
	fields []string
}

const e002, e010, e018 = protocol.ErrInvalidMessageFormat, protocol.ErrInvalidMove, protocol.ErrInvalidEndpoint

// TestEveryTypeRefuses: each check of each message type's body refuses a
// message that breaks only that check, with the check's code and field.
// Without it, emptying a type's check method went unnoticed for most
// types; every type must appear here, and a valid message of the type must
// pass, so no refusal is owed to a broken baseline.
func TestEveryTypeRefuses(t *testing.T) {
	const (
		endpoint = "http://127.0.0.1:8101/mcp"
		ts       = "2025-01-15T10:30:00Z"
	)
	types := []struct {
		typ    protocol.MessageType
		sender string
		body   string // the valid message without its envelope
		cases  []variant
	}{
		{typ: protocol.TypeRefereeRegisterRequest, sender: "referee:pending",
			body: `{"referee_meta":{"display_name":"Ref","version":"1.0","game_types":["even_odd"],"contact_endpoint":"` + endpoint + `","max_concurrent_matches":2}}`,
			cases: []variant{
				{"referee_meta missing", []edit{drop("referee_meta")}, e002, []string{"referee_meta"}},
				{"display_name missing", []edit{drop("referee_meta.display_name")}, e002, []string{"referee_meta.display_name"}},
				{"display_name blank", []edit{set("referee_meta.display_name", "  ")}, e002, []string{"referee_meta.display_name"}},
				{"display_name of 128 bytes", []edit{set("referee_meta.display_name", strings.Repeat("é", 64))}, "", nil},
				{"display_name of 129 bytes", []edit{set("referee_meta.display_name", strings.Repeat("é", 64)+"x")}, e002, []string{"referee_meta.display_name"}},
				{"contact_endpoint of 2,048 bytes", []edit{set("referee_meta.contact_endpoint", "http://h/"+strings.Repeat("p", 2048-9))}, "", nil},
				{"contact_endpoint of 2,049 bytes", []edit{set("referee_meta.contact_endpoint", "http://h/"+strings.Repeat("p", 2049-9))}, e018, []string{"referee_meta.contact_endpoint"}},
				{"version missing", []edit{drop("referee_meta.version")}, e002, []string{"referee_meta.version"}},
				{"game_types empty", []edit{set("referee_meta.game_types", []any{})}, e002, []string{"referee_meta.game_types"}},
				{"contact_endpoint missing", []edit{drop("referee_meta.contact_endpoint")}, e002, []string{"referee_meta.contact_endpoint"}},
				{"contact_endpoint not a URL", []edit{set("referee_meta.contact_endpoint", "localhost:8101/mcp")}, e018, []string{"referee_meta.contact_endpoint"}},
				{"max_concurrent_matches 0", []edit{set("referee_meta.max_concurrent_matches", 0)}, e002, []string{"referee_meta.max_concurrent_matches"}},
			}},
		{typ: protocol.TypeLeagueRegisterRequest, sender: "player:pending",
			body: `{"player_meta":{"display_name":"Alice","version":"1.0","game_types":["even_odd"],"contact_endpoint":"` + endpoint + `"}}`,
			cases: []variant{
				{"without version", []edit{drop("player_meta.version")}, "", nil},
				{"player_meta missing", []edit{drop("player_meta")}, e002, []string{"player_meta"}},
				{"display_name missing", []edit{drop("player_meta.display_name")}, e002, []string{"player_meta.display_name"}},
				{"display_name of 128 bytes", []edit{set("player_meta.display_name", strings.Repeat("n", 128))}, "", nil},
				{"display_name of 600 kB", []edit{set("player_meta.display_name", strings.Repeat("n", 600_000))}, e002, []string{"player_meta.display_name"}},
				{"game_types missing", []edit{drop("player_meta.game_types")}, e002, []string{"player_meta.game_types"}},
				{"contact_endpoint missing", []edit{drop("player_meta.contact_endpoint")}, e002, []string{"player_meta.contact_endpoint"}},
				{"contact_endpoint ftp", []edit{set("player_meta.contact_endpoint", "ftp://host/mcp")}, e018, []string{"player_meta.contact_endpoint"}},
			}},
		{typ: protocol.TypeRefereeRegisterResponse, sender: "league_manager:LM01",
			body: `{"status":"ACCEPTED","referee_id":"REF01","reason":null}`,
			cases: []variant{
				{"rejected without an id", []edit{set("status", "REJECTED"), drop("referee_id"), set("reason", "full")}, "", nil},
				{"status missing", []edit{drop("status")}, e002, []string{"status"}},
				{"status unknown", []edit{set("status", "OK")}, e002, []string{"status"}},
				{"accepted without referee_id", []edit{drop("referee_id")}, e002, []string{"referee_id"}},
				{"referee_id malformed", []edit{set("referee_id", "REF 01")}, e002, []string{"referee_id"}},
			}},
		{typ: protocol.TypeLeagueRegisterResponse, sender: "league_manager:LM01",
			body: `{"status":"ACCEPTED","player_id":"P01","reason":null}`,
			cases: []variant{
				{"rejected without an id", []edit{set("status", "REJECTED"), drop("player_id")}, "", nil},
				{"status missing", []edit{drop("status")}, e002, []string{"status"}},
				{"status lower case", []edit{set("status", "accepted")}, e002, []string{"status"}},
				{"accepted without player_id", []edit{drop("player_id")}, e002, []string{"player_id"}},
				{"player_id malformed", []edit{set("player_id", "P/01")}, e002, []string{"player_id"}},
			}},
		{typ: protocol.TypeRoundAnnouncement, sender: "league_manager:LM01",
			body: `{"round_id":1,"matches":[{"match_id":"R1M1","game_type":"even_odd","player_A_id":"P01","player_B_id":"P02","referee_endpoint":"` + endpoint + `"}]}`,
			cases: []variant{
				{"round_id missing", []edit{drop("round_id")}, e002, []string{"round_id"}},
				{"round_id 0", []edit{set("round_id", 0)}, e002, []string{"round_id"}},
				{"matches missing", []edit{drop("matches")}, e002, []string{"matches"}},
				{"match_id missing", []edit{drop("matches.0.match_id")}, e002, []string{"matches[0].match_id"}},
				{"player_A_id missing", []edit{drop("matches.0.player_A_id")}, e002, []string{"matches[0].player_A_id"}},
				{"player_B_id malformed", []edit{set("matches.0.player_B_id", "P 02")}, e002, []string{"matches[0].player_B_id"}},
				{"game_type unknown", []edit{set("matches.0.game_type", "chess")}, e002, []string{"matches[0].game_type"}},
				{"referee_endpoint not a URL", []edit{set("matches.0.referee_endpoint", "nowhere")}, e018, []string{"matches[0].referee_endpoint"}},
			}},
		{typ: protocol.TypeRoundCompleted, sender: "league_manager:LM01",
			body: `{"round_id":1,"matches_completed":2,"next_round_id":2}`,
			cases: []variant{
				{"last round", []edit{set("next_round_id", nil)}, "", nil},
				{"round_id 0", []edit{set("round_id", 0)}, e002, []string{"round_id"}},
				{"matches_completed negative", []edit{set("matches_completed", -1)}, e002, []string{"matches_completed"}},
				{"next_round_id not after round_id", []edit{set("next_round_id", 1)}, e002, []string{"next_round_id"}},
			}},
		{typ: protocol.TypeLeagueCompleted, sender: "league_manager:LM01",
			body: `{"total_rounds":3,"total_matches":6,"champion":{"player_id":"P01","display_name":"Alice","points":9},` +
				`"final_standings":[{"rank":1,"player_id":"P01","played":3,"wins":3,"draws":0,"losses":0,"technical_losses":0,"points":9}]}`,
			cases: []variant{
				{"total_rounds negative", []edit{set("total_rounds", -1)}, e002, []string{"total_rounds"}},
				{"total_matches negative", []edit{set("total_matches", -1)}, e002, []string{"total_matches"}},
				{"champion missing", []edit{drop("champion")}, e002, []string{"champion"}},
				{"champion without player_id", []edit{drop("champion.player_id")}, e002, []string{"champion.player_id"}},
				{"final_standings missing", []edit{drop("final_standings")}, e002, []string{"final_standings"}},
				{"row without player_id", []edit{drop("final_standings.0.player_id")}, e002, []string{"final_standings[0].player_id"}},
				{"row with negative wins", []edit{set("final_standings.0.wins", -1)}, e002, []string{"final_standings[0]"}},
			}},
		{typ: protocol.TypeGameInvitation, sender: "referee:REF01",
			body: `{"round_id":1,"match_id":"R1M1","game_type":"even_odd","role_in_match":"PLAYER_A","player_id":"P01","opponent_id":"P02"}`,
			cases: []variant{
				{"round_id 0", []edit{set("round_id", 0)}, e002, []string{"round_id"}},
				{"match_id missing", []edit{drop("match_id")}, e002, []string{"match_id"}},
				{"opponent_id missing", []edit{drop("opponent_id")}, e002, []string{"opponent_id"}},
				{"game_type unknown", []edit{set("game_type", "EVEN_ODD")}, e002, []string{"game_type"}},
				{"role_in_match unknown", []edit{set("role_in_match", "PLAYER_C")}, e002, []string{"role_in_match"}},
				{"player_id malformed", []edit{set("player_id", "P 01")}, e002, []string{"player_id"}},
			}},
		{typ: protocol.TypeGameJoinAck, sender: "player:P01",
			body: `{"match_id":"R1M1","player_id":"P01","arrival_timestamp":"` + ts + `","accept":true}`,
			cases: []variant{
				{"status instead of accept", []edit{drop("accept"), set("status", "READY")}, "", nil},
				{"match_id missing", []edit{drop("match_id")}, e002, []string{"match_id"}},
				{"player_id missing", []edit{drop("player_id")}, e002, []string{"player_id"}},
				{"neither accept nor status", []edit{drop("accept")}, e002, []string{"accept"}},
				{"arrival_timestamp not UTC", []edit{set("arrival_timestamp", "2025-01-15T10:30:00+02:00")}, e002, []string{"arrival_timestamp"}},
			}},
		{typ: protocol.TypeChooseParityCall, sender: "referee:REF01",
			body: `{"match_id":"R1M1","player_id":"P01","game_type":"even_odd","context":{"opponent_id":"P02","round_id":1},"deadline":"` + ts + `"}`,
			cases: []variant{
				{"match_id missing", []edit{drop("match_id")}, e002, []string{"match_id"}},
				{"player_id missing", []edit{drop("player_id")}, e002, []string{"player_id"}},
				{"game_type unknown", []edit{set("game_type", "chess")}, e002, []string{"game_type"}},
				{"deadline malformed", []edit{set("deadline", "tomorrow")}, e002, []string{"deadline"}},
			}},
		{typ: protocol.TypeChooseParityResponse, sender: "player:P01",
			body: `{"match_id":"R1M1","player_id":"P01","parity_choice":"odd"}`,
			cases: []variant{
				{"match_id missing", []edit{drop("match_id")}, e002, []string{"match_id"}},
				{"player_id malformed", []edit{set("player_id", "P:01")}, e002, []string{"player_id"}},
				{"parity_choice missing", []edit{drop("parity_choice")}, e010, []string{"parity_choice"}},
				{"parity_choice upper case", []edit{set("parity_choice", "ODD")}, e010, []string{"parity_choice"}},
			}},
		{typ: protocol.TypeGameOver, sender: "referee:REF01",
			body: `{"match_id":"R1M1","game_type":"even_odd","game_result":{"status":"WIN","winner_player_id":"P01",` +
				`"drawn_number":8,"number_parity":"even","choices":{"P01":"even","P02":"odd"}}}`,
			cases: []variant{
				{"protocol-v2 form", []edit{drop("game_result"), set("winner", "P01"),
					set("details", map[string]any{"drawn_number": 8, "parity": "even"})}, "", nil},
				{"match_id missing", []edit{drop("match_id")}, e002, []string{"match_id"}},
				{"game_type unknown", []edit{set("game_type", "chess")}, e002, []string{"game_type"}},
				{"no result in either form", []edit{drop("game_result")}, e002, []string{"game_result"}},
				{"status missing", []edit{drop("game_result.status")}, e002, []string{"game_result.status"}},
				{"status unknown", []edit{set("game_result.status", "VICTORY")}, e002, []string{"game_result.status"}},
				// No document bounds the drawn number (our referee draws 1 to
				// 10; another may draw 0 to 9 or 1 to 100): any integer goes.
				{"drawn_number 0", []edit{set("game_result.drawn_number", 0)}, "", nil},
				{"drawn_number 42", []edit{set("game_result.drawn_number", 42)}, "", nil},
				{"drawn_number -3", []edit{set("game_result.drawn_number", -3)}, "", nil},
				{"number_parity unknown", []edit{set("game_result.number_parity", "Even")}, e002, []string{"game_result.number_parity"}},
				{"details drawn_number 11", []edit{drop("game_result"), set("winner", "P01"),
					set("details", map[string]any{"drawn_number": 11})}, "", nil},
				{"details parity unknown", []edit{drop("game_result"), set("winner", "P01"),
					set("details", map[string]any{"parity": "ODD"})}, e002, []string{"details.parity"}},
				{"details technical loss without a player", []edit{drop("game_result"), set("winner", "P02"),
					set("details", map[string]any{"technical_losses": []any{map[string]any{"error_code": "E001", "reason": "late"}}})},
					e002, []string{"details.technical_losses[0].player_id"}},
				{"details technical loss with a bad code", []edit{drop("game_result"), set("winner", "P02"),
					set("details", map[string]any{"technical_losses": []any{map[string]any{"player_id": "P01", "error_code": "timeout", "reason": "late"}}})},
					e002, []string{"details.technical_losses[0].error_code"}},
			}},
		{typ: protocol.TypeMatchResultReport, sender: "referee:REF01",
			body: `{"round_id":1,"match_id":"R1M1","game_type":"even_odd","result":{"winner":"P01","score":{"P01":3,"P02":0},` +
				`"player_a_status":"WIN","player_b_status":"LOSS","details":{"drawn_number":8,"parity":"even"}}}`,
			cases: []variant{
				{"a draw", []edit{set("result.winner", "DRAW"), set("result.player_a_status", "DRAW"), set("result.player_b_status", "DRAW")}, "", nil},
				{"round_id 0", []edit{set("round_id", 0)}, e002, []string{"round_id"}},
				{"match_id missing", []edit{drop("match_id")}, e002, []string{"match_id"}},
				{"game_type unknown", []edit{set("game_type", "chess")}, e002, []string{"game_type"}},
				{"result missing", []edit{drop("result")}, e002, []string{"result"}},
				{"winner malformed", []edit{set("result.winner", "P 01")}, e002, []string{"result.winner"}},
				{"player_a_status unknown", []edit{set("result.player_a_status", "WON")}, e002, []string{"result.player_a_status"}},
				{"player_b_status unknown", []edit{set("result.player_b_status", "lost")}, e002, []string{"result.player_b_status"}},
				{"details drawn_number 0", []edit{set("result.details.drawn_number", 0)}, "", nil},
				{"details drawn_number 100", []edit{set("result.details.drawn_number", 100)}, "", nil},
				{"details parity unknown", []edit{set("result.details.parity", "none")}, e002, []string{"result.details.parity"}},
			}},
		{typ: protocol.TypeLeagueStandingsUpdate, sender: "league_manager:LM01",
			body: `{"round_id":1,"standings":[{"rank":1,"player_id":"P01","played":1,"wins":1,"draws":0,"losses":0,"technical_losses":0,"points":3}]}`,
			cases: []variant{
				{"round_id 0", []edit{set("round_id", 0)}, e002, []string{"round_id"}},
				{"standings missing", []edit{drop("standings")}, e002, []string{"standings"}},
				{"row without player_id", []edit{drop("standings.0.player_id")}, e002, []string{"standings[0].player_id"}},
				{"row with negative losses", []edit{set("standings.0.losses", -1)}, e002, []string{"standings[0]"}},
			}},
		{typ: protocol.TypeLeagueError, sender: "league_manager:LM01",
			body: `{"error_code":"E004","error_description":"not registered","original_message_type":"LEAGUE_QUERY"}`,
			cases: []variant{
				{"error_code missing", []edit{drop("error_code")}, e002, []string{"error_code"}},
				{"error_code not an E-number", []edit{set("error_code", "AGENT_NOT_REGISTERED")}, e002, []string{"error_code"}},
			}},
		{typ: protocol.TypeGameError, sender: "referee:REF01",
			body: `{"match_id":"R1M1","error_code":"E001","error_description":"timeout","affected_player":"P01",` +
				`"retry_info":{"retry_count":1,"max_retries":3,"next_retry_at":"` + ts + `"}}`,
			cases: []variant{
				{"match_id missing", []edit{drop("match_id")}, e002, []string{"match_id"}},
				{"error_code missing", []edit{drop("error_code")}, e002, []string{"error_code"}},
				{"error_code not an E-number", []edit{set("error_code", "E1x")}, e002, []string{"error_code"}},
				{"affected_player malformed", []edit{set("affected_player", "P 01")}, e002, []string{"affected_player"}},
				{"next_retry_at malformed", []edit{set("retry_info.next_retry_at", "soon")}, e002, []string{"retry_info.next_retry_at"}},
			}},
		{typ: protocol.TypeLeagueQuery, sender: "player:P01",
			body: `{"query_type":"GET_PLAYER_STATS","query_params":{"player_id":"P01"}}`,
			cases: []variant{
				{"query_type missing", []edit{drop("query_type")}, e002, []string{"query_type"}},
				{"query_type unknown", []edit{set("query_type", "GET_EVERYTHING")}, e002, []string{"query_type"}},
				{"query player_id malformed", []edit{set("query_params.player_id", "P 01")}, e002, []string{"query_params.player_id"}},
			}},
		{typ: protocol.TypeLeagueQueryResponse, sender: "league_manager:LM01",
			body: `{"query_type":"GET_STANDINGS","success":true,"data":{"standings":[]}}`,
			cases: []variant{
				{"query_type missing", []edit{drop("query_type")}, e002, []string{"query_type"}},
				{"query_type blank", []edit{set("query_type", " ")}, e002, []string{"query_type"}},
			}},
		{typ: protocol.TypeStartMatch, sender: "league_manager:LM01",
			body: `{"match_id":"R1M1","round_id":1,"game_type":"even_odd","player_a_id":"P01","player_b_id":"P02",` +
				`"player_a_endpoint":"http://127.0.0.1:8101/mcp","player_b_endpoint":"http://127.0.0.1:8102/mcp","league_manager_endpoint":"http://127.0.0.1:8000/mcp"}`,
			cases: []variant{
				{"dialect-b spelling", []edit{drop("player_a_id"), drop("player_b_id"), set("player_A_id", "P01"), set("player_B_id", "P02")}, "", nil},
				{"match_id missing", []edit{drop("match_id")}, e002, []string{"match_id"}},
				{"round_id 0", []edit{set("round_id", 0)}, e002, []string{"round_id"}},
				{"game_type unknown", []edit{set("game_type", "chess")}, e002, []string{"game_type"}},
				{"player_a_id missing", []edit{drop("player_a_id")}, e002, []string{"player_a_id"}},
				{"player_b_id missing", []edit{drop("player_b_id")}, e002, []string{"player_b_id"}},
				{"one player twice", []edit{set("player_b_id", "P01")}, e002, []string{"player_b_id"}},
				{"player_a_endpoint not a URL", []edit{set("player_a_endpoint", "127.0.0.1:8101")}, e018, []string{"player_a_endpoint"}},
				{"player_b_endpoint not a URL", []edit{set("player_b_endpoint", "tcp://x")}, e018, []string{"player_b_endpoint"}},
				{"league_manager_endpoint not a URL", []edit{set("league_manager_endpoint", "http:///mcp")}, e018, []string{"league_manager_endpoint"}},
			}},
		{typ: protocol.TypeStartMatchAck, sender: "referee:REF01",
			body: `{"match_id":"R1M1","status":"ACCEPTED"}`,
			cases: []variant{
				{"status missing", []edit{drop("status")}, e002, []string{"status"}},
				{"match_id malformed", []edit{set("match_id", "R1 M1")}, e002, []string{"match_id"}},
			}},
		{typ: protocol.TypeMatchResultReportAck, sender: "league_manager:LM01",
			body: `{"match_id":"R1M1","status":"DUPLICATE","message":"already recorded"}`,
			cases: []variant{
				{"status missing", []edit{drop("status")}, e002, []string{"status"}},
				{"status blank", []edit{set("status", "")}, e002, []string{"status"}},
				{"match_id malformed", []edit{set("match_id", "R1#M1")}, e002, []string{"match_id"}},
			}},
	}

	covered := make(map[protocol.MessageType]bool)
	for _, tc := range types {
		refusals := 0
		for _, c := range tc.cases {
			if c.code != "" {
				refusals++
			}
		}
		if refusals == 0 {
			t.Errorf("%s: no case is refused", tc.typ)
		}
		covered[tc.typ] = true
		valid := append([]variant{{name: "valid"}}, tc.cases...)
		for _, c := range valid {
			t.Run(string(tc.typ)+"/"+c.name, func(t *testing.T) {
				is := is.New(t)
				params := withEnvelope(t, tc.typ, tc.sender, tc.body, c.edits)
				m, err := protocol.DecodeMessage(tc.typ, params)
				is.NoErr(err) // every case decodes: only the checks refuse
				err = protocol.Validate(m)
				if c.code == "" {
					is.NoErr(err) // a valid message passes
					return
				}
				is.True(err != nil) // the message must be refused
				is.Equal(protocol.CodeOf(err), c.code)
				var fields []string
				for _, f := range err.(*protocol.Error).Fields {
					fields = append(fields, f.Field)
					is.True(f.Reason != "") // every problem has a reason
				}
				is.Equal(fields, c.fields)
			})
		}
	}
	for _, typ := range protocol.MessageTypes() {
		if !covered[typ] {
			t.Errorf("%s has no cases in TestEveryTypeRefuses", typ)
		}
	}
}

// withEnvelope is body with a full envelope from sender, and the edits made.
func withEnvelope(t *testing.T, typ protocol.MessageType, sender, body string, edits []edit) jsontext.Value {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%s: body: %v", typ, err)
	}
	m["protocol"] = protocol.Version
	m["message_type"] = string(typ)
	m["sender"] = sender
	m["timestamp"] = "2025-01-15T10:30:00Z"
	m["conversation_id"] = "conv-1"
	for _, e := range edits {
		if err := apply(m, e); err != nil {
			t.Fatalf("%s: edit %s: %v", typ, e.path, err)
		}
	}
	out, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// apply makes one edit to a decoded JSON object.
func apply(root map[string]any, e edit) error {
	keys := strings.Split(e.path, ".")
	var at any = root
	for _, k := range keys[:len(keys)-1] {
		switch v := at.(type) {
		case map[string]any:
			at = v[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(v) {
				return errNoPath
			}
			at = v[i]
		default:
			return errNoPath
		}
	}
	obj, ok := at.(map[string]any)
	if !ok {
		return errNoPath
	}
	last := keys[len(keys)-1]
	if _, del := e.value.(absent); del {
		if _, ok := obj[last]; !ok {
			return errNoPath // a drop of nothing would test nothing
		}
		delete(obj, last)
		return nil
	}
	obj[last] = e.value
	return nil
}

var errNoPath = errors.New("no such field in the message")
