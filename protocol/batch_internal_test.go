package protocol

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"
)

// batchBodies are batches the fast path must take, and must read as the
// full path does.
var batchBodies = []string{
	`[{"jsonrpc":"2.0","method":"ping","id":1}]`,
	"[ {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1} ,\n\t{\"jsonrpc\":\"2.0\",\"method\":\"notify\"} ]",
	`[{"jsonrpc":"2.0","method":"ping","params":{"a":"}][{","b":[{"c":"]"},{}]},"id":"x"},{"jsonrpc":"2.0","method":"b","id":2}]`,
	`[{"jsonrpc":"2.0","method":"notify_round_completed","params":{"protocol":"league.v2","message_type":"ROUND_COMPLETED",` +
		`"sender":"league_manager:LM01","timestamp":"2026-01-01T00:00:00Z","conversation_id":"c","league_id":"l",` +
		`"round_id":1,"matches_completed":2,"next_round_id":2},"id":7},` +
		`{"jsonrpc":"2.0","method":"ping","id":8}]`,
	// A round's end as our manager sends it to our players.
	`[{"jsonrpc":"2.0","method":"LEAGUE_STANDINGS_UPDATE","params":{"protocol":"league.v2","message_type":"LEAGUE_STANDINGS_UPDATE",` +
		`"round_id":1,"standings":[{"rank":1,"player_id":"P1","played":1,"wins":1,"draws":0,"losses":0,"technical_losses":0,"points":3},` +
		`{"rank":2,"player_id":"P2","played":1,"wins":0,"draws":0,"losses":1,"technical_losses":0,"points":0}]},"id":1},` +
		`{"jsonrpc":"2.0","method":"ROUND_ANNOUNCEMENT","params":{"protocol":"league.v2","message_type":"ROUND_ANNOUNCEMENT","round_id":2,` +
		`"matches":[{"match_id":"R2M1","game_type":"even_odd","player_A_id":"P1","player_B_id":"P2","referee_endpoint":"http://h:1/mcp"}]},"id":2}]`,
}

// notFast are batches the fast path must leave to the full path.
var notFast = []string{
	// Escapes are left to json, as in a single request.
	`[{"jsonrpc":"2.0","method":"ping","params":{"a":"}]\"[{","b":[{"c":"\\"},{}]},"id":"x"},{"jsonrpc":"2.0","method":"b","id":2}]`,
	`[]`, `[1]`, `[{"jsonrpc":"2.0","method":"ping","id":1},2]`, `[{"method":"ping","id":1}]`,
	`[{"jsonrpc":"2.0","method":"ping","id":1}`, `[{"jsonrpc":"2.0","method":"ping","id":1}]x`,
	`[{"jsonrpc":"2.0","method":"ping","id":1} {"jsonrpc":"2.0","method":"ping","id":2}]`,
	`[{"jsonrpc":"2.0","method":"ping","id":1,}]`, `[{"jsonrpc":"2.0","method":"p}ing","id":1]`,
	"[" + strings.Repeat(`{"jsonrpc":"2.0","method":"ping"},`, MaxBatch) + `{"jsonrpc":"2.0","method":"ping"}]`,
}

func TestDecodeBatchFastAgreesWithFull(t *testing.T) {
	for _, body := range batchBodies {
		is := is.New(t)
		fast, ok := decodeBatchFast([]byte(body), Reading{})
		is.True(ok) // the fast path takes it
		full, batch := decodeBatchFull([]byte(body))
		is.True(batch)
		is.True(reflect.DeepEqual(fast, full)) // the same items
		for _, it := range fast {
			is.Equal(it.Err, nil)
		}
		sameBatchKept(t, []byte(body))
	}
	for _, body := range notFast {
		_, ok := decodeBatchFast([]byte(body), Reading{})
		is.New(t).True(!ok) // left to the full path
	}
}

func FuzzDecodeBatchFast(f *testing.F) {
	for _, b := range append(batchBodies, notFast...) {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameBatchKept(t, body)
		fast, ok := decodeBatchFast(body, Reading{})
		if !ok {
			return
		}
		full, batch := decodeBatchFull(body)
		if !batch || !reflect.DeepEqual(fast, full) {
			t.Fatalf("fast %+v, full %+v (batch %v)", fast, full, batch)
		}
	})
}

// responsesByJSON is DecodeResponses as json would split the array.
func responsesByJSON(body []byte) ([]Response, bool) {
	var elems []jsontext.Value
	if json.Unmarshal(body, &elems, jsontext.AllowDuplicateNames(true)) != nil || len(elems) > maxBatchReplies {
		return nil, false
	}
	out := make([]Response, len(elems))
	for i, e := range elems {
		r, err := DecodeResponse(e)
		if err != nil {
			return nil, false
		}
		out[i] = r
	}
	return out, true
}

