package protocol_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

const envelopeFields = `"protocol":"league.v2","sender":"referee:REF01","timestamp":"2025-01-15T10:30:00Z","conversation_id":"c1"`

func TestValidateReasons(t *testing.T) {
	cases := []struct {
		name   string
		typ    protocol.MessageType
		params string
		body   bool // validate as MCP arguments (envelope optional)
		code   protocol.Code
		fields []string // field-level reasons expected, in order
	}{
		{name: "valid invitation", typ: protocol.TypeGameInvitation,
			params: `{` + envelopeFields + `,"round_id":1,"match_id":"R1M1","game_type":"even_odd","role_in_match":"PLAYER_A","opponent_id":"P02"}`},
		{name: "league.v1", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"league.v1","sender":"referee:REF01","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E011", fields: []string{"protocol"}},
		{name: "protocol missing", typ: protocol.TypeGameInvitation,
			params: `{"sender":"referee:REF01","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E011", fields: []string{"protocol"}},
		{name: "protocol missing in MCP arguments", typ: protocol.TypeGameInvitation, body: true,
			params: `{"round_id":1,"match_id":"R1M1","opponent_id":"P02"}`},
		{name: "protocol wrong in MCP arguments", typ: protocol.TypeGameInvitation, body: true,
			params: `{"protocol":"league.v3","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E011", fields: []string{"protocol"}},
		{name: "protocol not a string", typ: protocol.TypeGameInvitation,
			params: `{"protocol":2,"sender":"referee:REF01"}`, code: "E011", fields: []string{"protocol"}},
		{name: "E011 wins over E002", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"league.v1","sender":"referee:REF01"}`,
			code:   "E011", fields: []string{"protocol", "round_id", "match_id", "opponent_id"}},
		{name: "sender missing", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"league.v2","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E002", fields: []string{"sender"}},
		{name: "sender without id", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"league.v2","sender":"referee","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E002", fields: []string{"sender"}},
		{name: "sender of the wrong role", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"league.v2","sender":"player:P09","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E002", fields: []string{"sender"}},
		{name: "bare league_manager sender", typ: protocol.TypeRoundCompleted,
			params: `{"protocol":"league.v2","sender":"league_manager","round_id":1,"matches_completed":2,"next_round_id":null}`},
		{name: "non-UTC timestamp", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"league.v2","sender":"referee:REF01","timestamp":"2025-01-15T10:30:00+02:00","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E002", fields: []string{"timestamp"}},
		{name: "message_type of another message", typ: protocol.TypeGameInvitation,
			params: `{` + envelopeFields + `,"message_type":"GAME_OVER","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E002", fields: []string{"message_type"}},
		{name: "round_id wrong type", typ: protocol.TypeGameInvitation,
			params: `{` + envelopeFields + `,"round_id":"one","match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E002", fields: []string{"round_id"}},
		{name: "bad role", typ: protocol.TypeGameInvitation,
			params: `{` + envelopeFields + `,"round_id":1,"match_id":"R1M1","opponent_id":"P02","role_in_match":"PLAYER_C"}`,
			code:   "E002", fields: []string{"role_in_match"}},
		{name: "Even", typ: protocol.TypeChooseParityResponse,
			params: `{"protocol":"league.v2","sender":"player:P01","match_id":"R1M1","parity_choice":"Even"}`,
			code:   "E010", fields: []string{"parity_choice"}},
		{name: "choice null", typ: protocol.TypeChooseParityResponse,
			params: `{"protocol":"league.v2","sender":"player:P01","match_id":"R1M1","parity_choice":null}`,
			code:   "E010", fields: []string{"parity_choice"}},
		{name: "choice missing", typ: protocol.TypeChooseParityResponse,
			params: `{"protocol":"league.v2","sender":"player:P01","match_id":"R1M1"}`,
			code:   "E010", fields: []string{"parity_choice"}},
		{name: "choice a number", typ: protocol.TypeChooseParityResponse,
			params: `{"protocol":"league.v2","sender":"player:P01","match_id":"R1M1","parity_choice":1}`,
			code:   "E010", fields: []string{"parity_choice"}},
		{name: "choice with a space", typ: protocol.TypeChooseParityResponse,
			params: `{"protocol":"league.v2","sender":"player:P01","match_id":"R1M1","parity_choice":"even "}`,
			code:   "E010", fields: []string{"parity_choice"}},
		{name: "E002 wins over E010", typ: protocol.TypeChooseParityResponse,
			params: `{"protocol":"league.v2","sender":"player:P01","parity_choice":"EVEN"}`,
			code:   "E002", fields: []string{"match_id", "parity_choice"}},
		{name: "referee registration missing fields", typ: protocol.TypeRefereeRegisterRequest,
			params: `{"protocol":"league.v2","sender":"referee:pending","referee_meta":{"display_name":"R","game_types":[]}}`,
			code:   "E002", fields: []string{"referee_meta.version", "referee_meta.game_types",
				"referee_meta.contact_endpoint", "referee_meta.max_concurrent_matches"}},
		{name: "bad endpoint", typ: protocol.TypeLeagueRegisterRequest,
			params: `{"protocol":"league.v2","sender":"player:pending","player_meta":{"display_name":"A","version":"1","game_types":["even_odd"],"contact_endpoint":"localhost:8101/mcp"}}`,
			code:   "E018", fields: []string{"player_meta.contact_endpoint"}},
		{name: "registration with an empty token", typ: protocol.TypeLeagueRegisterRequest,
			params: `{"protocol":"league.v2","sender":"player:P01","auth_token":"","league_id":null,"player_meta":{"display_name":"A","version":"1","game_types":["even_odd"],"contact_endpoint":"http://127.0.0.1:8101/mcp"}}`},
		{name: "nested wrong type", typ: protocol.TypeRoundAnnouncement,
			params: `{"protocol":"league.v2","sender":"league_manager","round_id":1,"matches":[{"match_id":"R1M1","player_A_id":"P01","player_B_id":7}]}`,
			code:   "E002", fields: []string{"matches[0].player_B_id"}},
		{name: "announcement missing ids", typ: protocol.TypeRoundAnnouncement,
			params: `{"protocol":"league.v2","sender":"league_manager","round_id":1,"matches":[{"match_id":"R1M1"}]}`,
			code:   "E002", fields: []string{"matches[0].player_A_id", "matches[0].player_B_id"}},
		{name: "unknown query", typ: protocol.TypeLeagueQuery,
			params: `{"protocol":"league.v2","sender":"player:P01","query_type":"GET_EVERYTHING"}`,
			code:   "E002", fields: []string{"query_type"}},
		{name: "start match with the same player twice", typ: protocol.TypeStartMatch,
			params: `{"protocol":"league.v2","sender":"league_manager:LM01","match_id":"R1M1","round_id":1,"player_a_id":"P01","player_B_id":"P01"}`,
			code:   "E002", fields: []string{"player_b_id"}},
		{name: "start match dialect-b spelling", typ: protocol.TypeStartMatch, body: true,
			params: `{"match_id":"R1M1","round_id":1,"player_A_id":"P01","player_B_id":"P02","player_A_endpoint":"http://localhost:8101/mcp","player_B_endpoint":"http://localhost:8102/mcp"}`},
		{name: "E011 is not hidden by a type error elsewhere", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"league.v1","sender":"referee:REF01","round_id":"1","match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E011", fields: []string{"protocol", "round_id"}},
		{name: "duplicate key", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"league.v2","protocol":"league.v1"}`, code: "E002", fields: []string{"protocol"}},
		{name: "params an array", typ: protocol.TypeGameInvitation, params: `[1]`, code: "E002", fields: []string{"params"}},
		{name: "hostile long value is clipped", typ: protocol.TypeGameInvitation,
			params: `{"protocol":"` + strings.Repeat("é", 500) + `","sender":"referee:REF01","round_id":1,"match_id":"R1M1","opponent_id":"P02"}`,
			code:   "E011", fields: []string{"protocol"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			m, err := protocol.DecodeMessage(c.typ, jsontext.Value(c.params))
			if err == nil {
				if c.body {
					err = protocol.ValidateBody(m)
				} else {
					err = protocol.Validate(m)
				}
			}
			if c.code == "" {
				is.NoErr(err)
				return
			}
			is.True(err != nil) // the message must be refused
			is.Equal(protocol.CodeOf(err), c.code)
			pe := err.(*protocol.Error)
			var fields []string
			for _, f := range pe.Fields {
				fields = append(fields, f.Field)
				is.True(f.Reason != "")      // every problem has a reason
				is.True(len(f.Reason) < 200) // reasons are clipped
			}
			is.Equal(fields, c.fields)
		})
	}
}

func TestTimestamps(t *testing.T) {
	is := is.New(t)
	good := map[string]string{
		"2025-01-15T10:30:00Z":             "2025-01-15T10:30:00Z",
		"2025-01-15T10:30:00.123Z":         "2025-01-15T10:30:00Z",
		"2025-01-15T10:30:00+00:00":        "2025-01-15T10:30:00Z",
		"2025-01-15T10:30:00.123456+00:00": "2025-01-15T10:30:00Z",
	}
	for in, out := range good {
		ts, err := protocol.ParseTimestamp(in)
		is.NoErr(err) // accepted
		is.Equal(protocol.FormatTimestamp(ts), out)
	}
	for _, bad := range []string{"", "2025-01-15T10:30:00", "2025-01-15 10:30:00Z", "2025-01-15T10:30:00+02:00",
		"2025-01-15T10:30:00-00:00", "2025-01-15", "yesterday", "2025-13-15T10:30:00Z", "2025-01-15t10:30:00z"} {
		_, err := protocol.ParseTimestamp(bad)
		is.True(err != nil) // refused
	}
	loc := time.FixedZone("X", 3*3600)
	is.Equal(protocol.FormatTimestamp(time.Date(2026, 11, 21, 9, 5, 7, 999, loc)), "2026-11-21T06:05:07Z")
}

func TestSenders(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]protocol.Sender{
		"player:P01":          {Role: protocol.RolePlayer, ID: "P01"},
		"referee:REF01":       {Role: protocol.RoleReferee, ID: "REF01"},
		"league_manager:LM01": {Role: protocol.RoleLeagueManager, ID: "LM01"},
		"league_manager":      {Role: protocol.RoleLeagueManager},
		"player:pending":      {Role: protocol.RolePlayer, ID: "pending"},
	} {
		s, err := protocol.ParseSender(in)
		is.NoErr(err)
		is.Equal(s, want)
		is.Equal(s.String(), in)
	}
	for _, bad := range []string{"", "player", "player:", "coach:C1", "Player:P01", "player:P 01", "player:a:b",
		"referee:" + strings.Repeat("x", 65)} {
		_, err := protocol.ParseSender(bad)
		is.True(err != nil) // refused
	}
}

