// Command benchtable measures issue 8's five performance targets on this
// machine and prints them as one Markdown table. Every figure is a ratio
// against a reference measured in the same run, because this machine's
// speed moves by ×2 within minutes: each league runs in alternation with
// its reference, several times, and the table shows the medians and the
// median of the per-run ratios with their spread. The leagues are run by
// a freshly built binary, as a user runs them, timed from outside the
// process where the target is about the whole process.
//
//	go run ./internal/cmd/benchtable             # 3 to 5 minutes on 2 cores
//	go run ./internal/cmd/benchtable -skip-1000  # about 1 minute
//
// It reports and does not judge: a missed target still exits 0. It exits 1
// when a row could not be measured (a league that failed, a build that
// did not compile), after printing the table. Every process, temporary
// directory and git worktree it makes is gone when it returns, on an error
// or an interrupt too.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/leaguectl/leaguectl/internal/refproto"
)

type options struct {
	bin      string
	runs     int
	runs1000 int
	starts   int
	skip1000 bool
	timeout  time.Duration
}

func main() { os.Exit(realMain()) }

func realMain() int {
	var o options
	flag.StringVar(&o.bin, "bin", "", "a built leaguectl to measure (default: build one from this tree)")
	flag.IntVar(&o.runs, "runs", 5, "runs of the 200-player, 64-over-HTTP and slow-player leagues (the first two alternated with the prototype)")
	flag.IntVar(&o.runs1000, "runs-1000", 2, "alternated runs of 4f154d6 and this build at 1000 players, at least 2")
	flag.IntVar(&o.starts, "starts", 20, "alternated starts of hello-world and of a 4-player league")
	flag.BoolVar(&o.skip1000, "skip-1000", false, "leave out the 1000-player row (its runs take minutes)")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "give up on whatever is left after this long")
	flag.Parse()
	if o.runs < 1 || o.runs1000 < 2 || o.starts < 1 {
		fmt.Fprintln(os.Stderr, "benchtable: -runs and -starts must be at least 1, -runs-1000 at least 2")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		return 1
	}
	return 0
}

// The rows, in the table's order.
const (
	rowChannels = iota
	row1000
	rowHTTP
	rowSlow
	rowStart
	nRows
)

var (
	whats = [nRows]string{
		"`simulate --players 200`, in memory",
		"`simulate --players 1000`",
		"`simulate --players 64 --transport http`",
		"16 players that each answer every league message after 20 ms",
		"`simulate --players 4`, whole process",
	}
	targets = [nRows]string{
		"≥ 3× the prototype through channels",
		"wall ≤ ⅓ of commit 4f154d6's, in alternated runs; peak RSS < 1 GiB",
		"≥ 0.5× the prototype over net/http",
		"play phase ≤ 1.1 × 6 × 20 ms × 15 rounds (1.98 s)",
		"≤ 10× the start of a hello-world Go binary timed in the same run",
	}
)

const (
	// baseCommit is the build the 1000-player league is timed against.
	baseCommit = "4f154d6"
	// protoRun is how long each run of the prototype plays: long enough
	// that starting and stopping its goroutines and connections is lost in
	// it, short enough that it shares the league's minute.
	protoRun = time.Second
	// slowDelay and slowBudget are row 4's: 16 players play 15 rounds,
	// and a player hears about six league messages a round (invitation,
	// parity call, game over, round announcement, standings, round
	// completed), each held slowDelay; 10% is left for the league's work.
	slowDelay   = 20 * time.Millisecond
	slowPlayers = 16
	slowBudget  = 1.1 * 6 * 15 * slowDelay
	// A process that takes longer than this is stuck, not slow.
	procLimit     = 2 * time.Minute
	procLimit1000 = 6 * time.Minute
)

// skipped is a row left out on purpose or for want of what this clone
// holds: the table says why, and it is not a failure.
type skipped string

func (s skipped) Error() string { return string(s) }

type row struct {
	measured string
	met      bool
	err      error
}

// bench is one run of the tool: the binaries it measures and where its
// temporary files go.
type bench struct {
	o      options
	bin    string // leaguectl
	hello  string // a hello-world Go binary
	modDir string // the module leaguectl is built from
	tmp    string
	log    io.Writer
}

