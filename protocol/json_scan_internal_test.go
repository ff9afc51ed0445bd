package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"
)

// sameMembers checks readMembersFast against readMembers (through json) on
// a request or a response object: what the fast reader takes, json takes
// with the same raw members.
func sameMembers(t *testing.T, obj []byte) {
	t.Helper()
	var fm [4]jsontext.Value
	var sr wireRequest
	if readMembersFast(obj, true, requestMember, fm[:], -1, nil, Reading{}) {
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
	if readMembersFast(obj, false, responseMember, wm[:], -1, nil, Reading{}) {
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
	for _, line := range interopLines(t) {
		sameMembers(t, line)
		var m [3]jsontext.Value
		if readMembersFast(line, false, responseMember, m[:], -1, nil, Reading{}) {
			taken++
		}
	}
	if taken == 0 {
		t.Fatal("the fast reader took none of the captures")
	}
}

// FuzzReadMembersFast: on any body, the fast member reader agrees with
// json or leaves the body to it.
func FuzzReadMembersFast(f *testing.F) {
	for _, line := range interopLines(f) {
		f.Add(line)
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
	for _, cache := range []*Words{nil, NewWords()} {
		for _, w := range words {
			got := intern(cache, []byte(w))
			if got != w || unsafe.StringData(got) != unsafe.StringData(w) {
				t.Errorf("%q is not interned", w)
			}
		}
		for _, w := range []string{"P01", "even ", "ODD", "2026-11-21T05:29:41Z", "x"} {
			if got := intern(cache, []byte(w)); got != w {
				t.Errorf("intern(%q) = %q", w, got)
			}
		}
	}
}

// decodeOneByJSON is decodeOne without the scanner: the reference.
func decodeOneByJSON(obj []byte) Incoming {
	var w wireRequest
	if err := json.Unmarshal(obj, &w, jsontext.AllowDuplicateNames(true)); err != nil {
		return decodeOneFailed(err)
	}
	return w.incoming()
}

// sameRequest checks decodeOne, which skims params and decodes them as
// their method's message while reading, against the reference.
func sameRequest(t *testing.T, obj []byte) {
	t.Helper()
	got, want := decodeOne(obj), decodeOneByJSON(obj)
	if !bytes.Equal(got.ID, want.ID) || got.Method != want.Method || !bytes.Equal(got.Params, want.Params) ||
		(got.Params == nil) != (want.Params == nil) || !reflect.DeepEqual(got.Err, want.Err) {
		t.Fatalf("decodeOne differs on\n%s\ngot  %+v\nwant %+v", obj, got, want)
	}
	plain := decodeRequest(obj, false, Reading{}) // as for a shared broadcast's recipient
	plain.Decoded = got.Decoded
	if !reflect.DeepEqual(plain, got) {
		t.Fatalf("decodeRequest without decoding differs on\n%s\ngot  %+v\nwant %+v", obj, plain, got)
	}
	kept := decodeRequest(obj, true, Reading{KeepTables: true}) // as for a player
	sameKept(t, obj, got.Decoded, kept.Decoded)
	kept.Decoded = got.Decoded
	if !reflect.DeepEqual(kept, got) {
		t.Fatalf("decodeRequest keeping tables differs on\n%s\ngot  %+v\nwant %+v", obj, kept, got)
	}
	tables := NewTableCache()
	var first Message
	for pass := range 2 { // the first checks its tables and holds them, the second finds them held
		shared := decodeRequest(obj, true, Reading{KeepTables: true, Tables: tables})
		sameKept(t, obj, got.Decoded, shared.Decoded)
		if pass == 0 {
			first = shared.Decoded
		} else {
			sameHeld(t, obj, first, shared.Decoded)
		}
		shared.Decoded = got.Decoded
		if !reflect.DeepEqual(shared, got) {
			t.Fatalf("decodeRequest keeping tables in a TableCache differs on\n%s\ngot  %+v\nwant %+v", obj, shared, got)
		}
	}
	if got.Decoded == nil {
		return
	}
	typ, _ := MethodType(got.Method)
	ref := New(Canonical(typ))
	err := json.Unmarshal(got.Params, ref) // json itself, not DecodeMessage's fast path
	if err != nil || !reflect.DeepEqual(got.Decoded, ref) {
		t.Fatalf("params decoded while reading differ on\n%s\ngot  %#v\nwant %#v (%v)", obj, got.Decoded, ref, err)
	}
}

// decodeResponseByJSON is DecodeResponse without the scanner: the
// reference.
func decodeResponseByJSON(body []byte) (Response, error) {
	body = trimJSONSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return Response{}, errors.New("response is not a JSON-RPC object")
	}
	var w wireResponse
	if err := json.Unmarshal(body, &w, jsontext.AllowDuplicateNames(true)); err != nil {
		return Response{}, fmt.Errorf("response is not valid JSON: %s", describeSyntax(err))
	}
	return readResponse([3]jsontext.Value{w.Result, w.Error, w.ID})
}

// sameResponse checks DecodeResponse, and DecodeResponseInto for a reply
// of each of some generated types and none, against the reference
// followed by DecodeInto.
func sameResponse(t *testing.T, body []byte) {
	t.Helper()
	for _, mt := range []MessageType{"", TypeGameJoinAck, TypeChooseParityResponse, TypeStartMatchAck, TypeMatchResultReportAck} {
		var got, want Message
		var r Response
		var decoded bool
		var err error
		if mt == "" {
			r, err = DecodeResponse(body)
		} else {
			got, want = New(mt), New(mt)
			r, decoded, err = DecodeResponseInto(body, got)
		}
		wr, werr := decodeResponseByJSON(body)
		if err != nil && werr != nil && err.Error() != werr.Error() {
			t.Fatalf("errors differ on\n%s\ngot  %v\nwant %v", body, err, werr)
		}
		if (err == nil) != (werr == nil) || !bytes.Equal(r.Result, wr.Result) || !bytes.Equal(r.ID, wr.ID) ||
			!reflect.DeepEqual(r.Error, wr.Error) {
			t.Fatalf("DecodeResponseInto differs on\n%s\ngot  %+v, %v\nwant %+v, %v", body, r, err, wr, werr)
		}
		if !decoded {
			if mt != "" && !reflect.DeepEqual(got, New(mt)) {
				t.Fatalf("a reply not decoded was changed: %#v", got)
			}
			continue
		}
		if wr.Error != nil || json.Unmarshal(wr.Result, want) != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("reply decoded in the same pass differs on\n%s\ngot  %#v\nwant %#v", body, got, want)
		}
	}
}

// TestSkimmedMembers: requests and responses of both interop captures and
// of this implementation decode in one pass as in two.
func TestSkimmedMembers(t *testing.T) {
	bodies := [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":{"protocol":"league.v2","match_id":"R1M1","player_id":"P01","context":{"opponent_id":"P02","round_id":1}},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":{"match_id":"R1M1","match_id":"R1M2"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":{"match_id":"R\u00311M1"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":{"match_id":"R1M1",},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":{"a":"\"}"},"id":7}`),
		// Params read where they stand are read as strictly as on their own.
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":{"match_id":"R1M1","x":{"a":1,"a":2}},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":{"match_id":"R1M1"},"params":{"match_id":"R1M2"},"id":7}`),
		[]byte(`{"params":{"match_id":"R1M1","x":{"a":1,"a":2}},"method":"choose_parity","jsonrpc":"2.0","id":7}`),
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":{"match_id":"R1M1"} ,"id":7,"id":8}`),
		[]byte(`{"jsonrpc":"2.0","method":"no_such_method","params":{"match_id":"R1M1"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":  {"match_id":1},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","method":"choose_parity","params":[1,2],"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1","parity_choice":"even"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1","match_id":"x"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"result":{"bad"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"bad"},"result":{"match_id":"R1M1"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{}"}]},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"error":{"code":-32000,"message":"x"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1"]},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1\\"},"id":7}`),
		// A result decoded where it stands: what comes around and after it.
		[]byte(`{"id":7,"error":null,"result":{"match_id":"R1M1"},"jsonrpc":"2.0"}`),
		[]byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"x"},"result":{"match_id":"R1M1"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"error":null,"error":"late","id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"id":7,"id":8} x`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"id":7,"x":{"a":1,"a":2}}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1"},"id":7,"x":[}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1","x":{"content":[{"type":"text","text":"{}"}]}},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1","x":"content"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1","content":"x"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"structuredContent":{"match_id":"R1M1"},"x":"content"},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"structuredContent":{"match_id":"R1M1"}},"id":7}`),
		[]byte(`{"jsonrpc":"2.0","result":{"Content":[{"type":"text","text":"{}"}]},"id":7}`),
	}
	bodies = append(bodies, interopLines(t)...)
	decoded := 0
	for _, body := range bodies {
		sameRequest(t, body)
		sameResponse(t, body)
		if decodeOne(body).Decoded != nil {
			decoded++
		}
	}
	if decoded == 0 {
		t.Fatal("no request had its params decoded while it was read")
	}
}

