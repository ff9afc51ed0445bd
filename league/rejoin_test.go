package league_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// statusAgent serves get_registration_status as this implementation's
// agents do, saying registered as long as registered is set.
func statusAgent(t *testing.T, n *transporttest.Net, name string, registered *atomic.Bool) string {
	t.Helper()
	mux := transport.NewMux(nil)
	mux.HandleFunc(protocol.MethodGetRegistrationStatus, func(context.Context, *transport.Request) (any, error) {
		return map[string]any{"registered": registered.Load()}, nil
	})
	return n.Serve(t, name, mux)
}

// TestRejoin: an agent that registers again at its own endpoint, asking
// for its own id or none, after a restart of its own (its endpoint says it
// is not registered) keeps its id and gets a new token, recorded before
// the answer, which a restarted manager knows; its old token is worth
// nothing from then on. A player may do so in a running league. While the
// agent at the endpoint says it is registered, or says nothing (an
// endpoint of another implementation, or nobody there), it is E017 as
// before: no one takes the place of an agent that runs.
func TestRejoin(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		path := filepath.Join(t.TempDir(), "league.db")
		s := openStore(t, path)
		h := newHarness(t, n, league.Options{Store: s})
		var p1Up, refUp atomic.Bool
		p1 := statusAgent(t, n, "p1", &p1Up)
		ref := statusAgent(t, n, "ref", &refUp)
		first, err := h.registerPlayer("player:P01", p1)
		is.NoErr(err)
		_, err = h.registerPlayer("player:P02", endpoint("p2"))
		is.NoErr(err)
		r1, err := h.registerReferee("referee:REF01", ref, 1)
		is.NoErr(err)
		p1Up.Store(true)
		refUp.Store(true)

		// Running, and saying so: E017, as before.
		_, err = h.registerPlayer("player:P01", p1)
		code, _ := codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration)
		_, err = h.registerPlayer("player:pending", endpoint("p2")) // nobody there to ask
		code, _ = codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration)
		_, err = h.registerReferee("referee:REF01", ref, 1)
		code, _ = codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration)
		p1Up.Store(false)
		_, err = h.registerPlayer("player:P02", p1) // another's id at its endpoint, restarted or not
		code, _ = codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration)
		_, err = h.registerReferee("referee:pending", p1, 1) // another role
		code, _ = codes(err)
		is.Equal(code, protocol.ErrDuplicateRegistration)
		p1Up.Store(true)
		is.NoErr(h.mgr.Start(context.Background()))

		// Restarted: P01 registers again, in a running league.
		p1Up.Store(false)
		again, err := h.registerPlayer("player:P01", p1)
		is.NoErr(err)
		is.Equal(again.Status, protocol.StatusAccepted)
		is.Equal(again.PlayerID, "P01")             // its own id
		is.True(again.AuthToken != first.AuthToken) // a new token
		is.True(again.SignsMessages)
		_, err = query[scheduleData](h, protocol.MethodLeagueQuery, "player:P01", first.AuthToken, protocol.QuerySchedule, "")
		code, _ = codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // the old one is worth nothing
		is.True(mustQuery[scheduleData](h, "player:P01", again.AuthToken, protocol.QuerySchedule, "").Success)

		refUp.Store(false)
		r2, err := h.registerReferee("referee:pending", ref, 1) // no id asked for: its own
		is.NoErr(err)
		is.Equal(r2.RefereeID, "REF01")
		is.True(r2.AuthToken != r1.AuthToken)
		is.Equal(h.status().Players, 2) // nobody new
		is.Equal(h.status().Referees, 1)

		// A manager restarted on the store knows the new tokens.
		h.stop()
		is.NoErr(s.Close())
		h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: openStore(t, path)})
		defer h2.stop()
		is.True(mustQuery[scheduleData](h2, "player:P01", again.AuthToken, protocol.QuerySchedule, "").Success)
		_, err = query[scheduleData](h2, protocol.MethodLeagueQuery, "player:P01", first.AuthToken, protocol.QuerySchedule, "")
		code, _ = codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid)
	})
}