func run(ctx context.Context, o options, out, log io.Writer) error {
	tmp, err := os.MkdirTemp("", "benchtable")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b := &bench{o: o, bin: o.bin, tmp: tmp, log: log}
	if b.modDir, err = moduleDir(ctx); err != nil {
		return err
	}
	if b.bin == "" {
		b.bin = filepath.Join(tmp, "leaguectl")
		b.logf("building leaguectl from %s", b.modDir)
		if err := goBuild(ctx, b.modDir, b.bin); err != nil {
			return err
		}
	}
	if b.hello, err = buildHello(ctx, tmp); err != nil {
		return err
	}

	// The 1000-player row runs last: it is the longest, and a deadline
	// or an interrupt then costs the other rows nothing.
	var rows [nRows]row
	for _, m := range []struct {
		row     int
		measure func() (string, bool, error)
	}{
		{rowChannels, func() (string, bool, error) {
			return b.againstPrototype(ctx, "200 players", refproto.Channels, 3, "--players", "200")
		}},
		{rowHTTP, func() (string, bool, error) {
			return b.againstPrototype(ctx, "64 players over HTTP", refproto.HTTP, 0.5, "--players", "64", "--transport", "http")
		}},
		{rowSlow, func() (string, bool, error) { return b.slow(ctx) }},
		{rowStart, func() (string, bool, error) { return b.start(ctx) }},
		{row1000, func() (string, bool, error) { return b.thousand(ctx) }},
	} {
		r := &rows[m.row]
		if r.measured, r.met, r.err = m.measure(); r.err != nil {
			b.logf("%s: %v", whats[m.row], r.err)
		}
	}

	fmt.Fprintln(out, "| what | target | measured | met |")
	fmt.Fprintln(out, "|---|---|---|---|")
	var failed []string
	for i, r := range rows {
		measured, met := r.measured, yes(r.met)
		var s skipped
		switch {
		case errors.As(r.err, &s):
			measured, met = string(s), "—"
		case r.err != nil:
			measured, met = "not measured: "+oneLine(r.err.Error()), "no"
			failed = append(failed, whats[i])
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s |\n", whats[i], targets[i], measured, met)
	}
	if len(failed) > 0 {
		return fmt.Errorf("not measured: %s", strings.Join(failed, "; "))
	}
	return nil
}

// againstPrototype runs simulate with args and the prototype in
// alternation, the league first on even runs and the prototype first on
// odd ones, so that a steady drift of the machine's speed favours neither.
// Its verdict is the median of the runs' league/prototype ratios ≥ want.
func (b *bench) againstPrototype(ctx context.Context, name string, proto func(context.Context, time.Duration) (refproto.Result, error),
	want float64, args ...string) (string, bool, error) {
	var leagues, refs, ratios []float64
	for i := range b.o.runs {
		var league, ref float64
		for step := range 2 {
			if (step == 0) == (i%2 == 0) {
				st, _, _, err := b.simulate(ctx, procLimit, args...)
				if err != nil {
					return "", false, err
				}
				league = st.MatchesPerSecond
			} else {
				res, err := proto(ctx, protoRun)
				if err != nil {
					return "", false, fmt.Errorf("the prototype: %w", err)
				}
				ref = res.PerSecond()
			}
		}
		leagues, refs, ratios = append(leagues, league), append(refs, ref), append(ratios, league/ref)
		b.logf("%s, run %d/%d: league %s matches/s, prototype %s, ×%.2f", name, i+1, b.o.runs,
			thousands(league), thousands(ref), league/ref)
	}
	r := median(ratios)
	return fmt.Sprintf("league %s matches/s, prototype %s (medians of %s); ×%.2f (runs %s)",
		thousands(median(leagues)), thousands(median(refs)), runsOf(b.o.runs, true), r, spread(ratios)), r >= want, nil
}

// thousand times 1000-player leagues of baseCommit and of this build
// from outside the process, alternated base, new, base, new.
func (b *bench) thousand(ctx context.Context) (string, bool, error) {
	if b.o.skip1000 {
		return "", false, skipped("skipped (-skip-1000)")
	}
	top, err := output(ctx, b.modDir, "git", "rev-parse", "--show-toplevel")
	if err != nil {
		if ctx.Err() != nil {
			return "", false, err
		}
		return "", false, skipped("not measured: not run in a git clone")
	}
	if _, err := output(ctx, top, "git", "cat-file", "-e", baseCommit+"^{commit}"); err != nil {
		if ctx.Err() != nil {
			return "", false, err
		}
		return "", false, skipped("not measured: " + baseCommit + " is not in this clone")
	}
	base := filepath.Join(b.tmp, "leaguectl-"+baseCommit)
	if err := b.buildCommit(ctx, top, baseCommit, base); err != nil {
		return "", false, err
	}
	var bases, news, ratios []float64
	var rss int64
	args := []string{"--players", "1000"}
	for i := range b.o.runs1000 {
		_, baseWall, _, err := simulateWith(ctx, base, procLimit1000, args...)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", baseCommit, err)
		}
		_, wall, r, err := b.simulate(ctx, procLimit1000, args...)
		if err != nil {
			return "", false, err
		}
		rss = max(rss, r)
		bases, news = append(bases, baseWall.Seconds()), append(news, wall.Seconds())
		ratios = append(ratios, wall.Seconds()/baseWall.Seconds())
		b.logf("1000 players, run %d/%d: %s %.1f s, this build %.1f s (×%.2f), peak RSS %d MiB",
			i+1, b.o.runs1000, baseCommit, baseWall.Seconds(), wall.Seconds(), ratios[i], r>>20)
	}
	mem := fmt.Sprintf("peak RSS %d MiB (the highest of this build's runs)", rss>>20)
	if rss == 0 {
		mem = "peak RSS unknown (this system does not report it)"
	}
	r := median(ratios)
	return fmt.Sprintf("%s %.1f s, this build %.1f s (medians of %s); ×%.2f (runs %s); %s",
			baseCommit, median(bases), median(news), runsOf(b.o.runs1000, true), r, spread(ratios), mem),
		r <= 1.0/3 && rss > 0 && rss < 1<<30, nil
}