// TestResultDecodedWhereItStands: a reply is decoded in the pass over
// the response wherever its result stands among the members, and an MCP
// result, a second result or an error leave it to the other path.
func TestResultDecodedWhereItStands(t *testing.T) {
	for _, c := range []struct {
		body    string
		decoded bool
	}{
		{`{"jsonrpc":"2.0","result":{"match_id":"R1M1","parity_choice":"odd"},"id":7}`, true},
		{`{"id":7,"jsonrpc":"2.0","result":{"parity_choice":"odd","match_id":"R1M1"}}`, true},
		{` {"error":null,"result":{"match_id":"R1M1","parity_choice":"odd","x":{"content":1}},"error":null,"id":7} `, true},
		{`{"jsonrpc":"2.0","result":{"match_id":"R1M1","parity_choice":"odd","content":null},"id":7}`, false},
		{`{"jsonrpc":"2.0","result":{"match_id":"R1M1","parity_choice":"odd","structuredContent":{}},"id":7}`, true}, // by the other path: no "content", not MCP
		{`{"jsonrpc":"2.0","result":{"match_id":"R1M1","parity_choice":"odd"},"result":{"match_id":"R1M2"},"id":7}`, false},
		{`{"jsonrpc":"2.0","result":{"match_id":"R1M1","parity_choice":"odd"},"error":{"code":1,"message":"x"},"id":7}`, false},
		{`{"jsonrpc":"2.0","result":{"match_id":"R\u00311M1","parity_choice":"odd"},"id":7}`, false},
	} {
		var reply ChooseParityResponse
		r, decoded, err := DecodeResponseInto([]byte(c.body), &reply)
		if err != nil || decoded != c.decoded {
			t.Fatalf("%s: decoded %v, %v; want decoded %v", c.body, decoded, err, c.decoded)
		}
		if decoded && (reply.MatchID != "R1M1" || reply.ParityChoice != "odd" || string(r.ID) != "7" || r.Result.Kind() != '{') {
			t.Fatalf("%s: %+v, %+v", c.body, reply, r)
		}
		if !decoded && reply != (ChooseParityResponse{}) {
			t.Fatalf("%s: a reply not decoded was changed: %+v", c.body, reply)
		}
	}
}

