package protocol_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/genjson"
	"github.com/leaguectl/leaguectl/protocol"
)

// TestGeneratedUpToDate: json_gen.go is what genjson makes of the structs
// as they are now (run go generate ./protocol after changing a message).
func TestGeneratedUpToDate(t *testing.T) {
	is := is.New(t)
	want, err := genjson.Generate()
	is.NoErr(err)
	got, err := os.ReadFile("json_gen.go")
	is.NoErr(err)
	if !bytes.Equal(got, want) {
		t.Fatal("json_gen.go is stale: run go generate ./protocol")
	}
}

// encodable is every type with a generated encoder.
func encodable() []reflect.Type {
	out := []reflect.Type{reflect.TypeFor[protocol.Ack]()}
	for _, mt := range protocol.MessageTypes() {
		out = append(out, reflect.TypeOf(protocol.New(mt)).Elem())
	}
	return out
}

// strs are strings that test escaping: quotes, controls, HTML, line
// separators, non-ASCII, invalid UTF-8 (which json refuses).
var strs = []string{"", "P01", "league.v2", `a "quoted" \ back/slash`, "tab\tnew\nline\x00\x1f", "<b>&amp;</b>",
	"\u2028\u2029", "é日本🎲", "\x7f", "bad\xffutf8", "E002", "even", "ODD"}

// fill sets v (settable) to random contents.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt([]int64{0, 1, -1, 7, 1 << 40, -1 << 62}[r.IntN(6)])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Pointer:
		if r.IntN(3) == 0 || depth > 4 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		switch r.IntN(3) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + r.IntN(3)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch r.IntN(3) {
		case 0:
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + r.IntN(4) {
				k := reflect.New(v.Type().Key()).Elem()
				fill(r, k, depth+1)
				e := reflect.New(v.Type().Elem()).Elem()
				fill(r, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Interface:
		vals := []any{nil, "x", 3.5, true, map[string]any{"k": "v"}, []any{1.0, "a"}}
		if x := vals[r.IntN(len(vals))]; x != nil {
			v.Set(reflect.ValueOf(x))
		}
	}
}

// sameAsMarshal checks that AppendJSON encodes v byte for byte as
// json.Marshal does, or fails where it does.
func sameAsMarshal(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v, json.Deterministic(true))
	got, gerr := protocol.AppendJSON([]byte("prefix"), v)
	switch {
	case (werr == nil) != (gerr == nil):
		t.Fatalf("%T: json error %v, AppendJSON error %v", v, werr, gerr)
	case werr != nil:
	case !bytes.Equal(got, append([]byte("prefix"), want...)):
		t.Fatalf("%T:\njson:       %s\nAppendJSON: %s", v, want, got[len("prefix"):])
	}
}

// TestAppendJSONMatchesMarshal: on random values of every type, the
// generated encoders write what json.Marshal writes.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range encodable() {
		t.Run(typ.Name(), func(t *testing.T) {
			for range 500 {
				p := reflect.New(typ)
				fill(r, p.Elem(), 0)
				sameAsMarshal(t, p.Interface())
			}
			sameAsMarshal(t, reflect.New(typ).Interface())                     // zero
			sameAsMarshal(t, reflect.Zero(reflect.PointerTo(typ)).Interface()) // nil pointer
		})
	}
}

// FuzzAppendJSON: whatever a peer sends that decodes as a message is
// encoded again as json.Marshal would.
func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte(`{"protocol":"league.v2","match_id":"R1M1","choices":{"P02":"odd","P01":"even"},"score":{"P01":3}}`))
	f.Add([]byte(`{"sender":"player:P01","game_result":{"status":"WIN","choices":{"b":"\u2028","a":"<>"}},"details":{"technical_losses":[{"player_id":"P02"}]}}`))
	f.Add([]byte(`{"standings":[{"player_id":"P01","points":3}],"matches":[{"match_id":"R1M1"}],"referee_meta":{"game_types":[]}}`))
	types := encodable()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range types {
			p := reflect.New(typ)
			if json.Unmarshal(data, p.Interface()) == nil {
				sameAsMarshal(t, p.Interface())
			}
		}
	})
}

// TestAppendJSONScores: a result's score map, written without json for
// whole numbers, strings, booleans and nulls, is what json writes, at the
// edges of number formatting too.
func TestAppendJSONScores(t *testing.T) {
	values := []any{0.0, math.Copysign(0, -1), 1.0, -1.0, 3.0, 1e20, 1e21, -1e21, float64(1 << 53), 0.5, 1e-7,
		int64(math.MaxInt64), int64(math.MinInt64), math.MaxInt32, math.MinInt32, 0, -3, "", "é\"<", "bad\xff", true, false, nil, []any{1.0}, map[string]any{}}
	for _, v := range values {
		sameAsMarshal(t, &protocol.MatchResult{Score: map[string]any{"P01": v, "P02": 3.0, "\u2028": nil}})
	}
	sameAsMarshal(t, &protocol.MatchResult{Score: map[string]any{}})
}