// buildCommit builds leaguectl at commit into bin, from a detached
// worktree that is removed before it returns, whatever happens: the tree
// the tool runs in is someone's work and is never checked out.
func (b *bench) buildCommit(ctx context.Context, top, commit, bin string) (err error) {
	wt := filepath.Join(b.tmp, "worktree-"+commit)
	b.logf("building %s in a worktree", commit)
	if _, err := output(ctx, top, "git", "worktree", "add", "--detach", wt, commit); err != nil {
		return err
	}
	defer func() {
		// Not ctx: an interrupt that ended the build must not leave the
		// worktree registered in the repository.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, rerr := output(rctx, top, "git", "worktree", "remove", "--force", wt); rerr != nil {
			err = errors.Join(err, fmt.Errorf("%w (run git worktree prune)", rerr))
		}
	}()
	// The module may sit below the repository's top; it sits at the same
	// place in the worktree.
	rel, err := filepath.Rel(top, b.modDir)
	if err != nil {
		return err
	}
	return goBuild(ctx, filepath.Join(wt, rel), bin)
}

// slow times the play phase of a league whose 16 players all hold every
// league message slowDelay. The reference is the fixed budget: a figure
// bound by sleeps does not move with the machine's speed.
func (b *bench) slow(ctx context.Context) (string, bool, error) {
	args := []string{"--players", fmt.Sprint(slowPlayers)}
	for i := 1; i <= slowPlayers; i++ {
		args = append(args, "--fault", fmt.Sprintf("P%02d=slow:%s", i, slowDelay))
	}
	var plays, ratios []float64
	for i := range b.o.runs {
		st, _, _, err := b.simulate(ctx, procLimit, args...)
		if err != nil {
			return "", false, err
		}
		play := time.Duration(st.ElapsedMS) * time.Millisecond
		plays, ratios = append(plays, play.Seconds()), append(ratios, play.Seconds()/slowBudget.Seconds())
		b.logf("16 slow players, run %d/%d: play phase %.3f s", i+1, b.o.runs, play.Seconds())
	}
	r := median(ratios)
	return fmt.Sprintf("play phase %.3f s (median of %s); ×%.2f the %.2f s budget (runs %s)",
		median(plays), runsOf(b.o.runs, false), r, slowBudget.Seconds(), spread(ratios)), r <= 1, nil
}

// start times whole processes: a 4-player league and a hello-world
// binary, in alternation, the hello-world first on even runs. One untimed
// start of each comes first, so that neither pays for reading its binary
// from disk.
func (b *bench) start(ctx context.Context) (string, bool, error) {
	league := []string{"simulate", "--players", "4", "--seed", "1"}
	for _, c := range [][]string{{b.hello}, append([]string{b.bin}, league...)} {
		if _, _, err := timed(ctx, procLimit, nil, c[0], c[1:]...); err != nil {
			return "", false, err
		}
	}
	var hellos, leagues, ratios []float64
	for i := range b.o.starts {
		var h, l time.Duration
		for step := range 2 {
			var err error
			if (step == 0) == (i%2 == 0) {
				h, _, err = timed(ctx, procLimit, nil, b.hello)
			} else {
				l, _, err = timed(ctx, procLimit, nil, b.bin, league...)
			}
			if err != nil {
				return "", false, err
			}
		}
		hellos, leagues = append(hellos, ms(h)), append(leagues, ms(l))
		ratios = append(ratios, l.Seconds()/h.Seconds())
	}
	r := median(ratios)
	b.logf("starts: league %.1f ms, hello-world %.1f ms, ×%.2f", median(leagues), median(hellos), r)
	return fmt.Sprintf("league %.1f ms, hello-world %.1f ms (medians of %s); ×%.2f (runs %s)",
		median(leagues), median(hellos), runsOf(b.o.starts, true), r, spread(ratios)), r <= 10, nil
}

