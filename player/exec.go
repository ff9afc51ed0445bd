package player

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport"
)

// Exec makes a player an exec agent: its decisions come from a subprocess
// that reads one JSON object a line on stdin and writes one JSON object a
// line on stdout, the way chess engines plug into tournament runners.
// docs/agents.md is the bot author's side of it.
type Exec struct {
	// Command is the program and its arguments (ParseCommand splits a
	// command line into them). No shell runs it.
	Command []string
	// Timeout is the longest the bot may take to answer a call's line,
	// whatever the caller's deadline (0: DefaultExecTimeout). A call's
	// answer is also due before the call's own deadline.
	Timeout time.Duration
	// NotificationTimeout is the longest the bot may take to answer a
	// notification's line, which nobody waits for (0: Timeout). The
	// first line a process is given has Timeout at least: it may still be
	// starting.
	NotificationTimeout time.Duration
	// QueueSize bounds the notifications waiting for the bot (0:
	// DefaultExecQueue); more are dropped, and counted.
	QueueSize int
	// RestartDelay is how long a bot that ended without one valid answer
	// waits before it is started again, doubled after each such end up to
	// MaxRestartDelay (0: DefaultRestartDelay, DefaultMaxRestartDelay).
	RestartDelay, MaxRestartDelay time.Duration
	// StopGrace is how long Close lets the bot exit on its own after its
	// stdin is closed before it is killed (0: DefaultStopGrace).
	StopGrace time.Duration
}

// The defaults of Exec.
const (
	DefaultExecTimeout     = 30 * time.Second // the spec's choice timeout
	DefaultExecQueue       = 64
	DefaultRestartDelay    = 2 * time.Second // the spec's first retry delay
	DefaultMaxRestartDelay = 10 * time.Second
	DefaultStopGrace       = time.Second
)

// MaxBotLine bounds a line the bot writes: an answer is a few bytes, and a
// hostile bot must not make the player buffer without limit.
const MaxBotLine = 64 << 10

// waitDelay bounds the wait for the bot's stderr after its process has
// ended (a process it started may hold it open).
const waitDelay = time.Second

// exitGrace is how long a bot whose output has ended has to exit, before
// it is killed: a process that closes its stdout as it exits is gone in
// that time.
const exitGrace = 200 * time.Millisecond

// ExecState is what get_player_state shows of an exec agent's bot.
type ExecState struct {
	// PID is the running process's; absent while none runs.
	PID int `json:"pid,omitzero"`
	// Starts counts the processes started.
	Starts int `json:"starts"`
	// Sent counts the lines written to the bot, Answers the lines it
	// answered with a JSON object (a call's the right one or not).
	Sent    int `json:"lines_sent"`
	Answers int `json:"answers"`
	// Failures counts the lines the bot did not answer validly in time
	// (a call's failure costs the match).
	Failures int `json:"failures"`
	// Dropped counts the notifications the bot never got: its queue was
	// full, or it was down.
	Dropped int `json:"notifications_dropped"`
}

// errBotStopped answers what reaches a bot after Close.
var errBotStopped = errors.New("stopped")

// errQueueFull is why a notification is dropped.
var errQueueFull = errors.New("its queue is full")

// execBot runs the bot's process, one at a time, and hands it one line at
// a time: a single worker goroutine takes the messages in the order they
// came (calls and notifications alike) from a queue. A call waits for its
// answer; a notification is acknowledged at once and only queued, up to
// QueueSize of them.
type execBot struct {
	cfg  Exec
	log  *slog.Logger
	quit context.Context // ends at Close
	stop context.CancelFunc
	wake chan struct{} // cap 1: the queue has something
	done chan struct{} // closed when the worker has ended, its process with it
	once sync.Once     // starts the worker

	mu     sync.Mutex
	queue  []*botJob
	notes  int // notifications in queue
	calls  int // calls in queue
	closed bool
	state  ExecState

	// The worker's own.
	proc        *botProcess
	quickDeaths int // processes in a row that ended without a valid answer
	notBefore   time.Time
	lastEnd     string // how the last process ended
}

// botJob is one line for the bot; without a line, a start of its process.
type botJob struct {
	ctx   context.Context // the call's; nil for a notification
	typ   protocol.MessageType
	line  []byte
	reply chan botReply // cap 1; nil for a notification
}

