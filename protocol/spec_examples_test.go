package protocol_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// specExample is one ```json block of a document in testdata/spec (copies
// of ../shared/spec).
type specExample struct {
	name string // "api-reference.md#3"
	file string // golden file name
	raw  []byte
}

func specExamples(t *testing.T) []specExample {
	t.Helper()
	docs, err := filepath.Glob("../testdata/spec/*.md")
	if err != nil || len(docs) != 5 {
		t.Fatalf("want the 5 spec documents in testdata/spec, got %v (%v)", docs, err)
	}
	block := regexp.MustCompile("(?s)```json\n(.*?)```")
	var out []specExample
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(d)
		for i, m := range block.FindAllSubmatch(b, -1) {
			out = append(out, specExample{
				name: fmt.Sprintf("%s#%d", base, i),
				file: fmt.Sprintf("%s-%02d.json", strings.TrimSuffix(base, ".md"), i),
				raw:  m[1],
			})
		}
	}
	return out
}

// Examples that are not complete league messages, and what each must show
// instead. Every other example must decode and validate.
var specSpecial = map[string]string{
	// §1 illustrates the envelope: its params carry no player_meta and its
	// result no player_id, which a real registration must have.
	"api-reference.md#0": "invalid E002 player_meta",
	"api-reference.md#1": "invalid E002 player_id",
	// The retry block of system.json.
	"error-codes.md#18": "retry-config",
	// Log lines (§8.4 annotated with a // comment, so not JSON).
	"error-codes.md#22":         "not-json",
	"implementation-guide.md#0": "log-line",
	// The envelope template with <placeholders>, and an elided snippet.
	"protocol-v2.md#0":  "envelope-template",
	"protocol-v2.md#15": "not-json",
}

// sampleSender is a sender of the right role for each message type, used
// to complete the body-only examples with an envelope.
var sampleSender = map[protocol.MessageType]string{
	protocol.TypeRefereeRegisterRequest: "referee:REF01",
	protocol.TypeGameInvitation:         "referee:REF01",
	protocol.TypeChooseParityCall:       "referee:REF01",
	protocol.TypeGameOver:               "referee:REF01",
	protocol.TypeMatchResultReport:      "referee:REF01",
	protocol.TypeGameError:              "referee:REF01",
	protocol.TypeStartMatchAck:          "referee:REF01",
	protocol.TypeLeagueRegisterRequest:  "player:P01",
	protocol.TypeGameJoinAck:            "player:P01",
	protocol.TypeChooseParityResponse:   "player:P01",
	protocol.TypeLeagueQuery:            "player:P01",
}

func senderFor(t protocol.MessageType) string {
	if s, ok := sampleSender[t]; ok {
		return s
	}
	return "league_manager:LM01"
}

func TestSpecExamples(t *testing.T) {
	examples := specExamples(t)
	if len(examples) != 71 {
		t.Fatalf("found %d JSON examples in the spec, want 71: classify new ones in specSpecial", len(examples))
	}
	seenSpecial := 0
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			is := is.New(t)
			special := specSpecial[ex.name]
			if special != "" {
				seenSpecial++
			}
			switch {
			case special == "not-json":
				is.True(!jsontext.Value(ex.raw).IsValid()) // annotated example is not JSON
				return
			case special == "retry-config":
				checkRetryConfig(t, ex.raw)
				return
			case special == "log-line":
				checkLogLine(t, ex.raw)
				return
			case special == "envelope-template":
				checkEnvelopeTemplate(t, ex.raw)
				return
			}
			var top map[string]jsontext.Value
			is.NoErr(json.Unmarshal(ex.raw, &top))
			var m protocol.Message
			var err error
			switch {
			case top["jsonrpc"] != nil && top["method"] != nil:
				m, err = checkRPCRequest(t, ex.raw)
			case top["jsonrpc"] != nil:
				m, err = checkRPCResponse(t, ex.raw)
			default:
				m, err = decodeSpecMessage(t, ex.raw)
				if err == nil {
					err = validateAsGiven(m)
				}
			}
			if want, ok := strings.CutPrefix(special, "invalid "); ok {
				is.True(err != nil) // example is incomplete
				code, field, _ := strings.Cut(want, " ")
				is.Equal(string(protocol.CodeOf(err)), code)
				pe := err.(*protocol.Error)
				is.Equal(len(pe.Fields), 1)
				is.Equal(pe.Fields[0].Field, field)
			} else {
				is.NoErr(err) // example must validate
			}
			if m == nil {
				return
			}
			if err == nil {
				completeAndValidate(t, m)
			}
			checkLossless(t, ex.raw, m)
			golden(t, ex.file, m)
		})
	}
	if seenSpecial != len(specSpecial) {
		t.Fatalf("%d special examples seen, %d listed", seenSpecial, len(specSpecial))
	}
}