type stats struct {
	ElapsedMS        int64   `json:"elapsed_ms"`
	MatchesPerSecond float64 `json:"matches_per_second"`
}

func (b *bench) simulate(ctx context.Context, limit time.Duration, args ...string) (stats, time.Duration, int64, error) {
	return simulateWith(ctx, b.bin, limit, args...)
}

// simulateWith runs bin's simulate with args, seed 1 and JSON output, and
// returns its stats, its wall time as a process and its peak RSS.
func simulateWith(ctx context.Context, bin string, limit time.Duration, args ...string) (stats, time.Duration, int64, error) {
	var stdout bytes.Buffer
	wall, rss, err := timed(ctx, limit, &stdout, bin, append(append([]string{"simulate"}, args...), "--seed", "1", "--output", "json")...)
	if err != nil {
		return stats{}, 0, 0, err
	}
	var res struct {
		Stats *stats `json:"stats"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Stats == nil {
		return stats{}, 0, 0, fmt.Errorf("simulate %s: no stats in its output (%v)", strings.Join(args, " "), err)
	}
	return *res.Stats, wall, rss, nil
}

// timed runs name with args, its stdout to stdout (nil: the null device,
// which costs the parent nothing while it runs), and returns its wall time
// from just before it starts to its exit and its peak resident set size.
// A process still running after limit, or when ctx ends, is killed.
func timed(ctx context.Context, limit time.Duration, stdout io.Writer, name string, args ...string) (time.Duration, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := command(ctx, "", name, args...)
	var stderr tail
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		what := filepath.Base(name) + " " + strings.Join(args, " ")
		if ctx.Err() != nil {
			return 0, 0, fmt.Errorf("%s: stopped after %s: %w", what, wall.Round(time.Millisecond), context.Cause(ctx))
		}
		return 0, 0, fmt.Errorf("%s: %w: %s", what, err, stderr.String())
	}
	return wall, peakRSS(cmd.ProcessState), nil
}

// tail keeps the last few kilobytes written to it: enough of a failed
// process's stderr to say why, without holding a league's whole log.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	const keep = 4 << 10
	t.b = append(t.b, p...)
	if len(t.b) > keep {
		t.b = slices.Clone(t.b[len(t.b)-keep:])
	}
	return len(p), nil
}

func (t *tail) String() string { return strings.TrimSpace(string(t.b)) }

// command is name with args, run in dir ("": this process's), and
// killed with every process it started when ctx ends.
func command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// output runs name in dir and returns its trimmed stdout.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := command(ctx, dir, name, args...)
	var stderr tail
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// moduleDir is the directory of the main module the tool runs in: where
// leaguectl is built from, whatever directory `go run` was started in.
func moduleDir(ctx context.Context) (string, error) {
	gomod, err := output(ctx, "", "go", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not run inside the leaguectl module")
	}
	return filepath.Dir(gomod), nil
}

// goBuild builds the package in dir into bin, with env added to this
// process's environment. Its scratch files go beside bin, into the
// tool's temporary directory: a build killed by an interrupt cannot
// remove them itself.
func goBuild(ctx context.Context, dir, bin string, env ...string) error {
	cmd := command(ctx, dir, "go", "build", "-o", bin, ".")
	cmd.Env = append(append(os.Environ(), "GOTMPDIR="+filepath.Dir(bin)), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %w: %s", dir, err, bytes.TrimSpace(out))
	}
	return nil
}

// buildHello builds the smallest Go program that prints: the cost of
// starting any Go binary here, against which a league's start is judged.
func buildHello(ctx context.Context, tmp string) (string, error) {
	dir := filepath.Join(tmp, "hello")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	const src = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(tmp, "hello-world")
	// A go.work above the temporary directory is no business of its own.
	if err := goBuild(ctx, dir, bin, "GOWORK=off"); err != nil {
		return "", fmt.Errorf("hello-world: %w", err)
	}
	return bin, nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "benchtable: "+format+"\n", args...)
}

// median is the middle of xs, or the mean of the two middle ones.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// spread is the lowest and highest of the per-run ratios: how far a
// single run strayed from the median the verdict rests on.
func spread(ratios []float64) string {
	return fmt.Sprintf("×%.2f–×%.2f", slices.Min(ratios), slices.Max(ratios))
}

func runsOf(n int, alternated bool) string {
	switch {
	case n == 1:
		return "1 run"
	case alternated:
		return fmt.Sprintf("%d alternated runs", n)
	}
	return fmt.Sprintf("%d runs", n)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// thousands formats x rounded, with commas, as the issue writes its
// numbers.
func thousands(x float64) string {
	s := fmt.Sprint(int64(math.Round(x)))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// oneLine keeps an error's text inside its table cell.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