type botReply struct {
	answer jsontext.Value
	err    error
}

// botProcess is one run of the bot.
type botProcess struct {
	cmd      *exec.Cmd
	pid      int
	kill     context.CancelFunc // ends cmd's context: its process group is killed
	stdin    *os.File
	stdout   *os.File
	lines    chan []byte   // what the bot writes, a line at a time; closed at its end
	readErr  error         // why lines closed, when not EOF: set before the close
	exited   chan struct{} // closed once Wait has returned
	waitErr  error         // set before exited closes
	dead     chan struct{} // closed when the player is done with the process
	sent     int           // lines written to it
	answered bool          // it gave a valid answer
}

func newExecBot(cfg Exec, log *slog.Logger) *execBot {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultExecTimeout
	}
	if cfg.NotificationTimeout <= 0 {
		cfg.NotificationTimeout = cfg.Timeout
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultExecQueue
	}
	if cfg.RestartDelay <= 0 {
		cfg.RestartDelay = DefaultRestartDelay
	}
	if cfg.MaxRestartDelay < cfg.RestartDelay {
		cfg.MaxRestartDelay = max(DefaultMaxRestartDelay, cfg.RestartDelay)
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	quit, stop := context.WithCancel(context.Background())
	return &execBot{cfg: cfg, log: log, quit: quit, stop: stop, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// snapshot is the bot's state for get_player_state.
func (b *execBot) snapshot() *ExecState {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.state
	return &s
}

// close stops the bot, and waits for its process to end: what is queued
// still goes to the bot, then its stdin is closed, which it reads as the
// end; whatever is left when StopGrace has passed is dropped, and the
// process group killed.
func (b *execBot) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	b.once.Do(func() { close(b.done) }) // never started: nothing to wait for
	grace := time.AfterFunc(b.cfg.StopGrace, b.stop)
	<-b.done
	grace.Stop()
	b.stop()
}

// push queues j, or says why not: the bot is closed, or QueueSize
// notifications (or calls) wait already; a notification refused so is
// counted as dropped.
func (b *execBot) push(j *botJob) error {
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return errBotStopped
	case j.reply == nil && b.notes >= b.cfg.QueueSize && j.line == nil:
		b.mu.Unlock()
		return nil // a warm start: the bot is busy anyway
	case j.reply == nil && b.notes >= b.cfg.QueueSize:
		b.state.Dropped++
		n := b.state.Dropped
		b.mu.Unlock()
		b.dropped(j.typ, n, "its queue is full: the bot is behind")
		return errQueueFull
	case j.reply != nil && b.calls >= b.cfg.QueueSize:
		b.mu.Unlock()
		return fmt.Errorf("%d calls are waiting for it already", b.cfg.QueueSize)
	}
	if j.reply == nil {
		b.notes++
	} else {
		b.calls++
	}
	b.queue = append(b.queue, j)
	b.mu.Unlock()
	b.once.Do(func() { go b.run() })
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return nil
}

// dropped logs the n-th dropped notification, at 1, 2, 4, 8, …: a bot far
// behind, or messages sent on purpose to fill its queue, must not flood
// the log.
func (b *execBot) dropped(t protocol.MessageType, n int, why string) {
	if n&(n-1) == 0 {
		b.log.LogAttrs(context.Background(), slog.LevelWarn, "exec bot: notification dropped, "+why,
			slog.String("message_type", string(t)), slog.Int("dropped", n))
	}
}

// pop takes the next job, waiting for one. Once the bot is closed it
// returns nil when the queue is empty, or at once when StopGrace has
// passed: then every call still queued is answered with errBotStopped, and
// every notification is dropped.
func (b *execBot) pop() *botJob {
	for {
		b.mu.Lock()
		if len(b.queue) > 0 && b.quit.Err() == nil {
			j := b.queue[0]
			b.queue[0] = nil
			b.queue = b.queue[1:]
			if j.reply == nil {
				b.notes--
			} else {
				b.calls--
			}
			b.mu.Unlock()
			return j
		}
		if b.closed {
			for _, j := range b.queue {
				switch {
				case j.reply != nil:
					j.reply <- botReply{err: errBotStopped}
				case j.line != nil:
					b.state.Dropped++
				}
			}
			b.queue, b.notes, b.calls = nil, 0, 0
			b.mu.Unlock()
			return nil
		}
		b.mu.Unlock()
		select {
		case <-b.wake:
		case <-b.quit.Done():
		}
	}
}

