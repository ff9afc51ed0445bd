package protocol_test

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

func TestDecodeRequests(t *testing.T) {
	type want struct {
		errCode int    // 0: a valid request
		id      string // "" for absent
		method  string
		params  string
	}
	cases := []struct {
		name  string
		body  string
		batch bool
		want  []want
	}{
		{"positional params", `{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}`, false,
			[]want{{id: "1", method: "subtract", params: "[42, 23]"}}},
		{"named params, string id", `{"jsonrpc":"2.0","method":"ping","params":{"a":1},"id":"abc"}`, false,
			[]want{{id: `"abc"`, method: "ping", params: `{"a":1}`}}},
		{"id kept byte for byte", `{"jsonrpc":"2.0","method":"ping","id":"\u0041b"}`, false,
			[]want{{id: `"\u0041b"`, method: "ping"}}},
		{"fractional id kept", `{"jsonrpc":"2.0","method":"ping","id":1.50}`, false,
			[]want{{id: "1.50", method: "ping"}}},
		{"null id is a request", `{"jsonrpc":"2.0","method":"ping","id":null}`, false,
			[]want{{id: "null", method: "ping"}}},
		{"notification", `{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}`, false,
			[]want{{method: "update", params: "[1,2,3,4,5]"}}},
		{"unknown member ignored", `{"jsonrpc":"2.0","method":"ping","id":1,"extra":true}`, false,
			[]want{{id: "1", method: "ping"}}},
		{"parse error", `{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]`, false,
			[]want{{errCode: -32700}}},
		{"truncated", `{"jsonrpc":"2.0","method":"ping","id":1`, false, []want{{errCode: -32700}}},
		{"empty body", ``, false, []want{{errCode: -32700}}},
		{"not JSON", `hello`, false, []want{{errCode: -32700}}},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"method\":\"p\xffing\",\"id\":1}", false, []want{{errCode: -32700}}},
		{"method not a string", `{"jsonrpc": "2.0", "method": 1, "params": "bar"}`, false,
			[]want{{errCode: -32600, id: "null"}}},
		{"keys are case-sensitive", `{"jsonrpc":"2.0","METHOD":"ping","id":7}`, false,
			[]want{{errCode: -32600, id: "7"}}},
		{"jsonrpc missing", `{"method":"ping","id":1}`, false, []want{{errCode: -32600, id: "1"}}},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","method":"ping","id":1}`, false, []want{{errCode: -32600, id: "1"}}},
		{"jsonrpc a number", `{"jsonrpc":2.0,"method":"ping","id":1}`, false, []want{{errCode: -32600, id: "1"}}},
		{"jsonrpc escaped is still 2.0", `{"jsonrpc":"2\u002e0","method":"ping","id":1}`, false,
			[]want{{id: "1", method: "ping"}}},
		{"params a string", `{"jsonrpc":"2.0","method":"ping","params":"x","id":1}`, false,
			[]want{{errCode: -32600, id: "1"}}},
		{"params null", `{"jsonrpc":"2.0","method":"ping","params":null,"id":1}`, false,
			[]want{{errCode: -32600, id: "1"}}},
		{"id an object", `{"jsonrpc":"2.0","method":"ping","id":{"a":1}}`, false,
			[]want{{errCode: -32600, id: "null"}}},
		{"id a boolean", `{"jsonrpc":"2.0","method":"ping","id":true}`, false,
			[]want{{errCode: -32600, id: "null"}}},
		{"duplicate member", `{"jsonrpc":"2.0","method":"ping","method":"other","id":1}`, false,
			[]want{{errCode: -32600}}},
		{"a bare number", `42`, false, []want{{errCode: -32600}}},
		{"empty batch", `[]`, false, []want{{errCode: -32600}}},
		{"batch of junk", `[1,2,3]`, true, []want{{errCode: -32600}, {errCode: -32600}, {errCode: -32600}}},
		{"batch invalid JSON", `[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]`, false,
			[]want{{errCode: -32700}}},
		{"mixed batch", `[
			{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
			{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
			{"foo": "boo"},
			{"jsonrpc": "2.0", "method": "get_data", "id": "9"}]`, true,
			[]want{{id: `"1"`, method: "sum", params: "[1,2,4]"}, {method: "notify_hello", params: "[7]"},
				{errCode: -32600, id: "null"}, {id: `"9"`, method: "get_data"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			items, batch := protocol.DecodeRequests([]byte(c.body))
			is.Equal(batch, c.batch)
			is.Equal(len(items), len(c.want))
			for i, w := range c.want {
				got := items[i]
				if w.errCode != 0 {
					is.True(got.Err != nil) // an error is expected
					is.Equal(got.Err.Code, w.errCode)
					if w.id != "" {
						is.Equal(string(got.ID), w.id)
					}
					continue
				}
				is.Equal(got.Err, nil)
				is.Equal(string(got.ID), w.id)
				is.Equal(got.IsNotification(), w.id == "")
				is.Equal(got.Method, w.method)
				is.Equal(string(got.Params), w.params)
			}
		})
	}
}

