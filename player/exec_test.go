//go:build unix

package player_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/matryer/is"
	"golang.org/x/sys/unix"

	"github.com/leaguectl/leaguectl/player"
	"github.com/leaguectl/leaguectl/player/exectest"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
	"github.com/leaguectl/leaguectl/transport/transporttest"
)

// TestMain lets the test binary run as the exec bots of these tests.
func TestMain(m *testing.M) {
	exectest.Main()
	os.Exit(m.Run())
}

func TestParseCommand(t *testing.T) {
	t.Run("words", func(t *testing.T) {
		for s, want := range map[string][]string{
			"python3 bot.py":                            {"python3", "bot.py"},
			"  python3\tbot.py  --level 3 ":             {"python3", "bot.py", "--level", "3"},
			`python3 'my bots/bot.py'`:                  {"python3", "my bots/bot.py"},
			`python3 "my bots/bot.py" --name "A \"B\""`: {"python3", "my bots/bot.py", "--name", `A "B"`},
			`./bot --say it\'s`:                         {"./bot", "--say", "it's"},
			`bot '' x`:                                  {"bot", "", "x"},
			`bot "a\nb" 'c\d'`:                          {"bot", `a\nb`, `c\d`},
			`bot --x=1 'a|b' "*.py" \$HOME`:             {"bot", "--x=1", "a|b", "*.py", "$HOME"},
			`sh -c 'cd bots && exec python3 bot.py'`:    {"sh", "-c", "cd bots && exec python3 bot.py"},
			`env MODE=fast python3 bot.py`:              {"env", "MODE=fast", "python3", "bot.py"},
			`a~ b#`:                                     {"a~", "b#"},
		} {
			is := is.New(t)
			got, err := player.ParseCommand(s)
			is.NoErr(err)       // s
			is.Equal(got, want) // the words of s
		}
	})
	t.Run("refused", func(t *testing.T) {
		for s, why := range map[string]string{
			"":                      "no program to run",
			"   ":                   "no program to run",
			"''":                    "no program to run",
			"python3 'bot.py":       "' is not closed",
			`python3 "bot.py`:       `" is not closed`,
			`bot \`:                 `ends with a \`,
			"bot | tee log":         `'|' needs a shell`,
			"bot > out":             `'>' needs a shell`,
			"bot; rm -rf x":         `';' needs a shell`,
			"bot &":                 `'&' needs a shell`,
			"python3 $HOME/bot.py":  `'$' needs a shell`,
			"bot `id`":              "'`' needs a shell",
			"python3 bots/*.py":     `'*' would be a pattern`,
			"python3 ~/bot.py":      `starting with '~'`,
			"bot # comment":         `starting with '#'`,
			"MODE=fast python3 bot": "env NAME=value",
		} {
			is := is.New(t)
			_, err := player.ParseCommand(s)
			is.True(err != nil)                         // refused
			is.True(strings.Contains(err.Error(), why)) // says why
		}
	})
}

// logBuffer is a JSON log kept for a test to read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func logger(level slog.Level) (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level})), b
}

// botRig is a player whose exec bot is of kind, and the file the bot
// appends what it reads to.
type botRig struct {
	*rig
	file string
	log  *logBuffer
}