// run is the worker: one line at a time, in the order they came.
func (b *execBot) run() {
	defer close(b.done)
	defer b.shutdown()
	for j := b.pop(); j != nil; j = b.pop() {
		if j.reply != nil && j.ctx.Err() != nil {
			// Its caller has gone: the bot is not asked.
			j.reply <- botReply{err: j.ctx.Err()}
			continue
		}
		answer, err := b.exchange(j)
		if j.reply != nil {
			j.reply <- botReply{answer: answer, err: err}
		}
	}
}

// ask hands the bot the message of a call and waits for its answer: a
// JSON object, not yet read as the call's answer.
func (b *execBot) ask(ctx context.Context, r *transport.Request) (jsontext.Value, error) {
	line, err := botLine(r)
	if err != nil {
		return nil, err
	}
	j := &botJob{ctx: ctx, typ: r.Type, line: line, reply: make(chan botReply, 1)}
	if err := b.push(j); err != nil {
		return nil, err
	}
	select {
	case rep := <-j.reply:
		return rep.answer, rep.err
	case <-ctx.Done():
		return nil, errors.New("no answer before the call's deadline")
	case <-b.done:
		select {
		case rep := <-j.reply: // answered as the worker ended
			return rep.answer, rep.err
		default:
			return nil, errBotStopped // queued as Close began: never taken
		}
	}
}

// warm starts the bot's process, if none runs, without a line: its start
// overlaps what the player does before its first match.
func (b *execBot) warm() { _ = b.push(&botJob{}) }

// notify queues a notification for the bot; the caller has its
// acknowledgement at once, whatever the bot does.
func (b *execBot) notify(r *transport.Request) {
	line, err := botLine(r)
	if err != nil {
		b.log.LogAttrs(context.Background(), slog.LevelWarn, "exec bot: message not encoded",
			slog.String("message_type", string(r.Type)), slog.String("error", err.Error()))
		return
	}
	_ = b.push(&botJob{typ: r.Type, line: line}) // dropped, counted and logged, when it is full
}

// exchange writes j's line and reads the bot's answer: a JSON object.
// Whatever leaves the bot's stream out of step (no answer in time, a line
// that is no JSON object, an end) ends its process, which the next line
// starts again.
func (b *execBot) exchange(j *botJob) (jsontext.Value, error) {
	p, err := b.running()
	switch {
	case err != nil && j.reply == nil:
		if j.line != nil {
			b.mu.Lock()
			b.state.Dropped++
			n := b.state.Dropped
			b.mu.Unlock()
			b.dropped(j.typ, n, "the bot is down: "+err.Error())
		}
		return nil, err
	case err != nil:
		b.failed()
		return nil, err
	case j.line == nil:
		return nil, nil // warm: started
	}
	timeout := b.cfg.Timeout
	if j.reply == nil && p.sent > 0 {
		timeout = b.cfg.NotificationTimeout
	}
	ctx, cancel := context.WithTimeout(b.quit, timeout)
	defer cancel()
	if j.ctx != nil {
		stop := context.AfterFunc(j.ctx, cancel)
		defer stop()
	}
	p.sent++
	b.mu.Lock()
	b.state.Sent++
	b.mu.Unlock()
	if dl, ok := ctx.Deadline(); ok {
		_ = p.stdin.SetWriteDeadline(dl) // a pipe without deadlines is unblocked by the kill below
	}
	written := make(chan error, 1)
	go func() { _, err := p.stdin.Write(j.line); written <- err }()
	var werr error
	select {
	case werr = <-written:
	case <-ctx.Done():
		werr = os.ErrDeadlineExceeded
	}
	switch {
	case errors.Is(werr, os.ErrDeadlineExceeded):
		b.end(p, b.why("it did not read its input in time"))
		<-written
		b.failed()
		return nil, b.late(j, timeout)
	case werr != nil:
		// It has ended, or closed its stdin: its end says why.
		b.failed()
		return nil, fmt.Errorf("could not be written to: %s", b.finish(p))
	}
	select {
	case line, ok := <-p.lines:
		if !ok {
			b.failed()
			return nil, fmt.Errorf("ended before answering: %s", b.ended(p))
		}
		v := jsontext.Value(bytes.TrimSpace(line)) // "\r\n" line ends too
		if !v.IsValid() || v.Kind() != '{' {
			b.end(p, "it wrote a line that is no JSON object")
			b.failed()
			return nil, fmt.Errorf("answered %s: not one JSON object", quoteLine(line))
		}
		p.answered = true
		b.quickDeaths = 0
		b.mu.Lock()
		b.state.Answers++
		b.mu.Unlock()
		return v, nil
	case <-ctx.Done():
		b.end(p, b.why("it did not answer in time"))
		b.failed()
		return nil, b.late(j, timeout)
	}
}

