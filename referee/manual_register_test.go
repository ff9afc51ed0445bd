package referee_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

const otherToken = "tok-ref-other-manager-0123456789"

// managerWithToken is a fake manager that assigns REF07 and token.
func managerWithToken(token string) *fakeManager {
	fm := newFakeManager()
	fm.register = func(req *protocol.RefereeRegisterRequest) (any, error) {
		return &protocol.RefereeRegisterResponse{
			Envelope:  mgrEnvelope(protocol.TypeRefereeRegisterResponse, req.ConversationID, token),
			Status:    protocol.StatusAccepted,
			RefereeID: "REF07",
		}, nil
	}
	return fm
}

func (h *harness) manualRegister(params any) (map[string]any, error) {
	var out map[string]any
	err := h.client.Call(context.Background(), h.refEP, referee.MethodManualRegister, params, &out)
	return out, err
}

// TestManualRegister: a referee whose manager cannot be reached is
// registered with another one by manual_register; Run stops trying the
// first, and the referee plays and reports for the second.
func TestManualRegister(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		nowhere, _ := n.Late(t, "manager-nowhere") // never served
		h := newHarness(t, n, baseOptions(), nil, nowhere)
		h.start()
		h.logs.wait(t, "registration failed, retrying") // Run is running, and retrying the unreachable manager

		fm := newFakeManager()
		h.mgr, h.mgrEP = fm, n.Serve(t, "manager-2", fm.mux)
		out, err := h.manualRegister(map[string]any{"manager_endpoint": h.mgrEP})
		is.NoErr(err)
		is.Equal(out, map[string]any{"role": "referee", "referee_id": assignedID, "state": referee.StateRegistered,
			"registered": true, "manager": h.mgrEP, "league_id": mgrLeague}) // registered with the new manager

		req := recv(t, fm.regs, "REFEREE_REGISTER_REQUEST")
		is.Equal(req.Envelope, protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeRefereeRegisterRequest,
			Sender: "referee:" + requestedID, Timestamp: epochText, ConversationID: "conv-register-" + requestedID,
			LeagueID: optsLeague}) // the request Register sends
		is.Equal(req.RefereeMeta.ContactEndpoint, h.refEP)

		// Matches are played, and reported to the new manager.
		a, b := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.startMatch("R1M1", a, b)
		rep := h.report()
		is.Equal(rep.MatchID, "R1M1")
		is.Equal(rep.AuthToken, refToken) // the new manager's token

		// Run's registration loop has stopped: no second registration
		// reaches the new manager, and Run goes on until stopped.
		is.NoErr(ignoreCanceled(h.stopAndWait()))
		is.Equal(len(fm.regs), 0)
	})
}

// TestManualRegisterMovesToAnotherManager: a registered referee told to
// register with another manager takes that manager's id and token, reports
// there, and refuses the first manager's token from then on.
func TestManualRegisterMovesToAnotherManager(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		first := newFakeManager()
		h := newHarness(t, n, baseOptions(), first, "")
		h.startRegistered()
		recv(t, first.regs, "first registration")

		second := managerWithToken(otherToken)
		secondEP := n.Serve(t, "manager-2", second.mux)
		out, err := h.manualRegister(map[string]any{"protocol": protocol.Version, "manager_endpoint": secondEP})
		is.NoErr(err)
		is.Equal(out["referee_id"], "REF07")
		is.Equal(out["manager"], secondEP)
		req := recv(t, second.regs, "second registration")
		is.Equal(req.Sender, "referee:"+assignedID) // it asks for the id it has

		a, b := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		_, err = h.send(h.startMatchMsg("R1M1", a, b)) // with the first manager's token
		is.Equal(protocol.CodeOf(err), protocol.ErrAuthTokenInvalid)

		h.token = otherToken
		h.startMatch("R1M1", a, b)
		rep := recv(t, second.reports, "report to the second manager")
		is.Equal(rep.Sender, "referee:REF07")
		is.Equal(rep.AuthToken, otherToken)
		is.Equal(len(first.reports), 0) // nothing for the first manager
	})
}

