package protocol

import (
	"bytes"
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// sameMembers checks readMembersFast against readMembers (through json) on
// a request or a response object: what the fast reader takes, json takes
// with the same raw members.
func sameMembers(t *testing.T, obj []byte) {
	t.Helper()
	var fm [4]jsontext.Value
	var sr wireRequest
	if readMembersFast(obj, true, requestMember, fm[:]) {
		fr := wireRequest{JSONRPC: fm[0], Method: fm[1], Params: fm[2], ID: fm[3]}
		if err := json.Unmarshal(obj, &sr, jsontext.AllowDuplicateNames(true)); err != nil {
			t.Fatalf("request: the fast reader took what json refuses (%v):\n%s", err, obj)
		}
		for i, pair := range [][2]jsontext.Value{{fr.JSONRPC, sr.JSONRPC}, {fr.Method, sr.Method}, {fr.Params, sr.Params}, {fr.ID, sr.ID}} {
			if !bytes.Equal(pair[0], pair[1]) || (pair[0] == nil) != (pair[1] == nil) {
				t.Fatalf("request member %d: fast %q, json %q in\n%s", i, pair[0], pair[1], obj)
			}
		}
		if m, ok := plainString(fr.Method); ok {
			var want string
			if err := json.Unmarshal(fr.Method, &want); err != nil || m != want {
				t.Fatalf("method %q read as %q (%v)", fr.Method, m, err)
			}
		}
	}
	var wm [3]jsontext.Value
	var sw wireResponse
	if readMembersFast(obj, false, responseMember, wm[:]) {
		fw := wireResponse{Result: wm[0], Error: wm[1], ID: wm[2]}
		if err := json.Unmarshal(obj, &sw, jsontext.AllowDuplicateNames(true)); err != nil {
			t.Fatalf("response: the fast reader took what json refuses (%v):\n%s", err, obj)
		}
		for i, pair := range [][2]jsontext.Value{{fw.Result, sw.Result}, {fw.Error, sw.Error}, {fw.ID, sw.ID}} {
			if !bytes.Equal(pair[0], pair[1]) || (pair[0] == nil) != (pair[1] == nil) {
				t.Fatalf("response member %d: fast %q, json %q in\n%s", i, pair[0], pair[1], obj)
			}
		}
	}
}

// TestReadMembersFastTakesCaptures: every request and response of both
// interop captures goes through the fast reader, and as json reads it.
func TestReadMembersFastTakesCaptures(t *testing.T) {
	taken := 0
	for _, name := range []string{"dialect-a.jsonl", "dialect-b.jsonl"} {
		b, err := os.ReadFile("../testdata/interop/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for line := range bytes.SplitSeq(bytes.TrimSpace(b), []byte("\n")) {
			sameMembers(t, line)
			var m [3]jsontext.Value
			if readMembersFast(line, false, responseMember, m[:]) {
				taken++
			}
		}
	}
	if taken == 0 {
		t.Fatal("the fast reader took none of the captures")
	}
}

// FuzzReadMembersFast: on any body, the fast member reader agrees with
// json or leaves the body to it.
func FuzzReadMembersFast(f *testing.F) {
	for _, name := range []string{"dialect-a.jsonl", "dialect-b.jsonl"} {
		b, err := os.ReadFile("../testdata/interop/" + name)
		if err != nil {
			f.Fatal(err)
		}
		for line := range bytes.SplitSeq(bytes.TrimSpace(b), []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","method":"x","params":{"a":1,"a":2},"id":1,"id":2}`))
	f.Add([]byte(`{"result":{"k":[1,2,{"k":null}]},"result":true,"error":null, "id" : "7" } `))
	f.Fuzz(func(t *testing.T, obj []byte) {
		sameMembers(t, obj)
	})
}
