// Package refproto is issue 8's reference prototype, kept as benchmark
// code so that it can run beside leaguectl in the same minutes: a match of
// seven JSON-RPC exchanges, each call and each reply encoded and decoded
// with encoding/json at both ends, 64 matches at once, moved either through
// Go channels or over loopback HTTP with net/http. This machine's speed
// moves by ×2 within minutes, so benchtable runs the prototype next to each
// league and reports the league's rate as a ratio of the prototype's.
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

// Concurrent is how many matches the prototype plays at once, as the
// issue's did: each has its own player goroutine through channels, and
// its own keep-alive connection over HTTP.
const Concurrent = 64

// Result is what one run of the prototype played.
type Result struct {
	Matches int
	Elapsed time.Duration
}

// PerSecond is the run's rate in matches per second of wall time.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Matches) / r.Elapsed.Seconds()
}

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

// trip moves an encoded call to the player and its encoded reply back.
type trip func(context.Context, []byte) ([]byte, error)

// exchange makes the referee's side of call c, numbered id, through t.
func exchange(ctx context.Context, id int, c *request, t trip) error {
	c.ID = id
	body, err := json.Marshal(c)
	if err != nil {
		return err
	}
	out, err := t(ctx, body)
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

// rig is the prototype's Concurrent ways to a player, set up before a run
// so that the run times matches, not goroutines and listeners starting.
type rig struct {
	trips []trip
	close func()
}

// play plays matches on every trip of r at once, a match after another
// on each, until d has passed or limit matches have started (0: no
// limit); a match under way when d passes is played to its end and
// counted, so the rate holds whole matches over the time they took. Each
// trip starts one match however late its goroutine runs, so that a run
// on a loaded machine is still one of Concurrent matches at once.
func (r *rig) play(ctx context.Context, d time.Duration, limit int) (Result, error) {
	if d <= 0 && limit <= 0 {
		return Result{}, errors.New("refproto: nothing bounds the run (no duration, no limit)")
	}
	var next, played atomic.Int64
	errs := make(chan error, len(r.trips))
	var wg sync.WaitGroup
	start := time.Now()
	for _, t := range r.trips {
		wg.Go(func() {
			for first := true; ctx.Err() == nil && (first || d <= 0 || time.Since(start) < d); first = false {
				m := int(next.Add(1)) - 1
				if limit > 0 && m >= limit {
					return
				}
				c := newCall(m)
				for x := range ExchangesPerMatch {
					if err := exchange(ctx, m*ExchangesPerMatch+x, &c, t); err != nil {
						errs <- err
						return
					}
				}
				played.Add(1)
			}
		})
	}
	wg.Wait()
	res := Result{Matches: int(played.Load()), Elapsed: time.Since(start)}
	close(errs)
	if err := <-errs; err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// Channels plays the prototype through Go channels for about d: each of
// the Concurrent referees has a player goroutine that decodes its calls
// and encodes the replies.
func Channels(ctx context.Context, d time.Duration) (Result, error) {
	r := newChannels()
	defer r.close()
	return r.play(ctx, d, 0)
}

func newChannels() *rig {
	var players sync.WaitGroup
	stop := make(chan struct{})
	r := &rig{close: func() { close(stop); players.Wait() }}
	for range Concurrent {
		in, out := make(chan []byte), make(chan []byte)
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
		r.trips = append(r.trips, func(ctx context.Context, body []byte) ([]byte, error) {
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
		})
	}
	return r
}

// maxBody bounds what the prototype reads of a body.
const maxBody = 1 << 20

// HTTP plays the prototype over loopback HTTP for about d: one net/http
// server on a free port of 127.0.0.1 answers every call, and the
// Concurrent referees post theirs through a client and transport of the
// prototype's own, which keeps a connection for each.
func HTTP(ctx context.Context, d time.Duration) (Result, error) {
	r, err := newHTTP()
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	return r.play(ctx, d, 0)
}

func newHTTP() (*rig, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
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
	// Not http.DefaultTransport: its pool is shared with whatever else the
	// process does, and it keeps only two idle connections a host, so most
	// of the referees would dial anew for every call.
	tr := &http.Transport{MaxIdleConns: Concurrent, MaxIdleConnsPerHost: Concurrent, IdleConnTimeout: 30 * time.Second}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	r := &rig{close: func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	}}
	url := "http://" + ln.Addr().String() + "/mcp"
	post := func(ctx context.Context, body []byte) ([]byte, error) {
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
	for range Concurrent {
		r.trips = append(r.trips, post)
	}
	return r, nil
}