// FuzzSkimmedMembers: on any body, reading requests and responses in one
// pass gives what two passes give.
func FuzzSkimmedMembers(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"handle_game_invitation","params":{"round_id":1,"match_id":"R1M1","x":[1,{"y":"\"]"}]},"id":1}`))
	f.Add([]byte(`{"jsonrpc":"2.0","result":{"match_id":"R1M1","accept":true,"player_id":"P01"},"error":null,"id":1}`))
	for _, line := range interopLines(f) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameRequest(t, body)
		sameResponse(t, body)
	})
}

// TestSkimString: skimString ends a string where the byte-by-byte rule
// does (the first quote not escaped), for every string over quotes,
// backslashes and two other bytes up to 9 long, at every offset into an
// 8-byte word.
func TestSkimString(t *testing.T) {
	want := func(b []byte) int { // index just past the closing quote, or -1
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return -1
	}
	alphabet := []byte{'a', '"', '\\', 0xc3}
	var body []byte
	var walk func(n int)
	walk = func(n int) {
		for pad := range 8 {
			in := append(append(bytes.Repeat([]byte{' '}, pad), '"'), body...)
			s := scanner{b: in, i: pad}
			ok := s.skimString()
			w := want(in[pad:])
			if (w >= 0) != ok || (ok && s.i != pad+w) {
				t.Fatalf("skimString(%q) = %v at %d, want end %d", in[pad:], ok, s.i-pad, w)
			}
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			body = append(body, c)
			walk(n - 1)
			body = body[:len(body)-1]
		}
	}
	walk(9)
}

// interopLines are the requests and responses of both interop captures,
// one per line.
func interopLines(tb testing.TB) [][]byte {
	tb.Helper()
	var lines [][]byte
	for _, name := range []string{"dialect-a.jsonl", "dialect-b.jsonl"} {
		b, err := os.ReadFile("../testdata/interop/" + name)
		if err != nil {
			tb.Fatal(err)
		}
		lines = append(lines, bytes.Split(bytes.TrimSpace(b), []byte("\n"))...)
	}
	return lines
}

// TestMentionsContent: mentionsContent is bytes.Contains with "content".
func TestMentionsContent(t *testing.T) {
	for _, s := range []string{``, `"`, `"content"`, `content"`, `x"content"`, `{"content":1}`, `{"contents":1}`,
		`{"a":"content"}`, `{"mycontent":1}`, `{"c":"con","tent":"content\""}`, `""content"`, `{"ccontent":"content"}`} {
		if got, want := mentionsContent([]byte(s)), bytes.Contains([]byte(s), []byte(`"content"`)); got != want {
			t.Errorf("mentionsContent(%s) = %v, want %v", s, got, want)
		}
	}
}