// decodeSpecMessage decodes a message by its own message_type.
func decodeSpecMessage(t *testing.T, raw []byte) (protocol.Message, error) {
	t.Helper()
	var env protocol.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("envelope: %v", err)
	}
	typ, ok := protocol.MethodType(string(env.MessageType))
	if !ok {
		t.Fatalf("unknown message_type %q", env.MessageType)
	}
	return protocol.DecodeMessage(typ, raw)
}

// validateAsGiven validates a full message (one with protocol) as a plain
// JSON-RPC call would be, and a body-only message by its body rules.
func validateAsGiven(m protocol.Message) error {
	if m.Env().Protocol != "" {
		return protocol.Validate(m)
	}
	return protocol.ValidateBody(m)
}

// completeAndValidate gives a body-only message an envelope and checks that
// it then passes full validation too.
func completeAndValidate(t *testing.T, m protocol.Message) {
	t.Helper()
	e := *m.Env()
	defer func() { *m.Env() = e }()
	env := m.Env()
	if env.Protocol == "" {
		env.Protocol = protocol.Version
	}
	if env.Sender == "" {
		env.Sender = senderFor(m.Type())
	}
	if env.Timestamp == "" {
		env.Timestamp = "2025-01-15T10:30:00Z"
	}
	if env.ConversationID == "" {
		env.ConversationID = "conv-1"
	}
	if err := protocol.Validate(m); err != nil {
		t.Fatalf("with an envelope added: %v", err)
	}
}

func checkRPCRequest(t *testing.T, raw []byte) (protocol.Message, error) {
	t.Helper()
	items, batch := protocol.DecodeRequests(raw)
	if batch || len(items) != 1 || items[0].Err != nil {
		t.Fatalf("JSON-RPC request: %+v", items)
	}
	req := items[0].Request
	if string(req.ID) != "1" {
		t.Fatalf("id = %s", req.ID)
	}
	typ, ok := protocol.MethodType(req.Method)
	if !ok {
		// A tool that is not a league message (get_standings): its
		// envelope fields must be valid.
		var env protocol.Envelope
		if err := json.Unmarshal(req.Params, &env); err != nil {
			t.Fatal(err)
		}
		return nil, protocol.ValidateEnvelope(&env)
	}
	m, err := protocol.DecodeMessage(typ, req.Params)
	if err != nil {
		return nil, err
	}
	return m, protocol.Validate(m)
}

func checkRPCResponse(t *testing.T, raw []byte) (protocol.Message, error) {
	t.Helper()
	resp, err := protocol.DecodeResponse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		// An error answer: it must carry a known E-code whose table row
		// agrees with the JSON-RPC code, or api-reference's -32602 for E002
		// (error-codes.md §7.3, which is authoritative, says -32002).
		c := resp.Error.LeagueCode()
		if !c.Known() {
			t.Fatalf("error without a known error_code: %+v", resp.Error)
		}
		if resp.Error.Code != c.JSONRPC() && !(c == protocol.ErrInvalidMessageFormat && resp.Error.Code == protocol.CodeInvalidParams) {
			t.Fatalf("error code %d for %s", resp.Error.Code, c)
		}
		return nil, nil
	}
	m, err := decodeSpecMessage(t, resp.Result)
	if err != nil {
		return nil, err
	}
	return m, protocol.ValidateBody(m)
}

