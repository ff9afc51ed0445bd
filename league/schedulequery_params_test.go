package league_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestScheduleParamsOfTheWrongType: query_params of GET_SCHEDULE that are
// not what they must be (round_id an integer, player_id a string of the id
// alphabet) are refused as any field of the wrong type is, before the
// query is answered: a JSON-RPC error, E002 (-32002), naming the field.
func TestScheduleParamsOfTheWrongType(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		h := newHarness(t, n, league.Options{})
		defer h.stop()
		p1 := h.player("P01")
		h.player("P02")
		for _, c := range []struct {
			name   string
			params any
			field  string
		}{
			{"round as a string", map[string]any{"round_id": "2"}, "query_params.round_id"},
			{"round as a fraction", map[string]any{"round_id": 1.5}, "query_params.round_id"},
			{"round as a list", map[string]any{"round_id": []int{2}}, "query_params.round_id"},
			{"player as a number", map[string]any{"player_id": 7}, "query_params.player_id"},
			{"player not an id", map[string]any{"player_id": "P 01"}, "query_params.player_id"},
			{"params not an object", []int{2}, "query_params"},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				for _, asker := range []struct{ method, sender, token string }{
					{protocol.MethodLeagueQuery, "player:P01", p1.token},
					{league.MethodAdminQuery, "", ""},
				} {
					params := map[string]any{"protocol": protocol.Version, "message_type": protocol.TypeLeagueQuery,
						"query_type": protocol.QuerySchedule, "query_params": c.params}
					if asker.sender != "" {
						params["sender"], params["auth_token"] = asker.sender, asker.token
						params["timestamp"], params["conversation_id"] = "2025-01-15T10:30:00Z", "conv-test"
					}
					err := h.call(asker.method, params, nil)
					code, rpc := codes(err)
					is.Equal(code, protocol.ErrInvalidMessageFormat) // E002
					is.Equal(rpc, -32002)
					is.True(strings.Contains(err.Error(), c.field)) // naming the field
				}
			})
		}
	})
}
