package cmd

import (
	"testing"

	"github.com/leaguectl/leaguectl/league"
)

// TestKeyed: a database is given a new token key only when none of its
// agents' tokens was made with one (a new database, or one of schema 1);
// else the key it has must be found, never replaced.
func TestKeyed(t *testing.T) {
	random := league.AgentRecord{ID: "P01"}
	made := league.AgentRecord{ID: "P02", TokenNonce: []byte{1}}
	for _, tc := range []struct {
		saved *league.Saved
		want  bool
	}{
		{nil, false},
		{&league.Saved{}, false},
		{&league.Saved{Agents: []league.AgentRecord{random}}, false},
		{&league.Saved{Agents: []league.AgentRecord{random, made}}, true},
	} {
		if got := keyed(tc.saved); got != tc.want {
			t.Errorf("keyed(%+v) = %v, want %v", tc.saved, got, tc.want)
		}
	}
}
