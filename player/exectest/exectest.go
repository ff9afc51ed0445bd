// Package exectest is the exec bots of tests: the test binary itself,
// started again as a bot, so that the tests of exec agents need no other
// language installed. A test package calls Main first in its TestMain, and
// gives its players Command(kind, …).
package exectest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// arg marks a run of the test binary as a bot.
const arg = "leaguectl-exec-test-bot"

// The kinds of bot. Each takes the path of a file as its last argument,
// where it appends every line it reads (as it reads it, before it
// answers), and its process id on the first line when it starts.
const (
	// Even accepts every invitation and answers every parity call "even".
	Even = "even"
	// Decline declines every invitation.
	Decline = "decline"
	// Crash writes a line to stderr and exits 3 at once, reading nothing.
	Crash = "crash"
	// Hang reads, never answers, and does not exit at the end of its
	// input: only a kill ends it.
	Hang = "hang"
	// Mute reads, never answers, and exits at the end of its input.
	Mute = "mute"
	// Garbage answers every line "hello, world".
	Garbage = "garbage"
	// Invalid accepts every invitation, and answers every parity call
	// {"parity_choice": "Even"}: a JSON object of the wrong content.
	Invalid = "invalid"
	// InvalidJoin answers every invitation {"accept": "yes"}.
	InvalidJoin = "invalid-join"
	// Slow answers as Even after the duration given as its first argument.
	Slow = "slow"
	// Stderr answers as Even, and first writes "got MESSAGE_TYPE" to stderr.
	Stderr = "stderr"
	// Child starts a Hang bot as its child (which appends to the same
	// file), then answers as Even, and does not exit at the end of its
	// input: only a kill ends either.
	Child = "child"
	// LongLine answers every line with a line of 100 KiB.
	LongLine = "longline"
	// CRLF answers as Even, with padding and "\r\n" line ends.
	CRLF = "crlf"
	// Once answers its first line as Even, and exits 0 as it reads the
	// second.
	Once = "once"
	// Hold answers as Even, once it is released from its first line: it
	// opens the named pipe given as its first argument to read it, and
	// reads it to its end. A test that opens the pipe to write learns so
	// that the bot has a line in hand, and releases it by closing it;
	// until then the bot answers nothing, and only a kill ends it.
	Hold = "hold"
)

// Command is the command of a bot of kind, logging to file.
func Command(kind string, args ...string) []string {
	return append([]string{os.Args[0], arg, kind}, args...)
}

// Main runs the bot the test binary was started as, and exits; in any
// other run it returns at once.
func Main() {
	if len(os.Args) < 4 || os.Args[1] != arg {
		return
	}
	kind, args := os.Args[2], os.Args[3:]
	file := args[len(args)-1]
	log, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Fprintf(log, "pid %d\n", os.Getpid())
	// syscall.Exit, not os.Exit: a test binary built with -race would
	// otherwise wait a second at its exit (GORACE's atexit_sleep_ms).
	syscall.Exit(run(kind, args, log))
}

func run(kind string, args []string, log *os.File) int {
	if kind == Crash {
		fmt.Fprintln(os.Stderr, "boom")
		return 3
	}
	if kind == Child {
		c := exec.Command(os.Args[0], arg, Hang, args[len(args)-1])
		c.Stdin = nil
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Fprintf(log, "child %d\n", c.Process.Pid)
	}
	var delay time.Duration
	if kind == Slow {
		delay, _ = time.ParseDuration(args[0])
	}
	out := bufio.NewWriter(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 0; in.Scan(); n++ {
		line := in.Text()
		fmt.Fprintln(log, line)
		if kind == Once && n == 1 {
			return 0
		}
		if kind == Hold && n == 0 {
			if err := hold(args[0]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
		}
		var msg struct {
			MessageType string `json:"message_type"`
		}
		_ = json.Unmarshal([]byte(line), &msg)
		answer := `{}`
		switch kind {
		case Hang, Mute:
			continue
		case Garbage:
			answer = "hello, world"
		case LongLine:
			answer = `{"x":"` + strings.Repeat("x", 100<<10) + `"}`
		case Invalid:
			switch msg.MessageType {
			case "GAME_INVITATION":
				answer = `{"accept": true}`
			case "CHOOSE_PARITY_CALL":
				answer = `{"parity_choice": "Even"}`
			}
		case InvalidJoin:
			if msg.MessageType == "GAME_INVITATION" {
				answer = `{"accept": "yes"}`
			}
		case Decline:
			if msg.MessageType == "GAME_INVITATION" {
				answer = `{"accept": false}`
			}
		default:
			if kind == Stderr {
				fmt.Fprintln(os.Stderr, "got "+msg.MessageType)
			}
			time.Sleep(delay)
			switch msg.MessageType {
			case "GAME_INVITATION":
				answer = `{"accept": true}`
			case "CHOOSE_PARITY_CALL":
				answer = `{"parity_choice": "even"}`
			}
		}
		if kind == CRLF {
			answer = "  " + answer + " \r"
		}
		out.WriteString(answer + "\n")
		out.Flush()
	}
	if kind == Hang || kind == Child {
		select {} // deaf to the end of its input
	}
	return 0
}

// hold returns once a writer of the named pipe path has come and gone.
func hold(path string) error {
	f, err := os.Open(path) // returns once the test opens it to write
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// Log is what a bot appended to file: the process ids it started as, its
// children's, and the lines it read.
type Log struct {
	PIDs, Children []int
	Lines          []string
}

// ReadLog reads the file a bot appends to.
func ReadLog(file string) (Log, error) {
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return Log{}, err
	}
	var l Log
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "pid "):
			n, _ := strconv.Atoi(line[4:])
			l.PIDs = append(l.PIDs, n)
		case strings.HasPrefix(line, "child "):
			n, _ := strconv.Atoi(line[6:])
			l.Children = append(l.Children, n)
		default:
			l.Lines = append(l.Lines, line)
		}
	}
	return l, nil
}

// Types are the message types of the lines in l, in order.
func (l Log) Types() []string {
	out := make([]string, 0, len(l.Lines))
	for _, line := range l.Lines {
		var msg struct {
			MessageType string `json:"message_type"`
		}
		_ = json.Unmarshal([]byte(line), &msg)
		out = append(out, msg.MessageType)
	}
	return out
}

// Count is how many lines of l are of message type t.
func (l Log) Count(t string) int {
	n := 0
	for _, got := range l.Types() {
		if got == t {
			n++
		}
	}
	return n
}