// why is the reason to kill a bot whose line's time is up: the player
// stopping, or the bot's own slowness.
func (b *execBot) why(slow string) string {
	if b.quit.Err() != nil {
		return "the player is stopping"
	}
	return slow
}

// late is why a line got no answer: the caller's deadline, the bot's own
// timeout, or Close.
func (b *execBot) late(j *botJob, timeout time.Duration) error {
	switch {
	case b.quit.Err() != nil:
		return errBotStopped
	case j.ctx != nil && j.ctx.Err() != nil:
		return errors.New("no answer before the call's deadline")
	}
	return fmt.Errorf("no answer within %s", timeout)
}

// failed counts a line the bot did not answer validly in time.
func (b *execBot) failed() {
	b.mu.Lock()
	b.state.Failures++
	b.mu.Unlock()
}

// running is the bot's process, started when none runs, unless the last
// ones ended without a valid answer and the restart delay has not passed.
func (b *execBot) running() (*botProcess, error) {
	if p := b.proc; p != nil {
		select {
		case line, ok := <-p.lines:
			if ok {
				b.end(p, "it wrote a line nobody asked for: "+quoteLine(line))
			} else {
				b.ended(p) // it ended between two lines
			}
		default:
			return p, nil
		}
	}
	if wait := time.Until(b.notBefore); wait > 0 {
		return nil, fmt.Errorf("not running: it ended without a valid answer %d time(s) in a row (last: %s), and starts again in %s",
			b.quickDeaths, b.lastEnd, wait.Round(time.Millisecond))
	}
	return b.start()
}

// start starts a process of the bot: in a process group of its own, so
// that what it starts is killed with it, and bound to a context whose end
// kills that group.
func (b *execBot) start() (*botProcess, error) {
	if len(b.cfg.Command) == 0 {
		b.lastEnd = "could not start: no command"
		b.died()
		return nil, errors.New(b.lastEnd)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("could not start: %w", err) // the player's trouble, not the bot's: no delay
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("could not start: %w", err)
	}
	ctx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, b.cfg.Command[0], b.cfg.Command[1:]...)
	cmd.Stdin, cmd.Stdout = inR, outW
	p := &botProcess{cmd: cmd, kill: kill, stdin: inW, stdout: outR, lines: make(chan []byte),
		exited: make(chan struct{}), dead: make(chan struct{})}
	stderr := &stderrLog{log: b.log, cmd: cmd}
	cmd.Stderr = stderr
	inProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = waitDelay
	err = cmd.Start()
	inR.Close() // the child's ends: the child holds them now
	outW.Close()
	if err != nil {
		kill()
		inW.Close()
		outR.Close()
		b.lastEnd = "could not start: " + err.Error()
		b.died()
		return nil, fmt.Errorf("could not start: %w", err)
	}
	p.pid = cmd.Process.Pid
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 0, 512), MaxBotLine)
		for sc.Scan() {
			select {
			case p.lines <- bytes.Clone(sc.Bytes()):
			case <-p.dead:
				return
			}
		}
		p.readErr = sc.Err()
	}()
	go func() {
		p.waitErr = cmd.Wait()
		stderr.flush() // a last line without its newline: Wait has copied all there was
		close(p.exited)
	}()
	b.proc = p
	b.mu.Lock()
	b.state.Starts++
	b.state.PID = p.pid
	b.mu.Unlock()
	b.log.LogAttrs(context.Background(), slog.LevelInfo, "exec bot started",
		slog.String("program", b.cfg.Command[0]), slog.Int("pid", p.pid))
	return p, nil
}