func FuzzDecodeResponses(f *testing.F) {
	f.Add([]byte(`[{"jsonrpc":"2.0","result":{},"id":1},{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":2}]`))
	f.Add([]byte(`[{"jsonrpc":"2.0","result":{"a":"]}\"{"},"id":1} ]`))
	f.Add([]byte(`[{"jsonrpc":"2.0","result":1,"id":1},2]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := DecodeResponses(body)
		want, ok := responsesByJSON(trimJSONSpace(body))
		if (err == nil) != ok {
			t.Fatalf("DecodeResponses error %v, json says ok %v", err, ok)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
}

// TestBatchFastOnOddElements: elements the fast path may take or leave
// (invalid UTF-8, lone surrogates, duplicate names, odd numbers) are
// read as the full path reads them whenever it takes them.
func TestBatchFastOnOddElements(t *testing.T) {
	for _, el := range []string{
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"x\":\"\xff\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"x\":\"\\ud800\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"params\":{\"a\":\"\xff\"}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1,\"params\":{\"a\":1,\"a\":2}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1e400}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":-0}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":01}",
	} {
		body := []byte("[" + el + "]")
		fast, ok := decodeBatchFast(body, Reading{})
		full, batch := decodeBatchFull(body)
		if ok && !(batch && reflect.DeepEqual(fast, full)) {
			t.Errorf("%q: fast %+v, full %+v", el, fast, full)
		}
	}
}

// TestBatchDepthAsJSON: json's nesting limit counts the batch's array, so
// an element nested to the limit is refused in a batch though valid alone;
// the fast path leaves deep elements to the full path, which says so.
func TestBatchDepthAsJSON(t *testing.T) {
	is := is.New(t)
	for _, d := range []int{maxDepth - 2, maxDepth, 9997, 9998, 9999} {
		nested := strings.Repeat("[", d) + strings.Repeat("]", d)
		body := []byte(`[{"jsonrpc":"2.0","method":"ping","params":{"a":` + nested + `},"id":1}]`)
		fast, ok := decodeBatchFast(body, Reading{})
		full, batch := decodeBatchFull(body)
		if ok {
			is.True(batch && reflect.DeepEqual(fast, full)) // taken: as the full path reads it
		}
		items, batch := DecodeRequests(body)
		is.Equal(batch, d < 9998) // a batch, or one parse error for all of it
		if !batch {
			is.Equal(items[0].Err.Code, CodeParseError)
		}
		reply := []byte(`[{"jsonrpc":"2.0","result":{"a":` + nested + `},"id":1}]`)
		_, err := DecodeResponses(reply)
		_, jsonOK := responsesByJSON(reply)
		is.Equal(err == nil, jsonOK) // the reply to a batch, as json splits it
	}
}

// sameBatchKept checks the fast path keeping tables unread (as for a
// player) against it decoding in full: it takes the same batches and reads
// the same requests from them.
func sameBatchKept(t *testing.T, body []byte) {
	t.Helper()
	full, ok := decodeBatchFast(body, Reading{})
	kept, kok := decodeBatchFast(body, Reading{KeepTables: true})
	if ok != kok || len(full) != len(kept) {
		t.Fatalf("keeping tables takes the batch %v, decoding in full %v:\n%s", kok, ok, body)
	}
	for i := range kept {
		sameKept(t, body, full[i].Decoded, kept[i].Decoded)
		kept[i].Decoded = full[i].Decoded
		if !reflect.DeepEqual(kept[i], full[i]) {
			t.Fatalf("keeping tables reads request %d differently:\n%s\nkept %+v\nfull %+v", i, body, kept[i], full[i])
		}
	}
	tables := NewTableCache()
	var first []Message
	for pass := range 2 { // the first checks its tables and holds them, the second finds them held
		shared, sok := decodeBatchFast(body, Reading{KeepTables: true, Tables: tables})
		if sok != ok || len(shared) != len(full) {
			t.Fatalf("keeping tables in a TableCache takes the batch %v, decoding in full %v:\n%s", sok, ok, body)
		}
		for i := range shared {
			sameKept(t, body, full[i].Decoded, shared[i].Decoded)
			if pass == 0 {
				first = append(first, shared[i].Decoded)
			} else {
				sameHeld(t, body, first[i], shared[i].Decoded)
			}
			shared[i].Decoded = full[i].Decoded
			if !reflect.DeepEqual(shared[i], full[i]) {
				t.Fatalf("keeping tables in a TableCache reads request %d differently:\n%s\nkept %+v\nfull %+v", i, body, shared[i], full[i])
			}
		}
	}
}