func TestAppendResponses(t *testing.T) {
	is := is.New(t)
	is.Equal(string(protocol.AppendResult(nil, jsontext.Value(`"a\u0041"`), jsontext.Value(`{"x":1}`))),
		`{"jsonrpc":"2.0","result":{"x":1},"id":"a\u0041"}`)
	is.Equal(string(protocol.AppendError(nil, nil, protocol.NewRPCError(-32700, `Parse error: "x"`))),
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: \"x\""},"id":null}`)
	is.Equal(string(protocol.AppendRequest(nil, jsontext.Value("3"), "ping", nil)),
		`{"jsonrpc":"2.0","method":"ping","id":3}`)
	is.Equal(string(protocol.AppendRequest(nil, nil, "notify_round", jsontext.Value(`{}`))),
		`{"jsonrpc":"2.0","method":"notify_round","params":{}}`)
	// A method or message that is not plain ASCII is quoted as
	// jsontext.AppendQuote quotes it, invalid UTF-8 included.
	for _, s := range []string{"ping", "a\"b", `a\b`, "tab\there", "\x7f", "é", "\xff\xfe", "<&>", ""} {
		want, _ := jsontext.AppendQuote(nil, s)
		is.Equal(string(protocol.AppendRequest(nil, nil, s, nil)), `{"jsonrpc":"2.0","method":`+string(want)+`}`)
		is.Equal(string(protocol.AppendError(nil, nil, protocol.NewRPCError(1, s))),
			`{"jsonrpc":"2.0","error":{"code":1,"message":`+string(want)+`},"id":null}`)
	}
}

func TestToRPCError(t *testing.T) {
	is := is.New(t)
	m := &protocol.ChooseParityResponse{MatchID: "R1M1", ParityChoice: "Even"}
	err := protocol.ValidateBody(m)
	e := protocol.ToRPCError(err)
	is.Equal(e.Code, -32002)
	is.Equal(e.Message, `INVALID_MOVE: parity_choice: must be exactly "even" or "odd", got "Even"`)
	is.Equal(string(e.Data), `{"error_code":"E010","error_description":"INVALID_MOVE","retryable":false,`+
		`"validation_errors":[{"field":"parity_choice","reason":"must be exactly \"even\" or \"odd\", got \"Even\""}]}`)
	is.Equal(e.LeagueCode(), protocol.ErrInvalidMove)

	internal := protocol.ToRPCError(errString("database is on fire at /var/lib/x"))
	is.Equal(internal.Code, -32603)
	is.Equal(internal.Message, "INTERNAL_SERVER_ERROR: internal server error") // internals are not leaked
	is.Equal(internal.LeagueCode(), protocol.ErrInternal)

	rl := protocol.ToRPCError(protocol.Errorf(protocol.ErrRateLimitExceeded, "slow down"))
	is.Equal(rl.Code, -32014)
	is.Equal(string(rl.Data), `{"error_code":"E014","error_description":"RATE_LIMIT_EXCEEDED","retryable":true}`)
}

type errString string

func (e errString) Error() string { return string(e) }

func TestDecodeResponse(t *testing.T) {
	cases := []struct {
		name, body string
		result     string
		errCode    int
		leagueCode protocol.Code
		bad        bool
	}{
		{name: "plain", body: `{"jsonrpc":"2.0","result":{"a":1},"id":1}`, result: `{"a":1}`},
		{name: "error null beside result", body: `{"jsonrpc":"2.0","result":{"a":1},"error":null,"id":1}`, result: `{"a":1}`},
		{name: "MCP text", body: `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{\"status\": \"ACK\"}"}]},"id":9}`,
			result: `{"status": "ACK"}`},
		{name: "MCP plain text", body: `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"pong"}]},"id":9}`,
			result: `"pong"`},
		{name: "MCP structured", body: `{"jsonrpc":"2.0","result":{"content":[],"structuredContent":{"x":2}},"id":9}`,
			result: `{"x":2}`},
		{name: "MCP isError", body: `{"jsonrpc":"2.0","result":{"isError":true,"content":[{"type":"text","text":"{\"error_code\":\"E012\"}"}]},"id":1}`,
			errCode: -32603, leagueCode: "E012"},
		{name: "a content field that is not MCP", body: `{"jsonrpc":"2.0","result":{"content":"hello"},"id":1}`,
			result: `{"content":"hello"}`},
		{name: "error", body: `{"jsonrpc":"2.0","error":{"code":-32001,"message":"AUTH_TOKEN_INVALID","data":{"error_code":"E012"}},"id":1}`,
			errCode: -32001, leagueCode: "E012"},
		{name: "error as a string", body: `{"jsonrpc":"2.0","error":"Unknown method","id":1}`, errCode: -32603},
		{name: "null result", body: `{"jsonrpc":"2.0","result":null,"id":1}`, result: `null`},
		{name: "neither", body: `{"jsonrpc":"2.0","id":1}`, bad: true},
		{name: "not an object", body: `[1]`, bad: true},
		{name: "HTML", body: `<html>502 Bad Gateway</html>`, bad: true},
		{name: "error a number", body: `{"jsonrpc":"2.0","error":5,"id":1}`, bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			r, err := protocol.DecodeResponse([]byte(c.body))
			if c.bad {
				is.True(err != nil)
				return
			}
			is.NoErr(err)
			if c.errCode != 0 {
				is.True(r.Error != nil)
				is.Equal(r.Error.Code, c.errCode)
				is.Equal(r.Error.LeagueCode(), c.leagueCode)
				return
			}
			is.Equal(r.Error, nil)
			is.Equal(string(r.Result), c.result)
		})
	}
}

func TestWrapMCP(t *testing.T) {
	is := is.New(t)
	w := protocol.WrapMCP(jsontext.Value(`{"status":"ACK"}`))
	is.Equal(string(w), `{"content":[{"type":"text","text":"{\"status\":\"ACK\"}"}]}`)
	r, err := protocol.DecodeResponse(protocol.AppendResult(nil, jsontext.Value("1"), w))
	is.NoErr(err)
	is.Equal(string(r.Result), `{"status":"ACK"}`) // round trip
}

func TestDecodeToolCall(t *testing.T) {
	is := is.New(t)
	tc, err := protocol.DecodeToolCall(jsontext.Value(`{"name":"choose_parity","arguments":{"match_id":"R1M1"}}`))
	is.NoErr(err)
	is.Equal(tc.Name, "choose_parity")
	is.Equal(string(tc.Arguments), `{"match_id":"R1M1"}`)
	tc, err = protocol.DecodeToolCall(jsontext.Value(`{"name":"ping"}`))
	is.NoErr(err)
	is.Equal(tc.Arguments, nil)
	for _, bad := range []string{`[]`, `{"name":""}`, `{"arguments":{}}`, `{"name":"x","arguments":[1]}`, `{"name":5}`} {
		_, err := protocol.DecodeToolCall(jsontext.Value(bad))
		is.True(err != nil) // bad tools/call params
	}
}

func TestDecodeResponses(t *testing.T) {
	is := is.New(t)
	rs, err := protocol.DecodeResponses([]byte(` [{"jsonrpc":"2.0","result":{"status":"ok"},"id":2},
		{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1},
		{"jsonrpc":"2.0","error":"went wrong","id":3}] `))
	is.NoErr(err)
	is.Equal(len(rs), 3)
	is.Equal(string(rs[0].ID), "2") // in the order they came
	is.Equal(string(rs[0].Result), `{"status":"ok"}`)
	is.Equal(rs[0].Error, nil)
	is.Equal(string(rs[1].ID), "1")
	is.Equal(rs[1].Error.Code, protocol.CodeMethodNotFound)
	is.Equal(rs[2].Error.Message, "went wrong")

	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","result":{},"id":1}`:       "reply to a batch is not a JSON array",
		`[{"jsonrpc":"2.0","result":{},"id":1}`:      "reply to a batch is not valid JSON: ",
		`[{"jsonrpc":"2.0","result":{},"id":1},7]`:   "response 2 of the batch: response is not a JSON-RPC object",
		`[{"jsonrpc":"2.0","id":1}]`:                 "response 1 of the batch: response has neither result nor error",
		"[" + strings.Repeat(`{},`, 100) + `{}]`:     "reply to a batch has more than 100 responses",
		`[{"jsonrpc":"2.0","result":{},"id":1}] [2]`: "reply to a batch is not valid JSON: ",
	} {
		_, err := protocol.DecodeResponses([]byte(body))
		is.True(err != nil) // refused
		is.True(strings.HasPrefix(err.Error(), want))
	}
	rs, err = protocol.DecodeResponses([]byte(`[]`))
	is.NoErr(err) // an empty array: no responses, which the caller finds missing
	is.Equal(len(rs), 0)
}