// died counts a process that ended without a valid answer, or could not
// start: the next start waits RestartDelay, doubled each time in a row, up
// to MaxRestartDelay.
func (b *execBot) died() {
	b.quickDeaths++
	d := b.cfg.RestartDelay
	for i := 1; i < b.quickDeaths && d < b.cfg.MaxRestartDelay; i++ {
		d *= 2
	}
	b.notBefore = time.Now().Add(min(d, b.cfg.MaxRestartDelay))
}

// end kills p, which answered wrongly or not at all, and says why in the
// log.
func (b *execBot) end(p *botProcess, why string) {
	b.log.LogAttrs(context.Background(), slog.LevelWarn, "exec bot killed: "+why, slog.Int("pid", p.pid))
	p.kill()
	b.lastEnd = "killed: " + why
	b.reap(p)
}

// ended is why p's output has ended: a line too long for the player to
// read (p is killed), or its exit.
func (b *execBot) ended(p *botProcess) string {
	if errors.Is(p.readErr, bufio.ErrTooLong) {
		why := fmt.Sprintf("it wrote a line over %d bytes", MaxBotLine)
		b.end(p, why)
		return why
	}
	return b.finish(p)
}

// finish waits for p, whose output has ended or which takes no input, to
// exit, killing it if it has not within exitGrace, and says how it ended.
func (b *execBot) finish(p *botProcess) string {
	t := time.NewTimer(exitGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.kill()
		<-p.exited
		// A bot that exited of itself as the grace ran out, before the
		// kill (its wait not yet seen, on a loaded machine), has its exit
		// status, which says more than the kill's.
		if ee, ok := errors.AsType[*exec.ExitError](p.waitErr); !ok || ee.ExitCode() < 0 {
			b.end(p, "it closed its stdin or stdout, and did not exit")
			return "it closed its stdin or stdout"
		}
	}
	why, level := "exit status 0", slog.LevelInfo
	if p.waitErr != nil {
		why, level = p.waitErr.Error(), slog.LevelWarn
	}
	b.lastEnd = why
	b.reap(p)
	b.log.LogAttrs(context.Background(), level, "exec bot ended", slog.Int("pid", p.pid), slog.String("status", why))
	return why
}

// reap releases p once it is killed or has ended: it waits for its exit
// and frees what reads it.
func (b *execBot) reap(p *botProcess) {
	<-p.exited
	p.kill()
	_ = killGroup(p.cmd.Process) // what it started, still in its group
	close(p.dead)
	p.stdin.Close()
	p.stdout.Close()
	if !p.answered {
		b.died()
	}
	if b.proc == p {
		b.proc = nil
	}
	b.mu.Lock()
	b.state.PID = 0
	b.mu.Unlock()
}

// shutdown stops the process at Close: its stdin is closed, which a bot
// reads as the end, and once StopGrace has passed since Close it is
// killed.
func (b *execBot) shutdown() {
	p := b.proc
	if p == nil {
		return
	}
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-b.quit.Done():
	}
	p.kill()
	b.reap(p)
}

