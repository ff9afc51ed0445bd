package league_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/referee"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestStrangerCannotAskOurPlayers: our players, registered in our
// league, refuse a stranger's parity call and invitation, before the
// league and during it, and a forged GAME_OVER leaves their state as it
// was; the league, our referee showing them the manager's tickets, plays
// through with no technical loss, and each player's record is its
// matches'.
func TestStrangerCannotAskOurPlayers(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{CallTimeout: 5 * time.Second})
		defer h.stop()
		client := n.Client(5 * time.Second)
		registered := make(chan string, 8)
		refSrv := &transport.Late{}
		refEP := n.Serve(t, "referee", refSrv)
		ref := referee.New(referee.Options{RequestedID: "REF01", MaxConcurrent: 2, ManagerEndpoint: h.ep, Endpoint: refEP,
			JoinTimeout: 5 * time.Second, ChoiceTimeout: 5 * time.Second, CallTimeout: 5 * time.Second,
			OnRegistered: func(id string) { registered <- id }}, client, nil)
		refSrv.Set(ref.Handler())
		h.wg.Go(func() { _ = ref.Run(h.ctx) })
		players := map[string]*player.Player{}
		endpoints := map[string]string{}
		for _, id := range []string{"P01", "P02", "P03", "P04"} {
			srv := &transport.Late{}
			ep := n.Serve(t, "player-"+id, srv)
			s, _ := player.StrategyByName("adaptive")
			p := player.New(player.Options{RequestedID: id, Strategy: s, Seed: 5, ManagerEndpoint: h.ep, Endpoint: ep,
				CallTimeout: 5 * time.Second, OnRegistered: func(id string) { registered <- id }}, client, nil)
			srv.Set(p.Handler())
			h.wg.Go(func() { _ = p.Run(h.ctx) })
			players[id], endpoints[id] = p, ep
		}
		for range 5 {
			select {
			case <-registered:
			case <-h.ctx.Done():
				t.Fatal("not every agent registered")
			}
		}

		stranger := func(what string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
			defer cancel()
			env := func(mt protocol.MessageType) protocol.Envelope {
				return protocol.Envelope{Protocol: protocol.Version, MessageType: mt, Sender: "referee:REF01", Timestamp: ts,
					ConversationID: "conv-" + leagueID + "-R1M1", LeagueID: leagueID,
					AuthToken: protocol.ShownToken(protocol.RoleReferee, "REF01", "a-guess")}
			}
			before := players["P01"].State()
			var reply protocol.ChooseParityResponse
			err := client.Call(ctx, endpoints["P01"], protocol.MethodChooseParity, &protocol.ChooseParityCall{
				Envelope: env(protocol.TypeChooseParityCall), MatchID: "R1M1", PlayerID: "P01", GameType: protocol.GameEvenOdd}, &reply)
			if err == nil {
				t.Errorf("%s: a stranger was told P01's move in R1M1: %q", what, reply.ParityChoice)
			}
			is.Equal(reply.ParityChoice, "") // nothing told
			err = client.Call(ctx, endpoints["P01"], protocol.MethodHandleGameInvitation, &protocol.GameInvitation{
				Envelope: env(protocol.TypeGameInvitation), RoundID: 1, MatchID: "R1M1", GameType: protocol.GameEvenOdd,
				RoleInMatch: protocol.PlayerA, OpponentID: "P02"}, nil)
			if err == nil {
				t.Errorf("%s: P01 took a stranger's invitation", what)
			}
			winner := "P01"
			err = client.Call(ctx, endpoints["P01"], protocol.MethodNotifyMatchResult, &protocol.GameOver{
				Envelope: env(protocol.TypeGameOver), RoundID: 1, MatchID: "R1M1", GameType: protocol.GameEvenOdd,
				GameResult: &protocol.GameResult{Status: protocol.ResultWin, WinnerPlayerID: &winner}}, nil)
			if err == nil {
				t.Errorf("%s: P01 took a forged GAME_OVER", what)
			}
			after := players["P01"].State()
			is.Equal(after.Stats, before.Stats)               // a forged GAME_OVER changed nothing
			is.Equal(len(after.History), len(before.History)) // nor the history
		}
		stranger("before the league")

		h.play()
		lc := h.wait()
		for _, r := range lc.FinalStandings {
			is.Equal(r.Played, 3)          // every match played
			is.Equal(r.TechnicalLosses, 0) // our referee was answered: its tickets are good
		}
		for id, p := range players {
			select {
			case <-p.Done():
			case <-h.ctx.Done():
				t.Fatalf("%s was not told the league is over", id)
			}
			st := p.State()
			is.Equal(st.Stats.Played, 3) // each GAME_OVER counted, once
			for _, row := range lc.FinalStandings {
				if row.PlayerID == id {
					is.Equal(st.Stats.Wins, row.Wins) // the player's record is its matches'
					is.Equal(st.Stats.Draws, row.Draws)
				}
			}
		}
		stranger("after the league")
	})
}

