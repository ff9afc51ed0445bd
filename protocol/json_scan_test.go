package protocol_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// sameAsUnmarshal checks the fast decoder against json.Unmarshal on data,
// decoding into a value of type typ that starts as a copy of what prep
// makes: what the fast decoder takes, json must take and decode to the
// same value; what it declines it must leave untouched. It reports whether
// the fast decoder took it.
func sameAsUnmarshal(t *testing.T, typ reflect.Type, data []byte, prep func(reflect.Value)) bool {
	t.Helper()
	fast, slow, before := reflect.New(typ), reflect.New(typ), reflect.New(typ)
	for _, v := range []reflect.Value{fast, slow, before} {
		prep(v.Elem())
	}
	took := protocol.FastDecode(data, fast.Interface())
	err := json.Unmarshal(data, slow.Interface())
	switch {
	case took && err != nil:
		t.Fatalf("%s: the fast decoder took what json refuses (%v):\n%s", typ.Name(), err, data)
	case took && !reflect.DeepEqual(fast.Interface(), slow.Interface()):
		t.Fatalf("%s: decoders differ on\n%s\nfast: %#v\njson: %#v", typ.Name(), data, fast.Elem().Interface(), slow.Elem().Interface())
	case !took && !reflect.DeepEqual(fast.Interface(), before.Interface()):
		t.Fatalf("%s: a declined decoding changed the value:\n%s\nnow:    %#v\nbefore: %#v", typ.Name(), data, fast.Elem().Interface(), before.Elem().Interface())
	}
	return took
}

// plain are strings the fast decoder takes as they are.
var plain = []string{"", "P01", "league.v2", "even", "odd", "WIN", "2025-01-15T10:30:00Z", "é日本🎲", "<b>&amp;</b>", "E002"}

// fillPlain is fill without strings that need escaping or any values.
func fillPlain(r *rand.Rand, v reflect.Value) {
	fill(r, v, 0)
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString(plain[r.IntN(len(plain))])
		case reflect.Pointer: // interfaces hold plain values already
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			m := reflect.MakeMap(v.Type())
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			for _, k := range keys {
				e := reflect.New(v.Type().Elem()).Elem()
				e.Set(v.MapIndex(k))
				walk(e)
				m.SetMapIndex(reflect.ValueOf(plain[r.IntN(len(plain))]).Convert(v.Type().Key()), e)
			}
			if !v.IsNil() {
				v.Set(m)
			}
		}
	}
	walk(v)
}

// rawOrAny reports whether t holds a field the fast decoder leaves to json.
func rawOrAny(t reflect.Type) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8 {
				return true
			}
			ft = ft.Elem()
		}
		if f.IsExported() && (ft.Kind() == reflect.Interface || (ft.Kind() == reflect.Struct && rawOrAny(ft))) {
			return true
		}
	}
	return false
}

func zero(reflect.Value) {}

// TestFastDecodeMatchesUnmarshal: on the encoding of random values of every
// type, the fast decoder decodes what json.Unmarshal decodes, and takes
// every message whose strings need no escapes.
func TestFastDecodeMatchesUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range encodable() {
		t.Run(typ.Name(), func(t *testing.T) {
			is := is.New(t)
			for range 300 {
				p := reflect.New(typ)
				fill(r, p.Elem(), 0)
				if data, err := json.Marshal(p.Interface()); err == nil {
					sameAsUnmarshal(t, typ, data, zero)
				}
				q := reflect.New(typ)
				fillPlain(r, q.Elem())
				data, err := json.Marshal(q.Interface())
				is.NoErr(err)
				took := sameAsUnmarshal(t, typ, data, zero)
				if !rawOrAny(typ) && !took {
					t.Fatalf("the fast decoder declined a plain message:\n%s", data)
				}
			}
		})
	}
}

// mutate returns data with one random edit: a byte dropped, doubled or
// replaced by one of JSON's own, or a span repeated.
func mutate(r *rand.Rand, data []byte) []byte {
	const alphabet = `{}[]:,"\ 0123456789-+.eEtrufalsn` + "\t\xff\xc3"
	out := bytes.Clone(data)
	if len(out) == 0 {
		return out
	}
	i := r.IntN(len(out))
	switch r.IntN(4) {
	case 0:
		return append(out[:i], out[i+1:]...)
	case 1:
		return append(out[:i+1], out[i:]...)
	case 2:
		out[i] = alphabet[r.IntN(len(alphabet))]
		return out
	default:
		j := i + r.IntN(len(out)-i)
		return append(out[:j], append(bytes.Clone(data[i:j]), data[j:]...)...)
	}
}

// TestFastDecodeMutated: on broken and odd variants of real messages, and
// into values that already hold data, the fast decoder agrees with json or
// declines without a trace.
func TestFastDecodeMutated(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	took := 0
	for _, typ := range encodable() {
		for range 300 {
			q := reflect.New(typ)
			fillPlain(r, q.Elem())
			data, err := json.Marshal(q.Interface())
			if err != nil {
				t.Fatal(err)
			}
			for range 1 + r.IntN(3) {
				data = mutate(r, data)
			}
			seed := r.Uint64()
			prefill := func(v reflect.Value) { fillPlain(rand.New(rand.NewPCG(seed, 0)), v) }
			if sameAsUnmarshal(t, typ, data, zero) {
				took++
			}
			sameAsUnmarshal(t, typ, data, prefill)
		}
	}
	if took == 0 {
		t.Fatal("the fast decoder took no mutated message at all")
	}
}

// FuzzFastDecode: whatever a peer sends, the fast decoder decodes as json
// does or leaves to json.
func FuzzFastDecode(f *testing.F) {
	for _, s := range seedBodies(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"protocol":"league.v2","match_id":"R1M1","choices":{"P02":"odd","P01":"even"},"score":{"P01":3,"x":[1,{"a":null}]}}`))
	f.Add([]byte(`{"standings":[{"player_id":"P01","points":3},null],"matches":[],"referee_meta":{"game_types":["even_odd",null]},"match_seed":18446744073709551615}`))
	f.Add([]byte(`{"round_id":-0,"x":{"y":1,"y":2},"next_round_id":null,"accept":true}`))
	f.Add([]byte("{}\x00"))
	types := encodable()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range types {
			sameAsUnmarshal(t, typ, data, zero)
		}
	})
}

// TestEmbeddingStructsAreNotMistaken: a struct of another package that
// embeds Envelope is encoded and decoded whole, not as the Envelope whose
// generated methods it inherits.
func TestEmbeddingStructsAreNotMistaken(t *testing.T) {
	is := is.New(t)
	type reply struct {
		protocol.Envelope
		Status string `json:"status"`
	}
	in := reply{Envelope: protocol.Envelope{Protocol: protocol.Version}, Status: protocol.StatusAccepted}
	data, err := protocol.Marshal(&in)
	is.NoErr(err)
	is.Equal(string(data), `{"protocol":"league.v2","status":"ACCEPTED"}`)
	var out reply
	is.NoErr(protocol.DecodeInto(data, &out))
	is.Equal(out, in)
}
