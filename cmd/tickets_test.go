package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/config"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// watched is a network whose players' handlers are watched: every
// message of a match to a player is seen first.
type watched struct {
	transport.Network
	seen func(player string, r *transport.Request)
}

func (w *watched) Listen(name string, h transport.Handler) (transport.Listener, error) {
	if id, ok := strings.CutPrefix(name, "player-"); ok {
		next := h
		h = transport.HandlerFunc(func(ctx context.Context, r *transport.Request) (any, error) {
			w.seen(id, r)
			return next.ServeLeague(ctx, r)
		})
	}
	return w.Network.Listen(name, h)
}

// matchMessage is what a watched request says of itself: its type, match
// and auth_token, read from the message handed over or from its params.
func matchMessage(r *transport.Request) (t protocol.MessageType, match, sender, token string) {
	t, _ = protocol.MethodType(r.Method)
	switch t {
	case protocol.TypeGameInvitation, protocol.TypeChooseParityCall, protocol.TypeGameOver, protocol.TypeGameError:
	default:
		return "", "", "", ""
	}
	var m struct {
		MatchID   string `json:"match_id"`
		Sender    string `json:"sender"`
		AuthToken string `json:"auth_token"`
	}
	if r.Msg != nil {
		env := r.Msg.Env()
		m.Sender, m.AuthToken = env.Sender, env.AuthToken
		switch msg := r.Msg.(type) {
		case *protocol.GameInvitation:
			m.MatchID = msg.MatchID
		case *protocol.ChooseParityCall:
			m.MatchID = msg.MatchID
		case *protocol.GameOver:
			m.MatchID = msg.MatchID
		case *protocol.GameError:
			m.MatchID = msg.MatchID
		}
	} else {
		_ = json.Unmarshal(r.Params, &m)
	}
	return t, m.MatchID, m.Sender, m.AuthToken
}

// TestWholeLeagueWithTickets: a whole league of our agents, on every
// network, plays with match tickets: every message of a match to a player
// carries a ticket (never the token shown every player), and no player
// has a technical loss. A stranger's parity call, made to each player as
// its first match begins, with the match's id and its referee's name, is
// refused, and the league goes on as if it had not been made.
func TestWholeLeagueWithTickets(t *testing.T) {
	cfg := config.Default()
	ticket := regexp.MustCompile(`^tok_referee_REF0[1-3]_[0-9]+_[0-9a-f]{32}$`)
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		const players = 7
		var mu sync.Mutex
		endpoints := map[string]string{}
		asked := map[string]bool{}
		var refusals, answers, messages int
		var wrong []string
		stranger, guess := n.Client(5*time.Second), protocol.ShownToken(protocol.RoleReferee, "REF01", "a-guess")
		net := &watched{Network: n}
		net.seen = func(id string, r *transport.Request) {
			typ, match, sender, token := matchMessage(r)
			if typ == "" || token == guess {
				return // not a match's, or the stranger's own
			}
			mu.Lock()
			messages++
			if !ticket.MatchString(token) {
				wrong = append(wrong, fmt.Sprintf("%s to %s: auth_token %q", typ, id, token))
			}
			first := typ == protocol.TypeGameInvitation && !asked[id]
			asked[id] = true
			ep := endpoints["player-"+id]
			mu.Unlock()
			if !first {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var reply protocol.ChooseParityResponse
			err := stranger.Call(transport.NoRetry(ctx), ep, protocol.MethodChooseParity, &protocol.ChooseParityCall{
				Envelope: protocol.Envelope{Protocol: protocol.Version, MessageType: protocol.TypeChooseParityCall, Sender: sender,
					Timestamp: protocol.FormatTimestamp(time.Now()), ConversationID: "conv-" + cfg.LeagueID + "-" + match,
					LeagueID: cfg.LeagueID, AuthToken: guess},
				MatchID: match, PlayerID: id, GameType: protocol.GameEvenOdd}, &reply)
			mu.Lock()
			if c := protocol.CodeOf(err); c == protocol.ErrAuthTokenInvalid {
				refusals++
			} else {
				answers++
				wrong = append(wrong, fmt.Sprintf("the stranger's call to %s: %v %q", id, err, reply.ParityChoice))
			}
			mu.Unlock()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		defer n.CloseIdle()
		spec := leagueSpec{cfg: cfg, seed: 31, players: players, referees: 3, maxConcurrent: 2,
			strategies: strategiesOf(t, "adaptive", "winstay", "random"),
			onListen: func(name, ep string) {
				mu.Lock()
				endpoints[name] = ep
				mu.Unlock()
			}}
		lc, err := runLocalLeague(ctx, net, n.Client(cfg.Timeouts.Generic), spec, slog.New(slog.DiscardHandler))
		is.NoErr(err)
		checkInvariants(t, lc, players, cfg.Scoring) // no technical loss among them
		mu.Lock()
		defer mu.Unlock()
		is.Equal(wrong, nil)           // every message of a match carried a ticket; no stranger was answered
		is.Equal(refusals, players)    // each player refused the stranger
		is.Equal(answers, 0)           // and told it nothing
		is.True(messages >= 3*players) // the matches went through the watch

		// The same seed without a stranger: the same standings.
		again := playLeague(t, n, leagueSpec{cfg: cfg, seed: 31, players: players, referees: 3, maxConcurrent: 2,
			strategies: strategiesOf(t, "adaptive", "winstay", "random")})
		is.Equal(again.FinalStandings, lc.FinalStandings)
	})
}