// TestManualRegisterRefusals: a bad endpoint is E018, a missing one E002,
// an unreachable manager the call's error (and the referee stays with its
// manager), and a caller from another host E003.
func TestManualRegisterRefusals(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		fm := newFakeManager()
		h := newHarness(t, n, baseOptions(), fm, "")
		h.startRegistered()
		for _, tc := range []struct {
			name   string
			params any
			code   protocol.Code
		}{
			{"ftp", map[string]any{"manager_endpoint": "ftp://127.0.0.1/mcp"}, protocol.ErrInvalidEndpoint},
			{"not a URL", map[string]any{"manager_endpoint": "127.0.0.1:8000"}, protocol.ErrInvalidEndpoint},
			{"no host", map[string]any{"manager_endpoint": "http:///mcp"}, protocol.ErrInvalidEndpoint},
			{"missing", map[string]any{}, protocol.ErrInvalidMessageFormat},
			{"no params", nil, protocol.ErrInvalidMessageFormat},
			{"wrong type", map[string]any{"manager_endpoint": 8000}, protocol.ErrInvalidMessageFormat},
			{"wrong protocol", map[string]any{"protocol": "league.v1", "manager_endpoint": h.mgrEP}, protocol.ErrProtocolMismatch},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, err := h.manualRegister(tc.params)
				is.Equal(protocol.CodeOf(err), tc.code)
			})
		}
		t.Run("unreachable", func(t *testing.T) {
			is := is.New(t)
			nowhere, _ := n.Late(t, "manager-nowhere")
			_, err := h.manualRegister(map[string]any{"manager_endpoint": nowhere})
			is.Equal(protocol.CodeOf(err), protocol.ErrServiceUnavailable) // E016
			var status map[string]any
			is.NoErr(h.client.Call(context.Background(), h.refEP, protocol.MethodGetRegistrationStatus, nil, &status))
			is.Equal(status["manager"], h.mgrEP) // still its manager
		})
		t.Run("from another host", func(t *testing.T) {
			is := is.New(t)
			body := protocol.AppendRequest(nil, []byte("1"), referee.MethodManualRegister,
				[]byte(`{"manager_endpoint":"`+h.mgrEP+`"}`))
			reply := transport.ServeJSON(context.Background(), h.ref.Handler(), body,
				transport.Peer{Network: "http", Addr: "192.0.2.7:41000", Loopback: false})
			resp, err := protocol.DecodeResponse(reply)
			is.NoErr(err)
			is.True(resp.Error != nil)
			is.Equal(resp.Error.LeagueCode(), protocol.ErrAuthenticationFailed) // E003
			is.Equal(len(fm.regs), 1)                                           // no registration was made
		})
	})
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// TestManualRegisterDoesNotWaitForRun: manual_register answers at once
// while an attempt of Run's hangs on a manager that never answers, and that
// attempt does not take the referee back when it ends.
func TestManualRegisterDoesNotWaitForRun(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		hanging := make(chan struct{}, 16)
		stuck := transport.NewMux(nil)
		stop := make(chan struct{})
		stuck.HandleFunc(string(protocol.TypeRefereeRegisterRequest), func(ctx context.Context, _ *transport.Request) (any, error) {
			hanging <- struct{}{}
			select {
			case <-ctx.Done():
			case <-stop:
			}
			return nil, protocol.Errorf(protocol.ErrTimeout, "never")
		})
		stuckEP := n.Serve(t, "manager-stuck", stuck)
		t.Cleanup(func() { close(stop) })
		h := newHarness(t, n, baseOptions(), nil, stuckEP)
		h.start()
		recv(t, hanging, "Run's registration attempt")

		fm := newFakeManager()
		h.mgr, h.mgrEP = fm, n.Serve(t, "manager-2", fm.mux)
		start := time.Now()
		out, err := h.manualRegister(map[string]any{"manager_endpoint": h.mgrEP})
		is.NoErr(err)
		is.True(time.Since(start) < baseOptions().CallTimeout) // not after Run's attempt timed out
		is.Equal(out["manager"], h.mgrEP)

		a, b := h.serve(newFakePlayer("P01", "even")), h.serve(newFakePlayer("P02", "odd"))
		h.startMatch("R1M1", a, b)
		is.Equal(h.report().AuthToken, refToken) // reported to the manager it was told
	})
}
