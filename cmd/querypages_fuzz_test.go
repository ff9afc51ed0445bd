package cmd

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
)

// FuzzWholeSchedule feeds `query schedule` a manager's answers of any
// bytes: a first answer, and then, for each round it asks for next, the
// data of the parts. Whatever they are, the command must not panic nor
// ask for the same round twice, and what it prints as the answer is one
// JSON object holding the rounds it gathered.
func FuzzWholeSchedule(f *testing.F) {
	f.Add([]byte(`{"protocol":"league.v2","data":{"rounds":[{"round_id":1,"matches":[]}],"next_round_id":2},"success":true}`),
		[]byte(`{"rounds":[{"round_id":1,"matches":[]}],"next_round_id":2}`),
		[]byte(`{"rounds":[{"round_id":2,"matches":[]}]}`))
	f.Add([]byte(`{"data":{"rounds":[]}}`), []byte(`{"rounds":[]}`), []byte(``))
	f.Add([]byte(`{"data":1,"data":2}`), []byte(`{"rounds":[],"next_round_id":3}`), []byte(`{"rounds":[],"next_round_id":3}`))
	f.Add([]byte(`[1]`), []byte(`{"rounds":null,"next_round_id":-1}`), []byte(`{"next_round_id":9223372036854775807}`))
	f.Fuzz(func(t *testing.T, raw, data, part []byte) {
		var first map[string]jsontext.Value
		if json.Unmarshal(raw, &first) != nil {
			return // runQuery refuses such a first answer before it asks for more
		}
		asked := map[int]bool{}
		ask := func(q *protocol.LeagueQuery) (jsontext.Value, jsontext.Value, error) {
			round := q.QueryParams.RoundID
			if asked[round] {
				t.Fatalf("round %d asked for twice", round)
			}
			asked[round] = true
			if len(asked) > 3 {
				return nil, nil, errors.New("no more parts")
			}
			return jsontext.Value(`{"data":` + string(part) + `}`), jsontext.Value(part), nil
		}
		q := &protocol.LeagueQuery{QueryType: protocol.QuerySchedule}
		out, d, err := wholeSchedule(ask, q, jsontext.Value(raw), jsontext.Value(data))
		if err != nil {
			return
		}
		if !bytes.Equal(out, raw) { // rewritten: a JSON object holding the data
			var obj map[string]jsontext.Value
			if err := json.Unmarshal(out, &obj); err != nil {
				t.Fatalf("printed answer %q is not a JSON object: %v", out, err)
			}
			if !bytes.Equal(obj["data"], d) {
				t.Fatalf("printed answer's data %q, want %q", obj["data"], d)
			}
		}
	})
}