// askingPlayer registers a fake player P<id> that asks for match tickets
// when tickets is set, and returns it with the raw registration answer.
// It acknowledges and records broadcasts as harness.player's does.
func (h *harness) askingPlayer(id string, tickets bool) (*fakePlayer, jsontext.Value) {
	h.t.Helper()
	p := &fakePlayer{id: id, more: make(chan struct{}, 1), sent: h.sent}
	mux := transport.NewMux(nil)
	record := func(ctx context.Context, r *transport.Request) (any, error) {
		p.mu.Lock()
		p.got = append(p.got, r.Msg)
		p.mu.Unlock()
		select {
		case p.more <- struct{}{}:
		default:
		}
		return &protocol.Ack{Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: r.Type,
			Sender: "player:" + id, Timestamp: ts, ConversationID: r.Env.ConversationID}, Status: "ACK"}, nil
	}
	for _, t := range []protocol.MessageType{protocol.TypeRoundAnnouncement, protocol.TypeLeagueStandingsUpdate,
		protocol.TypeRoundCompleted, protocol.TypeLeagueCompleted} {
		mux.HandleFunc(string(t), record)
	}
	p.ep = h.n.Serve(h.t, "player-"+id, mux)
	req := &protocol.LeagueRegisterRequest{
		Envelope: envelope(protocol.TypeLeagueRegisterRequest, "player:"+id, ""),
		PlayerMeta: &protocol.PlayerMeta{DisplayName: "Player " + id[1:], Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd},
			ContactEndpoint: p.ep, MatchTickets: tickets},
	}
	var raw jsontext.Value
	if err := h.call(protocol.MethodRegisterPlayer, req, &raw); err != nil {
		h.t.Fatalf("register %s: %v", id, err)
	}
	var resp protocol.LeagueRegisterResponse
	if err := protocol.DecodeInto(raw, &resp); err != nil || resp.PlayerID != id {
		h.t.Fatalf("register %s: %s %v", id, raw, err)
	}
	p.token = resp.AuthToken
	return p, raw
}

// askingReferee is harness.referee's fake referee, asking for match
// tickets when tickets is set; it keeps the raw params of every
// START_MATCH in raws.
func (h *harness) askingReferee(id string, capacity int, mode refMode, tickets bool) (*fakeReferee, *rawStarts) {
	h.t.Helper()
	f := &fakeReferee{h: h, id: id, capacity: capacity, mode: mode,
		starts: make(chan *protocol.StartMatch, 100), acks: make(chan string, 100),
		completed: make(chan *protocol.LeagueCompleted, 1), remaining: map[int]int{}}
	raws := &rawStarts{}
	mux := transport.NewMux(nil)
	mux.HandleFunc(string(protocol.TypeStartMatch), func(ctx context.Context, r *transport.Request) (any, error) {
		raws.add(string(transporttest.Params(r)))
		return f.onStartMatch(ctx, r)
	})
	mux.HandleFunc(string(protocol.TypeLeagueCompleted), func(ctx context.Context, r *transport.Request) (any, error) {
		return &protocol.Ack{Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: r.Type,
			Sender: "referee:" + id, Timestamp: ts, ConversationID: r.Env.ConversationID}, Status: "ACK"}, nil
	})
	f.ep = h.n.Serve(h.t, "referee-"+id, mux)
	req := &protocol.RefereeRegisterRequest{
		Envelope: envelope(protocol.TypeRefereeRegisterRequest, "referee:"+id, ""),
		RefereeMeta: &protocol.RefereeMeta{DisplayName: "Referee " + id, Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd},
			ContactEndpoint: f.ep, MaxConcurrentMatches: capacity, MatchTickets: tickets},
	}
	var resp protocol.RefereeRegisterResponse
	if err := h.call(protocol.MethodRegisterReferee, req, &resp); err != nil || resp.RefereeID != id {
		h.t.Fatalf("register %s: %+v %v", id, resp, err)
	}
	if resp.MatchTickets != tickets {
		h.t.Fatalf("register %s: match_tickets %v, asked %v", id, resp.MatchTickets, tickets)
	}
	f.token = resp.AuthToken
	return f, raws
}

// rawStarts are the START_MATCH params a referee got, as they came.
type rawStarts struct {
	mu  sync.Mutex
	all []string
}