// TestErrorInResult: a result that is a refusal (a LEAGUE_ERROR, or its
// body) is read as the peer's error, code and name as they came and read
// by the name where it is one of ours; any answer is left alone.
func TestErrorInResult(t *testing.T) {
	for _, c := range []struct {
		result, message string
		code            protocol.Code // as read: "" for an answer
	}{
		{`{"message_type":"LEAGUE_ERROR","error_code":"E018","error_description":"PROTOCOL_VERSION_MISMATCH","error_message":"too old"}`,
			"E018 PROTOCOL_VERSION_MISMATCH: too old", protocol.ErrProtocolMismatch},
		{`{"error_code":"E004","error_description":"AGENT_NOT_REGISTERED","context":{"id":"P09"}}`,
			`E004 AGENT_NOT_REGISTERED (context {"id":"P09"})`, protocol.ErrAgentNotRegistered},
		{`{"error_code":"E099","error_message":"league is full"}`, "E099: league is full", "E099"},
		{`{"error_code":"E002","error_description":"SOMETHING_ELSE"}`, "E002 SOMETHING_ELSE", protocol.ErrInvalidMessageFormat},
		{`{"message_type":"LEAGUE_QUERY_RESPONSE","success":false,"error":{"error_code":"E007"}}`, "", ""},
		{`{"status":"REJECTED","error_code":"E003","reason":"full"}`, "", ""},
		{`{"match_id":"R1M1","accept":true}`, "", ""},
		{`[{"error_code":"E001"}]`, "", ""},
	} {
		is := is.New(t)
		got := protocol.ErrorInResult(jsontext.Value(c.result))
		if c.code == "" {
			is.Equal(got, nil) // an answer
			continue
		}
		is.True(got != nil)
		is.Equal(got.Message, c.message)
		is.Equal(got.LeagueCode(), c.code)
		is.Equal(string(got.Data), c.result) // verbatim
	}
}