// serveCmd runs a serve-* command in this process with args and returns
// the endpoint it prints first, and what waits for its end and gives its
// exit code; it is stopped when the test ends.
func serveCmd(t *testing.T, env []string, args ...string) (endpoint string, wait func() int) {
	t.Helper()
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := ExitCode(Run(ctx, append(args, "--log-level", "error"), pw, io.Discard))
		pw.Close()
		done <- code
	}()
	code := -1
	wait = func() int {
		if code < 0 {
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s did not end", args[0])
			}
		}
		return code
	}
	t.Cleanup(func() { cancel(); wait() })
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("%s did not start: exit %d", args[0], wait())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return strings.TrimSpace(line), wait
}

// TestRegistrationTokenFlags: serve-manager --registration-token admits
// only the players that carry it: a serve-player without it is refused
// (E003) and exits 3, as a registration refused; one given it by
// LEAGUECTL_REGISTRATION_TOKEN (or --registration-token) registers.
func TestRegistrationTokenFlags(t *testing.T) {
	is := is.New(t)
	mgr, _ := serveCmd(t, nil, "serve-manager", "--port", "0", "--db", ":memory:", "--registration-token", "reg-s3cret")
	_, wait := serveCmd(t, nil, "serve-player", "--port", "0", "--manager", mgr, "--id", "P01")
	is.Equal(wait(), 3) // refused: no token
	_, wait = serveCmd(t, nil, "serve-player", "--port", "0", "--manager", mgr, "--id", "P02", "--registration-token", "a-guess")
	is.Equal(wait(), 3) // refused: another token
	serveCmd(t, []string{registrationTokenEnv, "reg-s3cret"}, "serve-player", "--port", "0", "--manager", mgr, "--id", "P03")
	serveCmd(t, nil, "serve-player", "--port", "0", "--manager", mgr, "--id", "P04", "--registration-token", "reg-s3cret")
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := (&http.Client{}).Get(strings.TrimSuffix(mgr, "/mcp") + "/health")
		is.NoErr(err)
		var h struct {
			Players int `json:"players"`
		}
		err = json.UnmarshalRead(resp.Body, &h)
		resp.Body.Close()
		is.NoErr(err)
		if h.Players == 2 {
			break // P03 and P04, and no other
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d players registered, want 2", h.Players)
		}
		time.Sleep(10 * time.Millisecond) // polling /health, as the end-to-end tests do
	}
}
