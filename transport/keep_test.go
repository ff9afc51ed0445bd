package transport_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/leaguectl/leaguectl/internal/mutate"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// keepingMuxes are a Mux that keeps tables unread, one that keeps them in
// a TableCache of its own (which holds the tables of every body it is
// sent, so that each body is also read with the tables of others held),
// and one that does not keep them, whose handlers read the tables and
// answer with them.
func keepingMuxes() (keep, shared, full *transport.Mux) {
	mk := func(keepTables bool, tables *protocol.TableCache) *transport.Mux {
		m := transport.NewMux(nil)
		if keepTables {
			m.KeepTables(tables)
		}
		read := func(_ context.Context, r *transport.Request) (any, error) {
			switch msg := r.Msg.(type) {
			case *protocol.LeagueStandingsUpdate:
				return map[string]any{"rows": msg.Rows(), "message": msg}, nil
			case *protocol.RoundAnnouncement:
				return map[string]any{"count": msg.MatchCount(), "matches": msg.AllMatches(), "message": *msg}, nil
			}
			return r.Msg, nil
		}
		m.HandleFunc(string(protocol.TypeLeagueStandingsUpdate), read)
		m.HandleFunc(string(protocol.TypeRoundAnnouncement), read)
		return m
	}
	return mk(true, nil), mk(true, protocol.NewTableCache()), mk(false, nil)
}

const (
	keptStandingsCall = `{"jsonrpc":"2.0","method":"LEAGUE_STANDINGS_UPDATE","params":{"protocol":"league.v2","message_type":"LEAGUE_STANDINGS_UPDATE",` +
		`"sender":"league_manager:LM01","timestamp":"2026-11-21T05:29:41Z","round_id":1,"standings":[{"rank":1,"player_id":"P1","display_name":"A b",` +
		`"played":1,"wins":1,"draws":0,"losses":0,"technical_losses":0,"points":3},{"rank":2,"player_id":"P2","played":1,"wins":0,"draws":0,"losses":1,` +
		`"technical_losses":0,"points":0}]},"id":1}`
	keptAnnounceCall = `{"jsonrpc":"2.0","method":"ROUND_ANNOUNCEMENT","params":{"protocol":"league.v2","message_type":"ROUND_ANNOUNCEMENT",` +
		`"sender":"league_manager:LM01","timestamp":"2026-11-21T05:29:41Z","round_id":2,"matches":[{"match_id":"R2M1","game_type":"even_odd",` +
		`"player_A_id":"P1","player_B_id":"P2","referee_endpoint":"http://h:1/mcp"}]},"id":"x"}`
)

// TestMuxKeepTablesSameAnswers: a Mux that keeps tables unread answers
// every body as one that decodes them: the same results, the same errors
// with the same codes, field paths and ids, batches too, on mutations of
// a round's messages.
func TestMuxKeepTablesSameAnswers(t *testing.T) {
	keep, shared, full := keepingMuxes()
	bases := []string{keptStandingsCall, keptAnnounceCall, "[" + keptStandingsCall + "," + keptAnnounceCall + "]"}
	const alphabet = `{}[],:"\ nul0123456789-.abP_`
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		body := []byte(bases[r.IntN(len(bases))])
		body = mutate.Bytes(r, body, alphabet, 2)
		sameAnswers(t, keep, shared, full, body)
	}
}

// FuzzMuxKeepTables: whatever a player is sent, keeping tables unread does
// not change its answer.
func FuzzMuxKeepTables(f *testing.F) {
	for _, s := range []string{keptStandingsCall, keptAnnounceCall, "[" + keptStandingsCall + "," + keptAnnounceCall + "]"} {
		f.Add([]byte(s))
	}
	keep, _, full := keepingMuxes()
	f.Fuzz(func(t *testing.T, body []byte) {
		// A cache of its own per input, so that a failure replays from
		// the input alone.
		_, shared, _ := keepingMuxes()
		sameAnswers(t, keep, shared, full, body)
	})
}

func sameAnswers(t *testing.T, keep, shared, full *transport.Mux, body []byte) {
	t.Helper()
	want := full.ServeMessage(context.Background(), bytes.Clone(body), transport.Peer{})
	got := keep.ServeMessage(context.Background(), bytes.Clone(body), transport.Peer{})
	if !bytes.Equal(got, want) {
		t.Fatalf("answers differ on\n%s\nkeeping tables: %s\ndecoding them:  %s", body, got, want)
	}
	for range 2 { // the second finds the body's tables held
		got = shared.ServeMessage(context.Background(), bytes.Clone(body), transport.Peer{})
		if !bytes.Equal(got, want) {
			t.Fatalf("answers differ on\n%s\nkeeping tables in a TableCache: %s\ndecoding them: %s", body, got, want)
		}
	}
}
