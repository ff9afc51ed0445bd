package protocol_test

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// seedBodies adds every request and response of the interop captures, every
// request of the JSON-RPC vectors and every spec example as seeds.
func seedBodies(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	for _, name := range []string{"dialect-a.jsonl", "dialect-b.jsonl"} {
		b, err := os.ReadFile("../testdata/interop/" + name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, bytes.Split(bytes.TrimSpace(b), []byte("\n"))...)
	}
	vf, err := os.Open("../testdata/jsonrpc/vectors.txt")
	if err != nil {
		f.Fatal(err)
	}
	defer vf.Close()
	sc := bufio.NewScanner(vf)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if r, ok := strings.CutPrefix(sc.Text(), "> "); ok {
			seeds = append(seeds, []byte(r))
		}
	}
	return seeds
}

func FuzzDecodeRequests(f *testing.F) {
	for _, s := range seedBodies(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		items, batch := protocol.DecodeRequests(body)
		if len(items) == 0 {
			t.Fatal("no items")
		}
		if !batch && len(items) != 1 {
			t.Fatalf("%d items for a single request", len(items))
		}
		for _, it := range items {
			var reply []byte
			if it.Err != nil {
				if it.ID == nil {
					t.Fatal("an error without an id to answer with")
				}
				reply = protocol.AppendError(nil, it.ID, it.Err)
			} else {
				reply = protocol.AppendResult(nil, it.ID, jsontext.Value("null"))
				switch it.Params.Kind() {
				case 0, '{', '[':
				default:
					t.Fatalf("params of kind %v accepted", it.Params.Kind())
				}
			}
			if !jsontext.Value(reply).IsValid() {
				t.Fatalf("reply is not valid JSON: %s", reply)
			}
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	for _, s := range seedBodies(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := protocol.DecodeResponse(body)
		if err != nil {
			return
		}
		if r.Error != nil {
			_ = r.Error.Error()
			_ = r.Error.LeagueCode()
			return
		}
		// Responses are read liberally (duplicate names pass here); the reply
		// decoder that follows refuses them.
		if !r.Result.IsValid(jsontext.AllowDuplicateNames(true)) {
			t.Fatalf("result is not valid JSON: %q", r.Result)
		}
	})
}

// FuzzDecodeMessage decodes params as each message type, validates them,
// and checks that what decodes encodes again, stably.
func FuzzDecodeMessage(f *testing.F) {
	types := protocol.MessageTypes()
	for _, s := range seedBodies(f) {
		var probe struct {
			Params    jsontext.Value `json:"params"`
			Arguments jsontext.Value `json:"arguments"`
		}
		if json.Unmarshal(s, &probe) == nil && probe.Params != nil {
			for i := range types {
				f.Add(uint8(i), []byte(probe.Params))
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		typ := types[int(which)%len(types)]
		m, err := protocol.DecodeMessage(typ, params)
		if err != nil {
			switch protocol.CodeOf(err) {
			case protocol.ErrInvalidMessageFormat, protocol.ErrProtocolMismatch, protocol.ErrInvalidMove:
			default:
				t.Fatalf("decode error with code %q: %v", protocol.CodeOf(err), err)
			}
			return
		}
		for _, v := range []func(protocol.Message) error{protocol.Validate, protocol.ValidateBody} {
			if err := v(m); err != nil {
				rpc := protocol.ToRPCError(err)
				if !rpc.Data.IsValid() {
					t.Fatalf("error data is not valid JSON: %q", rpc.Data)
				}
			}
		}
		once, err := json.Marshal(m, json.Deterministic(true))
		if err != nil {
			t.Fatalf("a decoded message does not encode: %v", err)
		}
		m2, err := protocol.DecodeMessage(typ, once)
		if err != nil {
			t.Fatalf("an encoded message does not decode: %v\n%s", err, once)
		}
		twice, err := json.Marshal(m2, json.Deterministic(true))
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("encoding is not stable:\n%s\n%s", once, twice)
		}
	})
}

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2025-01-15T10:30:00Z", "2025-01-15T10:30:00.123+00:00", "2025-01-15T10:30:00+02:00", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := protocol.ParseTimestamp(s)
		if err != nil {
			return
		}
		out := protocol.FormatTimestamp(ts)
		back, err := protocol.ParseTimestamp(out)
		if err != nil || !back.Equal(ts.Truncate(1e9)) {
			t.Fatalf("%q → %q does not round-trip", s, out)
		}
	})
}

func FuzzParseSender(f *testing.F) {
	for _, s := range []string{"player:P01", "league_manager", "referee:REF01", "player:", "x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		snd, err := protocol.ParseSender(s)
		if err != nil {
			return
		}
		if snd.String() != s {
			t.Fatalf("%q parsed as %q", s, snd)
		}
	})
}