func (r *rawStarts) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, s)
}

func (r *rawStarts) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.all...)
}

// ticketOf is the ticket sm carries for player id, "" when none.
func ticketOf(sm *protocol.StartMatch, id string) string {
	if sm.PlayerA() == id {
		return sm.PlayerATicket
	}
	return sm.PlayerBTicket
}

// checkTicket checks that ticket is p's for match of referee ref, and
// gives its hand-over's number.
func checkTicket(t *testing.T, p *fakePlayer, ticket, match, ref string) uint64 {
	t.Helper()
	n, ok := protocol.CheckTicket(protocol.TicketKey(p.token), ticket, match, ref)
	if !ok {
		t.Fatalf("%q is not %s's ticket of %s for %s", ticket, p.id, match, ref)
	}
	return n
}

// TestMatchTickets: a player that asks for match tickets is told it gets
// them, one that does not is told nothing (no match_tickets in its
// answer). A referee that asks is given, with each START_MATCH, the
// ticket of each player that asked, made from that player's token, and
// none for the other. A referee that does not ask is sent no ticket: the
// players that asked are told first, signed with their tokens, that its
// messages carry none; the others are told nothing new.
func TestMatchTickets(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("a referee that takes them", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{})
			defer h.stop()
			ref, raws := h.askingReferee("REF01", 2, modeReport, true)
			p1, answer1 := h.askingPlayer("P01", true)
			p2, answer2 := h.askingPlayer("P02", false)
			p3, _ := h.askingPlayer("P03", true)
			is.True(strings.Contains(string(answer1), `"match_tickets":true`))
			is.True(!strings.Contains(string(answer2), `match_tickets`)) // nothing new to who did not ask
			h.play()
			for range 3 { // the matches of P01, P02 and P03
				sm := ref.nextStart()
				for _, p := range []*fakePlayer{p1, p2, p3} {
					if sm.PlayerA() != p.id && sm.PlayerB() != p.id {
						continue
					}
					if p == p2 {
						is.Equal(ticketOf(sm, p.id), "") // P02 asked for none
						continue
					}
					checkTicket(t, p, ticketOf(sm, p.id), sm.MatchID, "REF01")
				}
			}
			h.wait()
			for _, raw := range raws.get() {
				if strings.Contains(raw, `"P02"`) && strings.Contains(raw, "ticket") {
					is.True(strings.Count(raw, "_ticket") == 1) // one ticket, the other player's
				}
			}
			for _, p := range []*fakePlayer{p1, p3} {
				for _, m := range p.messages() {
					if ra, ok := m.(*protocol.RoundAnnouncement); ok {
						is.True(!ra.Ticketless()) // no word of a referee without tickets
					}
				}
			}
		})
		t.Run("a referee that takes none", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{})
			defer h.stop()
			p1, _ := h.askingPlayer("P01", true)
			p2, _ := h.askingPlayer("P02", false)
			ref, raws := h.askingReferee("REF01", 1, modeManual, false)
			h.play()
			sm := ref.nextStart()
			// P01 has been told before START_MATCH went.
			var word *protocol.RoundAnnouncement
			for _, m := range p1.messages() {
				if ra, ok := m.(*protocol.RoundAnnouncement); ok && ra.Ticketless() {
					word = ra
				}
			}
			is.True(word != nil) // P01 was told
			is.Equal(word.AuthToken, p1.token)
			is.Equal(len(word.Matches), 1)
			is.Equal(word.Matches[0].MatchID, sm.MatchID)
			is.Equal(word.Matches[0].RefereeID, "REF01")
			is.Equal(word.Matches[0].RefereeEndpoint, ref.ep)
			is.True(word.Matches[0].TicketlessAssignment > 0)
			status, err := ref.report(sm, "A")
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
			h.wait()
			is.True(!strings.Contains(raws.get()[0], "ticket")) // nothing of the extension to that referee
			for _, m := range p2.messages() {
				is.True(!strings.Contains(string(transporttest.Params(&transport.Request{Msg: m})), "ticketless")) // nor to P02
			}
		})
		t.Run("not promised by a manager that could not keep them", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{Store: openStore(t, filepath.Join(t.TempDir(), "league.db")), AllowUnknownTokens: true})
			defer h.stop()
			_, answer := h.askingPlayer("P01", true)
			is.True(!strings.Contains(string(answer), `match_tickets`)) // a store without a token key: no tickets after a restart
			h.askingReferee("REF01", 1, modeReport, false)
		})
	})
}

