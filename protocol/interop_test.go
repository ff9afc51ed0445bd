package protocol_test

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// interopLine is one line of a capture in testdata/interop (copies of
// ../shared/interop).
type interopLine struct {
	n   int
	raw []byte
}

func readCapture(t *testing.T, name string) []interopLine {
	t.Helper()
	f, err := os.Open("../testdata/interop/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []interopLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, interopLine{n: n, raw: bytes.Clone(sc.Bytes())})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// decodedRequest is a capture request after method resolution.
type decodedRequest struct {
	line   int
	id     jsontext.Value
	method string // after tools/call unwrapping
	typ    protocol.MessageType
	msg    protocol.Message
}

// decodeCaptureRequest runs a request line through the same steps as the
// server path: JSON-RPC decode, tools/call unwrapping, method resolution
// with params.message_type deciding, message decode and validation.
func decodeCaptureRequest(t *testing.T, l interopLine) decodedRequest {
	t.Helper()
	items, batch := protocol.DecodeRequests(l.raw)
	if batch || len(items) != 1 || items[0].Err != nil {
		t.Fatalf("line %d: not a valid JSON-RPC request: %+v", l.n, items[0].Err)
	}
	req := items[0].Request
	if req.IsNotification() {
		t.Fatalf("line %d: a notification", l.n)
	}
	method, params, mcp := req.Method, req.Params, false
	if method == protocol.MethodToolsCall {
		tc, err := protocol.DecodeToolCall(params)
		if err != nil {
			t.Fatalf("line %d: %v", l.n, err)
		}
		method, params, mcp = tc.Name, tc.Arguments, true
	}
	d := decodedRequest{line: l.n, id: req.ID, method: method}
	var env protocol.Envelope
	if err := protocol.DecodeInto(params, &env); err != nil {
		t.Fatalf("line %d: envelope: %v", l.n, err)
	}
	typ, ok := protocol.MethodType(method)
	if env.MessageType != "" {
		typ, ok = protocol.MethodType(string(env.MessageType))
	}
	if !ok {
		// A tool that is not a league message: start_league, get_standings.
		if err := protocol.ValidateEnvelope(&env); err != nil {
			t.Fatalf("line %d: %s: %v", l.n, method, err)
		}
		return d
	}
	m, err := protocol.DecodeMessage(typ, params)
	if err != nil {
		t.Fatalf("line %d: %v", l.n, err)
	}
	if mcp {
		err = protocol.ValidateBody(m)
	} else {
		err = protocol.Validate(m)
	}
	if err != nil {
		t.Fatalf("line %d: %s refused: %v", l.n, typ, err)
	}
	d.typ, d.msg = typ, m
	return d
}

// TestInteropCaptures feeds every line of both captures through the codec:
// requests must decode and validate as the role they were addressed to
// would see them; responses must be understood as the reply to the request
// they answer (the latest unanswered request with the same id).
func TestInteropCaptures(t *testing.T) {
	for _, capture := range []struct {
		file                 string
		requests, responses  int
		registrations, games int
	}{
		{"dialect-a.jsonl", 21, 21, 3, 1},
		{"dialect-b.jsonl", 20, 20, 3, 1},
	} {
		t.Run(capture.file, func(t *testing.T) {
			is := is.New(t)
			var pending []decodedRequest
			var requests, responses, registrations, joins, choices int
			for _, l := range readCapture(t, capture.file) {
				var probe map[string]jsontext.Value
				is.NoErr(json.Unmarshal(l.raw, &probe))
				if probe["method"] != nil {
					pending = append(pending, decodeCaptureRequest(t, l))
					requests++
					continue
				}
				responses++
				resp, err := protocol.DecodeResponse(l.raw)
				if err != nil {
					t.Fatalf("line %d: %v", l.n, err)
				}
				is.True(resp.Error == nil) // captures hold successful replies
				i := len(pending) - 1
				for ; i >= 0 && !bytes.Equal(pending[i].id, resp.ID); i-- {
				}
				if i < 0 {
					t.Fatalf("line %d: response to no request", l.n)
				}
				req := pending[i]
				pending = append(pending[:i], pending[i+1:]...)
				switch understand(t, req, resp.Result) {
				case "registration":
					registrations++
				case "join":
					joins++
				case "choice":
					choices++
				}
			}
			is.Equal(requests, capture.requests)   // requests in the capture
			is.Equal(responses, capture.responses) // responses in the capture
			is.Equal(registrations, capture.registrations)
			is.Equal(joins, 2*capture.games)   // both players joined
			is.Equal(choices, 2*capture.games) // both players chose
		})
	}
}

// understand decodes a reply the way our client does and checks what the
// caller needs from it. It names the kind of reply it recognised.
func understand(t *testing.T, req decodedRequest, result jsontext.Value) string {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("line %d (%s reply): "+format, append([]any{req.line, req.method}, args...)...)
	}
	switch protocol.ReplyType(req.typ) {
	case protocol.TypeRefereeRegisterResponse:
		var r protocol.RefereeRegisterResponse
		if err := protocol.DecodeInto(result, &r); err != nil {
			fail("%v", err)
		}
		if r.Status != protocol.StatusAccepted || r.RefereeID == "" || r.AuthToken == "" {
			fail("registration not understood: %+v", r)
		}
		return "registration"
	case protocol.TypeLeagueRegisterResponse:
		var r protocol.LeagueRegisterResponse
		if err := protocol.DecodeInto(result, &r); err != nil {
			fail("%v", err)
		}
		if r.Status != protocol.StatusAccepted || r.PlayerID == "" || r.AuthToken == "" {
			fail("registration not understood: %+v", r)
		}
		return "registration"
	case protocol.TypeGameJoinAck:
		var r protocol.GameJoinAck
		if err := protocol.DecodeInto(result, &r); err != nil {
			fail("%v", err)
		}
		if !r.Accepted() {
			fail("join not understood as accepted: %s", result)
		}
		inv := req.msg.(*protocol.GameInvitation)
		if r.MatchID != "" && r.MatchID != inv.MatchID {
			fail("join for match %q", r.MatchID)
		}
		return "join"
	case protocol.TypeChooseParityResponse:
		var r protocol.ChooseParityResponse
		if err := protocol.DecodeInto(result, &r); err != nil {
			fail("%v", err)
		}
		if protocol.CheckParity(r.ParityChoice) != nil {
			fail("choice %q", r.ParityChoice)
		}
		return "choice"
	case protocol.TypeStartMatchAck:
		var r protocol.StartMatchAck
		if err := protocol.DecodeInto(result, &r); err != nil || r.Status == "" {
			fail("start ack not understood: %s", result)
		}
	case protocol.TypeMatchResultReportAck:
		var r protocol.MatchResultReportAck
		if err := protocol.DecodeInto(result, &r); err != nil || r.Status == "" {
			fail("report ack not understood: %s", result)
		}
	default:
		// Acknowledgements of broadcasts and tools: any JSON object.
		var r protocol.Ack
		if err := protocol.DecodeInto(result, &r); err != nil {
			fail("%v", err)
		}
	}
	return ""
}