func FuzzMentionsContent(f *testing.F) {
	f.Add([]byte(`{"content":[]}`))
	f.Add([]byte(`""content"content"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := mentionsContent(b), bytes.Contains(b, []byte(`"content"`)); got != want {
			t.Fatalf("mentionsContent(%q) = %v, want %v", b, got, want)
		}
	})
}

// TestRoomFor: the room made after an array's first element follows its
// size, and never takes more than twice the bytes left in memory.
func TestRoomFor(t *testing.T) {
	is := is.New(t)
	one := []StandingRow{{}}
	size := int(unsafe.Sizeof(StandingRow{}))
	// 125-byte rows with 8,000 bytes left: room for the 64 that follow.
	a := roomFor(one, 125, 8000, size)
	is.Equal(len(a), 1)
	is.True(cap(a) >= 1+64 && cap(a) <= 1+80)
	// A first element of 2 bytes before 1 MiB: held to 2 MiB of rows (and
	// the allocator's rounding of that, under 16 KiB).
	a = roomFor(one, 2, 1<<20, size)
	is.True(cap(a)*size <= 2<<20+16<<10)
	// Nothing left, or nothing read: no room made.
	is.Equal(cap(roomFor(one, 125, 0, size)), cap(one))
	is.Equal(cap(roomFor(one, 0, 100, size)), cap(one))

	// A decoded standings table gets its rows' room at once.
	var m LeagueStandingsUpdate
	row := `{"rank":1,"player_id":"P01","display_name":"Player 01","played":1,"wins":1,"draws":0,"losses":0,"technical_losses":0,"points":3}`
	table := []byte(`{"round_id":1,"standings":[` + row + strings.Repeat(","+row, 63) + `]}`)
	is.True(m.decodeJSON(table))
	is.Equal(len(m.Standings), 64)
	// Its allocations: the 128 strings, the first row's room and the rest's
	// (and one more under the race detector), where appending row by row
	// made seven for the rows.
	allocs := testing.AllocsPerRun(20, func() {
		var m LeagueStandingsUpdate
		m.decodeJSON(table)
	})
	is.True(allocs <= 2*64+3)
}