func TestEndpoints(t *testing.T) {
	is := is.New(t)
	for _, ok := range []string{"http://localhost:8101/mcp", "https://league.example.org/mcp", "mem://player-1", "http://[::1]:80/mcp"} {
		is.NoErr(protocol.CheckEndpoint(ok))
	}
	for _, bad := range []string{"", "localhost:8101", "ftp://x/mcp", "http:///mcp", "http://user:pw@host/mcp", "://x", "http//x"} {
		is.True(protocol.CheckEndpoint(bad) != nil) // refused
	}
}

func TestMethodAliases(t *testing.T) {
	is := is.New(t)
	// api-reference §2, every row.
	for method, typ := range map[string]protocol.MessageType{
		"register_referee":        protocol.TypeRefereeRegisterRequest,
		"register_player":         protocol.TypeLeagueRegisterRequest,
		"report_match_result":     protocol.TypeMatchResultReport,
		"handle_game_invitation":  protocol.TypeGameInvitation,
		"choose_parity":           protocol.TypeChooseParityCall,
		"notify_match_result":     protocol.TypeGameOver,
		"league_query":            protocol.TypeLeagueQuery,
		"start_match":             protocol.TypeStartMatch,
		"notify_game_error":       protocol.TypeGameError,
		"notify_round":            protocol.TypeRoundAnnouncement,
		"update_standings":        protocol.TypeLeagueStandingsUpdate,
		"notify_round_completed":  protocol.TypeRoundCompleted,
		"notify_league_completed": protocol.TypeLeagueCompleted,
		"receive_game_invitation": protocol.TypeGameInvitation,
		"receive_game_over":       protocol.TypeGameOver,
		"notify_standings":        protocol.TypeLeagueStandingsUpdate,
		"STANDINGS_NOTIFICATION":  protocol.TypeLeagueStandingsUpdate,
	} {
		got, ok := protocol.MethodType(method)
		is.True(ok)
		is.Equal(got, typ)
	}
	for _, typ := range protocol.MessageTypes() {
		got, ok := protocol.MethodType(string(typ))
		is.True(ok) // a message type is its own method
		is.Equal(got, typ)
		is.True(protocol.New(typ) != nil)
		is.Equal(protocol.New(typ).Type(), typ)
		back, ok := protocol.MethodType(protocol.ToolName(typ))
		is.True(ok) // the name we send resolves back
		is.Equal(back, typ)
	}
	is.Equal(len(protocol.MessageTypes()), 21)
	for _, notMessage := range []string{"ping", "start_league", "Handle_Game_Invitation", "game_invitation", ""} {
		_, ok := protocol.MethodType(notMessage)
		is.True(!ok) // case-sensitive, no guessing
	}
}

