package protocol

import (
	"bytes"
	"os"
	"testing"
	"unicode/utf8"
	"unsafe"

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

// TestPlainASCII: the eight-bytes-at-a-time test agrees with the plain
// definition on every byte at every position of strings of every length
// up to 24.
func TestPlainASCII(t *testing.T) {
	want := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return false
			}
		}
		return true
	}
	for n := 1; n <= 24; n++ {
		for pos := range n {
			for c := range 256 {
				b := bytes.Repeat([]byte("a"), n)
				b[pos] = byte(c)
				if got := plainASCII(string(b)); got != want(string(b)) || plainASCII(b) != got {
					t.Fatalf("plainASCII(%q) = %v", b, got)
				}
			}
		}
	}
}

// TestQuoted: the scanner's string reader, which looks at eight bytes at a
// time, ends and declines strings exactly as the byte-by-byte definition
// does, with every byte at every position of strings up to 24 long.
func TestQuoted(t *testing.T) {
	for n := 1; n <= 24; n++ {
		for pos := range n {
			for c := range 256 {
				text := bytes.Repeat([]byte("a"), n)
				text[pos] = byte(c)
				in := append(append([]byte{'"'}, text...), '"')
				end := bytes.IndexByte(text, '"')
				if end < 0 {
					end = n
				}
				body := text[:end]
				ok := utf8.Valid(body) && !bytes.ContainsFunc(body, func(r rune) bool { return r < 0x20 || r == '\\' })
				s := scanner{b: in}
				got, gotOK := s.quoted()
				if gotOK != ok || (ok && (!bytes.Equal(got, body) || s.i != end+2)) {
					t.Fatalf("quoted(%q) = %q, %v; want %q, %v", in, got, gotOK, body, ok)
				}
			}
		}
	}
}

// TestInterned: the words of every match come back as the package's own
// strings, and anything else as itself.
func TestInterned(t *testing.T) {
	words := []string{Version, GameEvenOdd, Even, Odd, ResultWin, ResultDraw, ResultLoss, ResultTechnicalLoss, PlayerA, PlayerB,
		StatusAccepted, string(TypeGameInvitation), string(TypeGameJoinAck), string(TypeChooseParityCall),
		string(TypeChooseParityResponse), string(TypeGameOver), string(TypeMatchResultReport), string(TypeStartMatch),
		MethodHandleGameInvitation, MethodChooseParity, MethodNotifyMatchResult, MethodReportMatchResult, MethodStartMatch}
	for _, w := range words {
		got := intern([]byte(w))
		if got != w || unsafe.StringData(got) != unsafe.StringData(w) {
			t.Errorf("%q is not interned", w)
		}
	}
	for _, w := range []string{"P01", "even ", "ODD", "2026-11-21T05:29:41Z", "x"} {
		if got := intern([]byte(w)); got != w {
			t.Errorf("intern(%q) = %q", w, got)
		}
	}
}
