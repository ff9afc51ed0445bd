package cmd

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// TestWholeSchedule: the parts of a schedule, asked for by the round each
// answer names next, are printed as one answer: the first's members, in
// their order, with every round in its data.
func TestWholeSchedule(t *testing.T) {
	is := is.New(t)
	parts := map[int]string{
		3: `{"rounds":[{"round_id":3,"matches":[]}],"next_round_id":4}`,
		4: `{"rounds":[{"round_id":4,"matches":[]}]}`,
	}
	var asked []int
	ask := func(q *protocol.LeagueQuery) (jsontext.Value, jsontext.Value, error) {
		asked = append(asked, q.QueryParams.RoundID)
		is.Equal(q.QueryParams.PlayerID, "P01") // the player asked about, in every part
		d := jsontext.Value(parts[q.QueryParams.RoundID])
		return jsontext.Value(`{"x":1,"data":` + string(d) + `}`), d, nil
	}
	first := `{"protocol":"league.v2","data":{"rounds":[{"round_id":1,"matches":[]},{"round_id":2,"matches":[]}],"next_round_id":3},"success":true,"extra":[1]}`
	q := &protocol.LeagueQuery{QueryType: protocol.QuerySchedule, QueryParams: &protocol.QueryParams{PlayerID: "P01"}}
	raw, data, err := wholeSchedule(ask, q, jsontext.Value(first), jsontext.Value(`{"rounds":[{"round_id":1,"matches":[]},{"round_id":2,"matches":[]}],"next_round_id":3}`))
	is.NoErr(err)
	is.Equal(asked, []int{3, 4})
	rounds := `{"rounds":[{"round_id":1,"matches":[]},{"round_id":2,"matches":[]},{"round_id":3,"matches":[]},{"round_id":4,"matches":[]}]}`
	is.Equal(string(data), rounds)
	is.Equal(string(raw), `{"protocol":"league.v2","data":`+rounds+`,"success":true,"extra":[1]}`)
	is.Equal(q.QueryParams.RoundID, 0) // the caller's query as it was

	// A manager whose next round goes back is not followed round and round.
	parts[4] = `{"rounds":[{"round_id":4,"matches":[]}],"next_round_id":3}`
	_, _, err = wholeSchedule(ask, q, jsontext.Value(first), jsontext.Value(`{"rounds":[],"next_round_id":3}`))
	is.True(err != nil)
}

// TestCallBusy: a query the manager refuses as busy (E016) is asked again,
// a few times; any other error is the command's at once.
func TestCallBusy(t *testing.T) {
	is := is.New(t)
	calls := 0
	err := callBusy(t.Context(), func() error {
		if calls++; calls < 3 {
			return protocol.Errorf(protocol.ErrServiceUnavailable, "busy")
		}
		return nil
	})
	is.NoErr(err)
	is.Equal(calls, 3) // answered on its third try

	calls = 0
	err = callBusy(t.Context(), func() error {
		calls++
		return protocol.Errorf(protocol.ErrInvalidMessageFormat, "no")
	})
	is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat)
	is.Equal(calls, 1) // not asked again
}

// TestNextMatchWhileStarting: a next-match with none, asked while the
// schedule is written, says so rather than that none is left.
func TestNextMatchWhileStarting(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	is.NoErr(writeQueryTable(&out, protocol.QueryNextMatch, jsontext.Value(`{"next_match":null,"state":"STARTING"}`)))
	is.Equal(out.String(), "The league is starting: its schedule is being written.\n")
}