// withBot is P01 registered as P01 with token tok-P01, served on n under
// name, with an exec bot of kind (args before its file) and exec's other
// settings; its bot is stopped when the test ends.
func withBot(t *testing.T, n *transporttest.Net, name string, exec player.Exec, kind string, args ...string) *botRig {
	t.Helper()
	file := filepath.Join(t.TempDir(), "bot.log")
	exec.Command = exectest.Command(kind, append(args, file)...)
	log, buf := logger(slog.LevelDebug)
	m := &manager{answer: accept("P01", "tok-P01")}
	mgr := n.Serve(t, "league_manager-"+name, m.mux())
	p := player.New(opts("odd", func(o *player.Options) { o.ManagerEndpoint, o.Exec = mgr, &exec }), n.Client(5*time.Second), log)
	t.Cleanup(func() { _ = p.Close() })
	ep := n.Serve(t, name, p.Handler())
	if err := p.Register(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	// No breaker: the calls that fail on purpose would open it.
	c := transport.NewClient(n, 5*time.Second, transport.WithBreaker(transport.Breaker{}))
	return &botRig{rig: &rig{p: p, ep: ep, c: c}, file: file, log: buf}
}

// botLog is what the bot has read so far.
func (r *botRig) botLog(t *testing.T) exectest.Log {
	t.Helper()
	l, err := exectest.ReadLog(r.file)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// killed is the pid of the bot process the player has killed, from its
// log: the bot's own log may not have it, for a bot killed before it
// had run far enough to write it (a loaded machine starts it slowly).
func (r *botRig) killed(t *testing.T) int {
	t.Helper()
	for line := range strings.Lines(r.log.String()) {
		var e struct {
			Msg string `json:"msg"`
			PID int    `json:"pid"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && strings.HasPrefix(e.Msg, "exec bot killed: ") && e.PID > 0 {
			return e.PID
		}
	}
	t.Fatalf("no bot killed in the player's log:\n%s", r.log.String())
	return 0
}

// ticketed is msg's envelope with a referee's ticket as its auth_token.
func ticketed[M interface{ Env() *protocol.Envelope }](msg M) M {
	msg.Env().AuthToken = "ticket-for-P01"
	return msg
}

// gate is a named pipe for a Hold bot to hold its first line on.
func gate(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gate")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// held waits until the Hold bot of gate has its first line in hand, and
// returns what releases it; the test's end releases it too.
func held(t *testing.T, gate string) (release func()) {
	t.Helper()
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(gate, os.O_WRONLY, 0) // returns once the bot opens it to read
		ch <- opened{f, err}
	}()
	var o opened
	select {
	case o = <-ch:
	case <-ctxFor(t).Done():
		// A reader of our own lets the open above return.
		if r, err := os.OpenFile(gate, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			if o := <-ch; o.err == nil {
				o.f.Close()
			}
			r.Close()
		}
		t.Fatal("the bot never took its first line")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	var once sync.Once
	release = func() { once.Do(func() { o.f.Close() }) }
	t.Cleanup(release)
	return release
}

// TestExecPlaysThroughTheBot: an exec agent's invitations and parity calls
// are answered by its bot, which reads every league message the player
// takes, in order, as one line of JSON without the token or ticket it
// carried; the player fills in the envelope of its answers.
func TestExecPlaysThroughTheBot(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := withBot(t, n, "player-P01", player.Exec{}, exectest.Even)
		b := broadcasts()
		is.Equal(r.call(t, b[0].method, b[0].msg("tok-P01")), registeredAckFor(b[0].typ, "conv-round-1"))
		is.Equal(r.call(t, "GAME_INVITATION", ticketed(invitation("R2M1", 2, "P02"))),
			`{"protocol":"league.v2","message_type":"GAME_JOIN_ACK","sender":"player:P01","timestamp":"`+now+`",`+
				`"conversation_id":"conv-r2m1","league_id":"league_test","auth_token":"`+shownP01+`",`+
				`"match_id":"R2M1","player_id":"P01","arrival_timestamp":"`+now+`","accept":true}`) // the bot accepted
		is.Equal(r.call(t, "CHOOSE_PARITY_CALL", ticketed(parityCall("R2M1", "P01", &protocol.ParityContext{OpponentID: "P02", RoundID: 2}))),
			`{"protocol":"league.v2","message_type":"CHOOSE_PARITY_RESPONSE","sender":"player:P01","timestamp":"`+now+`",`+
				`"conversation_id":"conv-r2m1","league_id":"league_test","auth_token":"`+shownP01+`",`+
				`"match_id":"R2M1","player_id":"P01","parity_choice":"even"}`) // the bot's choice, not the strategy's (odd)
		is.Equal(r.call(t, "GAME_OVER", ticketed(gameOver("R2M1", 2, &protocol.GameResult{Status: protocol.ResultWin,
			WinnerPlayerID: ptr("P01"), DrawnNumber: ptr(4), NumberParity: even, Choices: map[string]string{"P01": even, "P02": odd}}))),
			refereeAckFor(protocol.TypeGameOver, "conv-r2m1"))
		for _, x := range b[1:3] {
			is.Equal(r.call(t, x.method, x.msg("tok-P01")), registeredAckFor(x.typ, x.msg("").(interface{ Env() *protocol.Envelope }).Env().ConversationID))
		}
		// Lines go in order, one at a time: once this call's answer is
		// back, the bot has read every line before it.
		is.True(strings.Contains(r.call(t, "GAME_INVITATION", invitation("R3M1", 3, "P03")), `"accept":true`))

		l := r.botLog(t)
		is.Equal(l.Types(), []string{"ROUND_ANNOUNCEMENT", "GAME_INVITATION", "CHOOSE_PARITY_CALL", "GAME_OVER",
			"LEAGUE_STANDINGS_UPDATE", "ROUND_COMPLETED", "GAME_INVITATION"}) // every message, in order
		is.Equal(l.Lines[1], `{"message_type":"GAME_INVITATION","protocol":"league.v2","sender":"referee:REF01",`+
			`"timestamp":"2025-01-15T10:30:00Z","conversation_id":"conv-r2m1","league_id":"league_test","round_id":2,`+
			`"match_id":"R2M1","game_type":"even_odd","role_in_match":"PLAYER_A","opponent_id":"P02"}`) // the invitation, without its ticket
		is.Equal(l.Lines[2], `{"message_type":"CHOOSE_PARITY_CALL","protocol":"league.v2","sender":"referee:REF01",`+
			`"timestamp":"2025-01-15T10:30:00Z","conversation_id":"conv-r2m1","league_id":"league_test","match_id":"R2M1",`+
			`"player_id":"P01","game_type":"even_odd","context":{"opponent_id":"P02","round_id":2},"deadline":"2025-01-15T10:30:30Z"}`) // the parity call
		for _, line := range l.Lines {
			is.True(!strings.Contains(line, "auth_token")) // no token
			is.True(!strings.Contains(line, "tok-P01"))    // no token
			is.True(!strings.Contains(line, "ticket"))     // no ticket
		}
		is.Equal(len(l.PIDs), 1) // one process for them all

		st := r.p.State()
		is.Equal(st.Strategy, "exec")
		is.Equal(st.Exec.Starts, 1)
		is.Equal(st.Exec.PID, l.PIDs[0])
		is.Equal(st.Exec.Sent, 7)
		is.Equal(st.Exec.Answers, 7)
		is.Equal(st.Exec.Failures, 0)
		is.Equal(st.Exec.Dropped, 0)
		is.Equal(st.History[0].MyChoice, even)                                     // the bot's choice is the player's record
		is.True(!strings.Contains(r.call(t, "get_player_state", nil), "exectest")) // its command line is not shown

		is.NoErr(r.p.Close())
		is.True(gone(l.PIDs[0])) // its process has ended with the player
	})
}

// gone reports whether the process pid has ended and been reaped.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// goneSoon waits, until a deadline, for pid, a process this one did not
// start, to end: its parent, not this process, reaps it. A zombie has
// ended.
func goneSoon(t *testing.T, pid int) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if gone(pid) {
			return true
		}
		if b, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "stat")); err == nil {
			if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // another process's end: nothing to wait on
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestExecInvalidAnswers: a bot's answer that is a JSON object, but not
// the call's, costs the call (E002 for an invitation, E010 for a parity
// call, neither retried), with the reason in the error and the log; its
// process, in step, goes on. A bot may decline.
func TestExecInvalidAnswers(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		j := withBot(t, n, "player-P03", player.Exec{}, exectest.InvalidJoin)
		err := j.callErr(t, "GAME_INVITATION", invitation("R1M1", 1, "P02"))
		is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat) // E002
		is.True(!transport.IsRetryable(err))                             // not asked twice
		is.True(strings.Contains(err.Error(), `exec bot: answered {"accept": "yes"}: an invitation's answer is {"accept": true} or {"accept": false}`))
		r := withBot(t, n, "player-P01", player.Exec{}, exectest.Invalid)
		is.True(strings.Contains(r.call(t, "GAME_INVITATION", invitation("R1M1", 1, "P02")), `"accept":true`))
		err = r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil))
		is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMove) // E010
		is.True(!transport.IsRetryable(err))
		is.True(strings.Contains(err.Error(), `exec bot: answered {"parity_choice": "Even"}: parity_choice must be exactly "even" or "odd"`))
		st := r.p.State().Exec
		is.Equal(st.Starts, 1)   // in step: not started again
		is.True(st.PID != 0)     // still running
		is.Equal(st.Failures, 1) // counted
		// Logged, with the reason.
		is.True(strings.Contains(r.log.String(), `"msg":"exec bot gave no valid answer: the match is lost","message_type":"CHOOSE_PARITY_CALL","match_id":"R1M1"`))
		is.True(strings.Contains(r.log.String(), `"reason":"exec bot: answered {\"parity_choice\": \"Even\"}`))

		d := withBot(t, n, "player-P02", player.Exec{}, exectest.Decline)
		is.True(strings.Contains(d.call(t, "GAME_INVITATION", invitation("R1M2", 1, "P03")), `"accept":false`)) // declined, as the bot said
	})
}