// botLine is the line the bot gets for r: the message as the player read
// it, re-encoded, without auth_token (the sender's token, or the ticket a
// referee shows), with message_type its canonical type, and a newline.
func botLine(r *transport.Request) ([]byte, error) {
	raw, err := protocol.Marshal(r.Msg)
	if err != nil {
		return nil, err
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("%s is not a JSON object", r.Type)
	}
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	if err := enc.WriteToken(jsontext.String("message_type")); err != nil {
		return nil, err
	}
	if err := enc.WriteToken(jsontext.String(string(r.Type))); err != nil {
		return nil, err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		k := name.String() // before the next read voids the token
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		if k == "auth_token" || k == "message_type" {
			continue
		}
		if err := enc.WriteToken(jsontext.String(k)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(v); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return out.Bytes(), nil // the encoder ends a top-level value with a newline
}

// quoteLine is a line of the bot's, clipped, for a reason or the log.
func quoteLine(line []byte) string {
	return strconv.Quote(protocol.Clip(string(line)))
}

// joinAnswer is the answer to an invitation.
type joinAnswer struct {
	Accept *bool `json:"accept"`
}

// parityAnswer is the answer to a parity call.
type parityAnswer struct {
	ParityChoice *string `json:"parity_choice"`
}

// invite asks the bot whether to join a match: {"accept": true} or false.
func (b *execBot) invite(ctx context.Context, r *transport.Request) (bool, error) {
	v, err := b.ask(ctx, r)
	if err != nil {
		return false, err
	}
	var a joinAnswer
	if err := json.Unmarshal(v, &a); err != nil || a.Accept == nil {
		b.invalid(v)
		return false, fmt.Errorf(`answered %s: an invitation's answer is {"accept": true} or {"accept": false}`, protocol.Clip(string(v)))
	}
	return *a.Accept, nil
}

// choose asks the bot for a parity: {"parity_choice": "even"} or "odd".
func (b *execBot) choose(ctx context.Context, r *transport.Request) (string, error) {
	v, err := b.ask(ctx, r)
	if err != nil {
		return "", err
	}
	var a parityAnswer
	if err := json.Unmarshal(v, &a); err != nil || a.ParityChoice == nil {
		b.invalid(v)
		return "", fmt.Errorf(`answered %s: a parity call's answer is {"parity_choice": "even"} or {"parity_choice": "odd"}`, protocol.Clip(string(v)))
	}
	if err := protocol.CheckParity(*a.ParityChoice); err != nil {
		b.invalid(v)
		return "", fmt.Errorf("answered %s: parity_choice %v", protocol.Clip(string(v)), err)
	}
	return *a.ParityChoice, nil
}

// invalid counts an answer that is a JSON object but not the call's: the
// bot's stream is in step, so its process goes on.
func (b *execBot) invalid(jsontext.Value) { b.failed() }

// stderrLog writes the bot's stderr to the log at debug level, a line at a
// time, each clipped: a bot that writes without end costs log lines, never
// memory.
type stderrLog struct {
	log     *slog.Logger
	cmd     *exec.Cmd // its Process is set before anything is written here
	partial []byte
	over    bool // the line at hand was clipped
}

const maxStderrLine = 4 << 10

func (w *stderrLog) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if room := maxStderrLine - len(w.partial); len(chunk) > room {
			chunk, w.over = chunk[:room], true
		}
		w.partial = append(w.partial, chunk...)
		if i < 0 {
			break
		}
		w.flush()
		b = b[i+1:]
	}
	return n, nil
}

// flush logs the line at hand, if any.
func (w *stderrLog) flush() {
	if len(w.partial) == 0 && !w.over {
		return
	}
	ctx := context.Background()
	if w.log.Enabled(ctx, slog.LevelDebug) {
		line := string(bytes.TrimRight(w.partial, "\r"))
		if w.over {
			line += "…"
		}
		w.log.LogAttrs(ctx, slog.LevelDebug, "exec bot stderr", slog.Int("pid", w.cmd.Process.Pid), slog.String("line", line))
	}
	w.partial, w.over = w.partial[:0], false
}

// tellBot hands the exec bot, if there is one, every league message h
// acknowledges: a notification, queued, which never delays the
// acknowledgement.
func (p *Player) tellBot(h handlerFunc) handlerFunc {
	if p.bot == nil {
		return h
	}
	return func(ctx context.Context, r *transport.Request) (any, error) {
		res, err := h(ctx, r)
		if err == nil {
			p.bot.notify(r)
		}
		return res, err
	}
}

// botFailed is the error a call the exec bot did not answer validly is
// answered with, which costs the player the match: the referee reads a
// JSON-RPC error as a failed call, a technical loss, and puts the error's
// text in its GAME_ERROR. The codes are E010 for a parity call and E002
// for an invitation, neither of which a caller retries: a retry would ask
// the bot again, and give a broken or slow bot the league's time.
func (p *Player) botFailed(ctx context.Context, r *transport.Request, matchID string, err error) error {
	code := protocol.ErrInvalidMessageFormat
	if r.Type == protocol.TypeChooseParityCall {
		code = protocol.ErrInvalidMove
	}
	reason := "exec bot: " + err.Error()
	p.log.LogAttrs(ctx, slog.LevelWarn, "exec bot gave no valid answer: the match is lost",
		slog.String("message_type", string(r.Type)), slog.String("match_id", protocol.Clip(matchID)),
		slog.String("conversation_id", protocol.Clip(r.Env.ConversationID)), slog.String("reason", reason))
	return protocol.Errorf(code, "%s", reason)
}
