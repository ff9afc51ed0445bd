package protocol

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestBatchFastTargeted: inputs random fuzzing is unlikely to build:
// known messages whose map[string]any fields nest around the scanner's
// depth limit, params before or after the method, duplicate names inside
// and outside params, notifications and every kind of id.
func TestBatchFastTargeted(t *testing.T) {
	env := `"protocol":"league.v2","message_type":"GAME_OVER","sender":"referee:R1","timestamp":"2026-01-01T00:00:00Z","conversation_id":"c","match_id":"M1"`
	var elems []string
	for d := 0; d <= 40; d++ {
		nested := strings.Repeat(`{"x":`, d) + "1" + strings.Repeat("}", d)
		arr := strings.Repeat(`[`, d) + "1" + strings.Repeat("]", d)
		for _, score := range []string{nested, `{"a":` + arr + `}`, `{"a":1,"a":` + nested + `}`} {
			params := `{` + env + `,"score":` + score + `}`
			for _, id := range []string{`,"id":1`, ``, `,"id":null`, `,"id":"s"`, `,"id":-0`, `,"id":1e400`, `,"id":1.5`} {
				elems = append(elems,
					`{"jsonrpc":"2.0","method":"notify_match_result","params":`+params+id+`}`,
					`{"jsonrpc":"2.0","params":`+params+`,"method":"notify_match_result"`+id+`}`,
					`{"params":`+params+id+`,"x":{"y":1,"y":2},"method":"notify_match_result","jsonrpc":"2.0"}`,
				)
			}
		}
	}
	taken, n := 0, 0
	for i, e := range elems {
		for _, body := range []string{
			"[" + e + "]",
			"[" + e + "," + elems[(i*7+3)%len(elems)] + "]",
			" [ " + e + " ,\n" + `{"jsonrpc":"2.0","method":"ping"}` + " ] ",
		} {
			n++
			fast, ok := decodeBatchFast([]byte(body), Reading{})
			full, batch := decodeBatchFull([]byte(body))
			if !ok {
				continue
			}
			taken++
			if !batch || !reflect.DeepEqual(fast, full) {
				t.Fatalf("%s:\nfast %s\nfull %s", body, dumpItems(fast), dumpItems(full))
			}
		}
	}
	t.Logf("%d of %d batches taken by the fast path, all as the full path reads them", taken, n)
	if taken < n/2 { // 5487 of 7749 when written: a fast path that declines everything compares nothing
		t.Fatalf("the fast path took only %d of %d batches", taken, n)
	}
}

func dumpItems(items []Incoming) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "{ID:%s Method:%s Err:%v Decoded:%#v}\n", it.ID, it.Method, it.Err, it.Decoded)
	}
	return b.String()
}
