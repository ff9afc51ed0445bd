// Package refproto is issue 8's reference prototype, rebuilt so that it can
// be run beside leaguectl in the same minutes: a match of seven
// request/response exchanges, each a JSON-RPC call encoded and decoded with
// encoding/json on both sides, moved either through Go channels or over
// loopback HTTP with net/http. The issue measured it "outside the project"
// at 9–11 µs an exchange through channels (about 25,000 matches/s on 2
// cores) and 22–25 µs over HTTP (about 6,000 matches/s), and set its
// targets from those numbers. This machine's speed moves by tens of
// percent within minutes, so benchtable runs the prototype next to each
// league: its rate is the yardstick of the minute the league ran in.
//
// It is a measuring tool, not an agent: it plays no game and checks only
// that every reply answers its call.
package refproto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ExchangesPerMatch is the prototype's match: seven calls, as the issue
// counted them.
const ExchangesPerMatch = 7

// envelope is the protocol's envelope, as the prototype carries it.
type envelope struct {
	Protocol       string `json:"protocol"`
	MessageType    string `json:"message_type"`
	Sender         string `json:"sender"`
	Timestamp      string `json:"timestamp"`
	ConversationID string `json:"conversation_id"`
	AuthToken      string `json:"auth_token"`
}

type parityContext struct {
	OpponentID string `json:"opponent_id"`
	RoundID    int    `json:"round_id"`
}

// call is a CHOOSE_PARITY_CALL's params.
type call struct {
	envelope
	MatchID  string        `json:"match_id"`
	PlayerID string        `json:"player_id"`
	GameType string        `json:"game_type"`
	Context  parityContext `json:"context"`
	Deadline string        `json:"deadline"`
}

// reply is a CHOOSE_PARITY_RESPONSE.
type reply struct {
	envelope
	MatchID      string `json:"match_id"`
	PlayerID     string `json:"player_id"`
	ParityChoice string `json:"parity_choice"`
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Method  string `json:"method"`
	Params  call   `json:"params"`
}

type response struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Result  reply  `json:"result"`
}

// serve decodes a request, answers it and encodes the response: the
// player's side of an exchange.
func serve(body []byte) ([]byte, error) {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	p := req.Params
	choice := "even"
	if p.Context.RoundID%2 == 1 {
		choice = "odd"
	}
	return json.Marshal(response{JSONRPC: "2.0", ID: req.ID, Result: reply{
		envelope: envelope{Protocol: "league.v2", MessageType: "CHOOSE_PARITY_RESPONSE",
			Sender: "player:" + p.PlayerID, Timestamp: time.Now().UTC().Format(time.RFC3339),
			ConversationID: p.ConversationID, AuthToken: "tok-" + p.PlayerID},
		MatchID: p.MatchID, PlayerID: p.PlayerID, ParityChoice: choice,
	}})
}

// newCall is the call a referee makes in match m.
func newCall(m int) request {
	return request{JSONRPC: "2.0", Method: "choose_parity", Params: call{
		envelope: envelope{Protocol: "league.v2", MessageType: "CHOOSE_PARITY_CALL", Sender: "referee:REF01",
			Timestamp: time.Now().UTC().Format(time.RFC3339), ConversationID: fmt.Sprintf("conv-m%d", m),
			AuthToken: "0123456789abcdef0123456789abcdef"},
		MatchID: fmt.Sprintf("R1M%d", m), PlayerID: fmt.Sprintf("P%02d", m%100), GameType: "even_odd",
		Context:  parityContext{OpponentID: "P99", RoundID: m},
		Deadline: time.Now().Add(30 * time.Second).UTC().Format(time.RFC3339),
	}}
}

// exchange makes the referee's side of call c, numbered id, through
// roundTrip, which moves bytes to the player and back.
func exchange(ctx context.Context, id int, c *request, roundTrip func(context.Context, []byte) ([]byte, error)) error {
	c.ID = id
	body, err := json.Marshal(c)
	if err != nil {
		return err
	}
	out, err := roundTrip(ctx, body)
	if err != nil {
		return err
	}
	var resp response
	if err := json.Unmarshal(out, &resp); err != nil {
		return err
	}
	if resp.ID != id || resp.Result.PlayerID != c.Params.PlayerID || resp.Result.ParityChoice == "" {
		return fmt.Errorf("reply %d does not answer call %d", resp.ID, id)
	}
	return nil
}

// play runs matches matches of ExchangesPerMatch exchanges on workers
// goroutines at once, each with its own roundTrip (from newTrip), and
// returns the matches played per second of wall time.
func play(ctx context.Context, matches, workers int, newTrip func() func(context.Context, []byte) ([]byte, error)) (float64, error) {
	if matches < 1 || workers < 1 {
		return 0, errors.New("refproto: matches and workers must be positive")
	}
	var next atomic.Int64 // the next match to play
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		trip := newTrip()
		wg.Go(func() {
			for {
				m := int(next.Add(1)) - 1
				if m >= matches {
					return
				}
				c := newCall(m)
				for x := range ExchangesPerMatch {
					if err := exchange(ctx, m*ExchangesPerMatch+x, &c, trip); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(matches) / elapsed.Seconds(), nil
}

// Channels plays matches through Go channels: each of workers referees
// has a player goroutine that decodes its calls and encodes the replies.
func Channels(ctx context.Context, matches, workers int) (float64, error) {
	var players sync.WaitGroup
	var stops []chan struct{}
	defer func() {
		for _, s := range stops {
			close(s)
		}
		players.Wait()
	}()
	return play(ctx, matches, workers, func() func(context.Context, []byte) ([]byte, error) {
		in, out, stop := make(chan []byte), make(chan []byte), make(chan struct{})
		stops = append(stops, stop)
		players.Go(func() {
			for {
				select {
				case body := <-in:
					resp, err := serve(body)
					if err != nil {
						resp = []byte(err.Error())
					}
					select {
					case out <- resp:
					case <-stop: // its caller gave up (ctx): nobody takes it
						return
					}
				case <-stop:
					return
				}
			}
		})
		return func(ctx context.Context, body []byte) ([]byte, error) {
			select {
			case in <- body:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			select {
			case resp := <-out:
				return resp, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	})
}

// maxBody bounds what the prototype's server reads of a request.
const maxBody = 1 << 20

// HTTP plays matches over loopback HTTP: one net/http server (on a free
// port of 127.0.0.1) answers every call, and workers referees post their
// calls through one client that keeps a connection per referee.
func HTTP(ctx context.Context, matches, workers int) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			resp, err := serve(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(resp)
		}),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	tr := &http.Transport{MaxIdleConns: workers, MaxIdleConnsPerHost: workers, IdleConnTimeout: 30 * time.Second}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer func() {
		tr.CloseIdleConnections()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
	}()
	url := "http://" + ln.Addr().String() + "/mcp"
	return play(ctx, matches, workers, func() func(context.Context, []byte) ([]byte, error) {
		return func(ctx context.Context, body []byte) ([]byte, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
			if err != nil {
				return nil, err
			}
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("refproto: %s: %s", resp.Status, out)
			}
			return out, nil
		}
	})
}