// TestTicketsOfEachHandOver: a match handed to another referee gets new
// tickets, of a later hand-over, each for its own referee; a manager
// restarted on its store still gives the tickets players and referees
// asked for, and numbers its hand-overs above those before the restart.
func TestTicketsOfEachHandOver(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("another referee", func(t *testing.T) {
			is := is.New(t)
			h := newHarness(t, n, league.Options{MatchTimeout: quietAfter})
			defer h.stop()
			slow, _ := h.askingReferee("REF01", 1, modeSilent, true)
			good, _ := h.askingReferee("REF02", 1, modeReport, true)
			p1, _ := h.askingPlayer("P01", true)
			h.askingPlayer("P02", true)
			h.play()
			first, second := slow.nextStart(), good.nextStart()
			is.Equal(first.MatchID, second.MatchID)
			n1 := checkTicket(t, p1, ticketOf(first, "P01"), first.MatchID, "REF01")
			n2 := checkTicket(t, p1, ticketOf(second, "P01"), second.MatchID, "REF02")
			is.True(n2 > n1) // a later hand-over: the first referee's ticket stops working
			h.wait()
		})
		t.Run("a restart", func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "league.db")
			s1 := openStore(t, path)
			h1 := newHarness(t, n, league.Options{Seed: 3, Store: s1})
			defer h1.stop()
			ref, _ := h1.askingReferee("REF01", 1, modeManual, true)
			p1, _ := h1.askingPlayer("P01", true)
			h1.askingPlayer("P02", true)
			h1.play()
			before := ref.nextStart()
			n1 := checkTicket(t, p1, ticketOf(before, "P01"), before.MatchID, "REF01")
			h1.stop()
			is.NoErr(s1.Close())

			h2 := newHarnessAt(t, n, "league_manager-restarted", league.Options{Store: openStore(t, path)})
			defer h2.stop()
			ref.h = h2
			h2.run()
			after := ref.nextStart()
			is.Equal(after.MatchID, before.MatchID)                                  // handed out again
			n2 := checkTicket(t, p1, ticketOf(after, "P01"), after.MatchID, "REF01") // with tickets still, made again
			is.True(n2 > n1)                                                         // of a later hand-over
			status, err := ref.report(after, "A")
			is.NoErr(err)
			is.Equal(status, protocol.StatusAccepted)
			h2.wait()
		})
	})
}

// registerPlayerWith registers a player whose registration carries token.
func (h *harness) registerPlayerWith(sender, endpoint, token string) (*protocol.LeagueRegisterResponse, error) {
	req := &protocol.LeagueRegisterRequest{
		Envelope:   envelope(protocol.TypeLeagueRegisterRequest, sender, token),
		PlayerMeta: &protocol.PlayerMeta{DisplayName: "Player " + sender[len(sender)-2:], Version: "1.0.0", GameTypes: []string{protocol.GameEvenOdd}, ContactEndpoint: endpoint},
	}
	var resp protocol.LeagueRegisterResponse
	if err := h.call(protocol.MethodRegisterPlayer, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// TestRegistrationToken: a manager with a registration token admits only
// the players whose registration carries it: none is E003, another is
// E012; referees are not asked for it; one without a registration token
// admits any player.
func TestRegistrationToken(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		h := newHarness(t, n, league.Options{RegistrationToken: "reg-s3cret"})
		defer h.stop()
		_, err := h.registerPlayer("player:P01", endpoint("p1"))
		code, rpc := codes(err)
		is.Equal(code, protocol.ErrAuthenticationFailed) // E003: no token
		is.Equal(rpc, -32001)
		_, err = h.registerPlayerWith("player:P01", endpoint("p1"), "a-guess")
		code, rpc = codes(err)
		is.Equal(code, protocol.ErrAuthTokenInvalid) // E012: not the league's
		is.Equal(rpc, -32001)
		is.Equal(h.status().Players, 0) // neither registered
		p, err := h.registerPlayerWith("player:P01", endpoint("p1"), "reg-s3cret")
		is.NoErr(err)
		is.Equal(p.Status, protocol.StatusAccepted)
		is.Equal(p.PlayerID, "P01")
		is.True(p.AuthToken != "reg-s3cret")                            // its own token, as any agent's
		r, err := h.registerReferee("referee:REF01", endpoint("r1"), 2) // referees are not asked for it
		is.NoErr(err)
		is.Equal(r.Status, protocol.StatusAccepted)

		open := newHarnessAt(t, n, "league_manager-open", league.Options{})
		defer open.stop()
		p, err = open.registerPlayer("player:P01", endpoint("p1"))
		is.NoErr(err)
		is.Equal(p.Status, protocol.StatusAccepted) // without a registration token, any player
	})
}
