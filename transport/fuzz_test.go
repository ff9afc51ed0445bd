package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// FuzzServeJSON throws arbitrary bodies at the server path. It must not
// panic, and whatever it answers must be JSON-RPC 2.0: an object (or an
// array of objects) with jsonrpc "2.0", an id, and exactly one of result
// and error; a single valid notification gets no answer.
func FuzzServeJSON(f *testing.F) {
	vf, err := os.Open(vectorsFile)
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(vf)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if r, ok := strings.CutPrefix(sc.Text(), "> "); ok {
			f.Add([]byte(r))
		}
	}
	vf.Close()
	for _, name := range []string{"dialect-a.jsonl", "dialect-b.jsonl"} {
		b, err := os.ReadFile("../testdata/interop/" + name)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			f.Add(line)
		}
	}
	tm := newTestMux()
	close(tm.release) // nothing may block
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, body []byte) {
		reply := transport.ServeJSON(ctx, tm, body, transport.Peer{Network: "fuzz"})
		items, batch := protocol.DecodeRequests(body)
		if reply == nil {
			for _, it := range items {
				if it.Err != nil || !it.IsNotification() {
					t.Fatalf("no reply to %q", body)
				}
			}
			return
		}
		if !jsontext.Value(reply).IsValid() {
			t.Fatalf("reply is not valid JSON: %s", reply)
		}
		var replies []jsontext.Value
		if batch {
			if err := json.Unmarshal(reply, &replies); err != nil {
				t.Fatalf("batch reply is not an array: %s", reply)
			}
		} else {
			replies = []jsontext.Value{reply}
			if !items[0].IsNotification() && items[0].Err == nil {
				checkID(t, reply, items[0].ID)
			}
		}
		for _, r := range replies {
			var w struct {
				JSONRPC string         `json:"jsonrpc"`
				Result  jsontext.Value `json:"result"`
				Error   jsontext.Value `json:"error"`
				ID      jsontext.Value `json:"id"`
			}
			if err := json.Unmarshal(r, &w); err != nil {
				t.Fatalf("reply element is not an object: %s", r)
			}
			if w.JSONRPC != "2.0" || w.ID == nil || (w.Result == nil) == (w.Error == nil) {
				t.Fatalf("not a JSON-RPC 2.0 response: %s", r)
			}
		}
	})
}

func checkID(t *testing.T, reply []byte, id jsontext.Value) {
	t.Helper()
	if !bytes.HasSuffix(reply, append(append([]byte(`,"id":`), id...), '}')) {
		t.Fatalf("id %s not echoed byte for byte: %s", id, reply)
	}
}