// TestExecLineEnds: an answer may be padded, and end its line with
// "\r\n".
func TestExecLineEnds(t *testing.T) {
	is := is.New(t)
	r := withBot(t, transporttest.Mem(), "player-P01", player.Exec{}, exectest.CRLF)
	is.True(strings.Contains(r.call(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil)), `"parity_choice":"even"`))
	is.Equal(r.p.State().Exec.Failures, 0)
}

// TestExecGarbage: a bot that answers a line that is no JSON object costs
// the call, is killed, and is started again for a later message, after the
// restart delay since it never gave a valid answer.
func TestExecGarbage(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		delay := 50 * time.Millisecond
		r := withBot(t, n, "player-P01", player.Exec{RestartDelay: delay}, exectest.Garbage)
		err := r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil))
		is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMove) // E010
		is.True(strings.Contains(err.Error(), `exec bot: answered "hello, world": not one JSON object`))
		l := r.botLog(t)
		is.Equal(len(l.PIDs), 1)
		is.True(gone(l.PIDs[0]))          // killed, before the answer went
		is.Equal(r.p.State().Exec.PID, 0) // none runs
		is.True(strings.Contains(r.log.String(), "exec bot killed: it wrote a line that is no JSON object"))
		<-time.After(delay) // the restart delay
		err = r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R1M2", "P01", nil))
		is.True(strings.Contains(err.Error(), `answered "hello, world"`)) // started again, as bad as before
		is.Equal(r.p.State().Exec.Starts, 2)
	})
}