// TestOrigin: an agent's envelopes carry its current id and the time.
func TestOrigin(t *testing.T) {
	is := is.New(t)
	o := protocol.Origin{Role: protocol.RolePlayer}
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	is.Equal(o.Envelope("pending", protocol.TypeGameJoinAck, at, "c1", "", ""), protocol.Envelope{Protocol: protocol.Version,
		MessageType: protocol.TypeGameJoinAck, Sender: "player:pending", Timestamp: "2025-01-15T10:30:00Z", ConversationID: "c1"})
	e := o.Envelope("P07", protocol.TypeGameJoinAck, at.Add(time.Second), "c2", "league_x", "tok")
	is.Equal(e.Sender, "player:P07") // registered since: the new id
	is.Equal(e.Timestamp, "2025-01-15T10:30:01Z")
	is.Equal([3]string{e.ConversationID, e.LeagueID, e.AuthToken}, [3]string{"c2", "league_x", "tok"})
}

// TestValidateSameAfterCodec: a message is judged the same handed over as
// it is (in process) and decoded from its encoding (over a network), for
// every type: empty (nil lists and maps), and as the spec's examples give
// them.
func TestValidateSameAfterCodec(t *testing.T) {
	env := protocol.Envelope{Protocol: protocol.Version, Sender: "referee:REF01", Timestamp: "2025-01-15T10:30:00Z",
		ConversationID: "conv-1"}
	for _, typ := range protocol.MessageTypes() {
		m := protocol.New(typ)
		*m.Env() = env
		m.Env().MessageType = typ
		raw, err := protocol.Marshal(m)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		decoded, err := protocol.DecodeMessage(typ, raw)
		if err != nil {
			t.Fatalf("%s: %s does not decode: %v", typ, raw, err)
		}
		if got, want := fmt.Sprint(protocol.Validate(decoded)), fmt.Sprint(protocol.Validate(m)); got != want {
			t.Errorf("%s: in process %s\nafter the codec %s", typ, want, got)
		}
	}
}