func checkRetryConfig(t *testing.T, raw []byte) {
	is := is.New(t)
	var cfg struct {
		Retry struct {
			MaxRetries      int      `json:"max_retries"`
			InitialDelaySec float64  `json:"initial_delay_sec"`
			MaxDelaySec     float64  `json:"max_delay_sec"`
			ExponentialBase float64  `json:"exponential_base"`
			RetryableErrors []string `json:"retryable_errors"`
		} `json:"retry"`
	}
	is.NoErr(json.Unmarshal(raw, &cfg))
	var retryable []string
	for _, c := range protocol.Codes() {
		if c.Retryable {
			retryable = append(retryable, string(c.Code))
		}
	}
	is.Equal(cfg.Retry.RetryableErrors, retryable) // system.json agrees with the table
	is.Equal(cfg.Retry.MaxRetries, 3)
	is.Equal(cfg.Retry.InitialDelaySec, 2.0)
	is.Equal(cfg.Retry.MaxDelaySec, 10.0)
	is.Equal(cfg.Retry.ExponentialBase, 2.0)
}

func checkLogLine(t *testing.T, raw []byte) {
	is := is.New(t)
	var line map[string]any
	is.NoErr(json.Unmarshal(raw, &line))
	for _, k := range []string{"timestamp", "level", "agent_id", "message"} {
		_, ok := line[k]
		is.True(ok) // implementation-guide §5.10 mandatory log field
	}
	ts, _ := line["timestamp"].(string)
	_, err := protocol.ParseTimestamp(ts)
	is.NoErr(err) // fractional-second UTC timestamps are accepted
}

func checkEnvelopeTemplate(t *testing.T, raw []byte) {
	is := is.New(t)
	var tmpl map[string]any
	is.NoErr(json.Unmarshal(raw, &tmpl))
	var keys []string
	for k := range tmpl {
		keys = append(keys, k)
	}
	full := protocol.Envelope{Protocol: "p", MessageType: "m", Sender: "s", Timestamp: "t",
		ConversationID: "c", LeagueID: "l", AuthToken: "a"}
	b, err := json.Marshal(full)
	is.NoErr(err)
	var ours map[string]any
	is.NoErr(json.Unmarshal(b, &ours))
	for _, k := range keys {
		_, ok := ours[k]
		is.True(ok) // every field of the spec's envelope is in ours
	}
	is.Equal(len(ours), len(keys)+1) // ours adds auth_token only
	slices.Sort(keys)
}

// checkLossless fails when decoding m dropped a field of the example: every
// key the example has (with a non-null value) must come back when m is
// encoded again. For JSON-RPC examples the message is params or result.
func checkLossless(t *testing.T, raw []byte, m protocol.Message) {
	t.Helper()
	var orig map[string]any
	if err := json.Unmarshal(raw, &orig); err != nil {
		t.Fatal(err)
	}
	if _, rpc := orig["jsonrpc"]; rpc {
		if p, ok := orig["params"].(map[string]any); ok {
			orig = p
		} else if r, ok := orig["result"].(map[string]any); ok {
			orig = r
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if lost := lostKeys("", orig, back); len(lost) > 0 {
		t.Fatalf("decoding dropped %v", lost)
	}
}

func lostKeys(path string, orig, back any) []string {
	var lost []string
	switch o := orig.(type) {
	case map[string]any:
		b, _ := back.(map[string]any)
		for k, v := range o {
			bv, ok := b[k]
			if !ok {
				if v != nil {
					lost = append(lost, path+"/"+k)
				}
				continue
			}
			lost = append(lost, lostKeys(path+"/"+k, v, bv)...)
		}
	case []any:
		b, _ := back.([]any)
		for i, v := range o {
			if i >= len(b) {
				return append(lost, fmt.Sprintf("%s/%d", path, i))
			}
			lost = append(lost, lostKeys(fmt.Sprintf("%s/%d", path, i), v, b[i])...)
		}
	}
	return lost
}

// golden compares the canonical re-encoding of m with
// testdata/golden/spec/<file>, or rewrites it with -update.
func golden(t *testing.T, file string, m protocol.Message) {
	t.Helper()
	got, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	v := jsontext.Value(got)
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		t.Fatal(err)
	}
	got = append(v, '\n')
	path := filepath.Join("..", "testdata", "golden", "spec", file)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./protocol -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("re-encoding differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