// TestExecLongLine: a line over MaxBotLine is not buffered: the bot is
// killed, and the call lost.
func TestExecLongLine(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := withBot(t, n, "player-P01", player.Exec{}, exectest.LongLine)
		err := r.callErr(t, "GAME_INVITATION", invitation("R1M1", 1, "P02"))
		is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat)
		is.True(strings.Contains(err.Error(), "exec bot: ended before answering: it wrote a line over 65536 bytes"))
		is.True(gone(r.botLog(t).PIDs[0])) // killed
	})
}

// TestExecCrashAtOnce: a bot that exits at once costs each call at once,
// with its exit status in the reason and its stderr in the debug log, and
// is started again only after a delay that doubles: a burst of calls
// starts it once.
func TestExecCrashAtOnce(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("burst", func(t *testing.T) {
			is := is.New(t)
			// An hour: the burst comes within it, however slow the machine.
			r := withBot(t, n, "player-P01", player.Exec{RestartDelay: time.Hour}, exectest.Crash)
			err := r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil))
			is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMove)
			is.True(!transport.IsRetryable(err))
			is.True(strings.Contains(err.Error(), "exec bot: ") && strings.Contains(err.Error(), "exit status 3")) // why, from its end
			for i := range 5 {
				err := r.callErr(t, "GAME_INVITATION", invitation("R2M"+itoa(i+1), 2, "P02"))
				is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMessageFormat)
				is.True(strings.Contains(err.Error(), "exec bot: not running: it ended without a valid answer 1 time(s) in a row (last: exit status 3), and starts again in"))
			}
			is.Equal(r.p.State().Exec.Starts, 1) // the burst started it once
			is.NoErr(r.p.Close())
			is.True(strings.Contains(r.log.String(), `"msg":"exec bot stderr"`)) // its stderr, at debug
			is.True(strings.Contains(r.log.String(), `"line":"boom"`))
		})
		t.Run("started again", func(t *testing.T) {
			is := is.New(t)
			delay := time.Second
			r := withBot(t, n, "player-P02", player.Exec{RestartDelay: delay, MaxRestartDelay: time.Hour}, exectest.Crash)
			err := r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil))
			is.True(strings.Contains(err.Error(), "exit status 3"))
			<-time.After(delay) // the restart delay, counted from the crash, which was before the answer
			asked := time.Now()
			err = r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R3M1", "P01", nil))
			is.True(strings.Contains(err.Error(), "exit status 3")) // started again, and crashed again
			is.Equal(r.p.State().Exec.Starts, 2)
			err = r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R3M2", "P01", nil))
			// The second crash came after asked, and its delay is twice the
			// first: only a machine that took that long to ask again may
			// find the bot started a third time.
			is.True(strings.Contains(err.Error(), "2 time(s) in a row") || time.Since(asked) >= 2*delay) // a longer delay now
		})
	})
}

// TestExecHang: a bot that never answers costs the call when the call's
// deadline or its own timeout passes, whichever is first; it is killed
// then, so that a late answer can never be taken for the next line's.
func TestExecHang(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		t.Run("own timeout", func(t *testing.T) {
			is := is.New(t)
			r := withBot(t, n, "player-P01", player.Exec{Timeout: 200 * time.Millisecond}, exectest.Hang)
			err := r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil))
			is.Equal(protocol.CodeOf(err), protocol.ErrInvalidMove)
			is.True(strings.Contains(err.Error(), "exec bot: no answer within 200ms"))
			is.True(gone(r.killed(t))) // killed before the answer went
		})
		t.Run("caller's deadline", func(t *testing.T) {
			is := is.New(t)
			g := gate(t)
			// Hours: only the caller's deadline can end the line, and the bot
			// is not started again while the test runs.
			r := withBot(t, n, "player-P02", player.Exec{Timeout: time.Hour, RestartDelay: time.Hour}, exectest.Hold, g)
			ctx, pass := transporttest.Expiring(t, 10*time.Second)
			called := make(chan error, 1)
			go func() { called <- r.c.Call(ctx, r.ep, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil), nil) }()
			held(t, g) // never released: the bot does not answer
			pass()
			err := recv(t, called)
			is.True(isTimeout(err)) // the caller's own deadline: E001 for the referee
			// Lines go one at a time: this one is taken once the last one's
			// bot is killed. It never answered, so it is not started again
			// before the restart delay.
			err = r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R1M2", "P01", nil))
			is.True(strings.Contains(err.Error(), "not running"))
			is.True(gone(r.killed(t))) // killed when the caller gave up
		})
	})
}

// TestExecQueue: notifications are acknowledged at once, whatever the bot
// does; a bot that falls behind gets QueueSize of them, and the rest are
// dropped and counted. Calls are never dropped.
func TestExecQueue(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		g := gate(t)
		// An hour: the held line does not time out, however slow the machine.
		r := withBot(t, n, "player-P01", player.Exec{QueueSize: 2, Timeout: time.Hour}, exectest.Hold, g)
		const sent = 8
		notify := func(i int) {
			t.Helper()
			ge := &protocol.GameError{Envelope: env(protocol.TypeGameError, "referee:REF01", "conv-r1m"+itoa(i)), MatchID: "R1M" + itoa(i),
				ErrorCode: protocol.ErrTimeout, AffectedPlayer: "P01", Consequence: "Technical loss awarded to P01"}
			is.Equal(r.call(t, "GAME_ERROR", ge), refereeAckFor(protocol.TypeGameError, "conv-r1m"+itoa(i)))
		}
		notify(0)
		release := held(t, g)
		for i := 1; i < sent; i++ {
			notify(i) // acknowledged while the bot holds a line: the acknowledgement does not wait for it
		}
		release()
		is.True(strings.Contains(r.call(t, "GAME_INVITATION", invitation("R2M1", 2, "P02")), `"accept":true`)) // a call is not dropped
		st := r.p.State().Exec
		l := r.botLog(t)
		is.Equal(l.Types(), []string{"GAME_ERROR", "GAME_ERROR", "GAME_ERROR", "GAME_INVITATION"}) // the one in hand, QueueSize queued, then the call
		for i, line := range l.Lines[:3] {
			is.True(strings.Contains(line, `"match_id":"R1M`+itoa(i)+`"`)) // the first ones: those that came later are dropped
		}
		is.Equal(st.Dropped, sent-3) // every other one dropped, and counted
		is.Equal(st.Sent, 4)
		is.Equal(st.Failures, 0)
		is.True(strings.Contains(r.log.String(), `"msg":"exec bot: notification dropped, its queue is full: the bot is behind"`)) // logged
	})
}

// TestExecStderr: what the bot writes to stderr goes to the log at debug
// level, a line at a time, and nowhere at info.
func TestExecStderr(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := withBot(t, n, "player-P01", player.Exec{}, exectest.Stderr)
		is.True(strings.Contains(r.call(t, "GAME_INVITATION", invitation("R1M1", 1, "P02")), `"accept":true`))
		pid := r.p.State().Exec.PID
		is.NoErr(r.p.Close()) // its stderr is all read once it has exited
		// A line of its stderr, at debug.
		is.True(strings.Contains(r.log.String(), `"level":"DEBUG","msg":"exec bot stderr","pid":`+itoa(pid)+`,"line":"got GAME_INVITATION"}`))
	})
	is := is.New(t)
	file := filepath.Join(t.TempDir(), "bot.log")
	log, buf := logger(slog.LevelInfo)
	p := player.New(opts("even", func(o *player.Options) {
		o.Exec = &player.Exec{Command: exectest.Command(exectest.Stderr, file)}
	}), nil, log)
	n := transporttest.Mem()
	r := &rig{p: p, ep: n.Serve(t, "player-P01", p.Handler()), c: n.Client(5 * time.Second)}
	is.True(strings.Contains(r.call(t, "GAME_INVITATION", invitation("R1M1", 1, "P02")), `"accept":true`))
	is.NoErr(p.Close())
	is.True(strings.Contains(buf.String(), "exec bot started")) // info
	is.True(!strings.Contains(buf.String(), "stderr"))          // debug only
}

// TestExecOnce: a bot that answered and then ends loses the call it ended
// on, and is started again at once for the next.
func TestExecOnce(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, n *transporttest.Net) {
		is := is.New(t)
		r := withBot(t, n, "player-P01", player.Exec{RestartDelay: time.Hour, MaxRestartDelay: time.Hour}, exectest.Once)
		is.True(strings.Contains(r.call(t, "CHOOSE_PARITY_CALL", parityCall("R1M1", "P01", nil)), `"parity_choice":"even"`))
		err := r.callErr(t, "CHOOSE_PARITY_CALL", parityCall("R2M1", "P01", nil))
		is.True(strings.Contains(err.Error(), "exec bot: ended before answering: exit status 0"))
		is.True(strings.Contains(r.call(t, "CHOOSE_PARITY_CALL", parityCall("R3M1", "P01", nil)), `"parity_choice":"even"`)) // no delay: it had answered
		l := r.botLog(t)
		is.Equal(len(l.PIDs), 2)
		is.True(gone(l.PIDs[0]))
		is.Equal(r.p.State().Exec.PID, l.PIDs[1])
	})
}

// TestExecCloseLeavesNoProcess: Close ends the bot, and what it started,
// even a bot deaf to the end of its input: killed, with its process group,
// once the stop grace has passed.
func TestExecCloseLeavesNoProcess(t *testing.T) {
	is := is.New(t)
	n := transporttest.Mem()
	r := withBot(t, n, "player-P01", player.Exec{StopGrace: 200 * time.Millisecond}, exectest.Child)
	is.True(strings.Contains(r.call(t, "GAME_INVITATION", invitation("R1M1", 1, "P02")), `"accept":true`))
	l := r.botLog(t)
	is.Equal(len(l.Children), 1)
	bot, child := r.p.State().Exec.PID, l.Children[0]
	is.True(!gone(bot))   // running
	is.True(!gone(child)) // running
	start := time.Now()
	is.NoErr(r.p.Close())
	is.True(time.Since(start) >= 200*time.Millisecond) // the grace, since it does not exit by itself
	is.True(gone(bot))                                 // killed and reaped
	is.True(goneSoon(t, child))                        // killed with its group
	is.Equal(r.p.State().Exec.PID, 0)
	err := r.callErr(t, "GAME_INVITATION", invitation("R1M2", 1, "P03"))
	is.True(strings.Contains(err.Error(), "exec bot: stopped")) // stopped for good
	is.NoErr(r.p.Close())                                       // again: nothing to do
}

// TestExecCloseDeliversWhatIsQueued: notifications queued at Close still
// reach a bot that keeps up, LEAGUE_COMPLETED among them.
func TestExecCloseDeliversWhatIsQueued(t *testing.T) {
	is := is.New(t)
	n := transporttest.Mem()
	// Close drops what is left once StopGrace has passed: the bot, which
	// exits as soon as it has read everything, must not miss it by starting
	// slowly on a loaded machine.
	r := withBot(t, n, "player-P01", player.Exec{StopGrace: 10 * time.Second}, exectest.Even)
	for _, b := range broadcasts() {
		r.call(t, b.method, b.msg("tok-P01"))
	}
	is.NoErr(r.p.Close())
	is.Equal(r.botLog(t).Types(), []string{"ROUND_ANNOUNCEMENT", "LEAGUE_STANDINGS_UPDATE", "ROUND_COMPLETED", "LEAGUE_COMPLETED"})
	is.Equal(r.p.State().Exec.Dropped, 0)
}
