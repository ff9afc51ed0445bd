package cmd

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// terminal is a writer that says itself whether it is a terminal: how a
// test gets a bar drawn into a buffer, with no global to set.
type terminal interface {
	io.Writer
	IsTerminal() bool
}

// isTerminal reports whether w is a terminal, where a bar redrawn in place
// makes sense; anything else (a file, a pipe, a buffer) gets lines.
func isTerminal(w io.Writer) bool {
	switch w := w.(type) {
	case terminal:
		return w.IsTerminal()
	case *os.File:
		return term.IsTerminal(int(w.Fd()))
	}
	return false
}

// bar is a progress bar of matches redrawn in place on a terminal by
// schollz/progressbar, with the matches done, their rate and an ETA. The
// library's rate is a rolling average of its last ten samples, taken every
// half second, not an average since the start: it follows a league that
// slows down (a slow agent, a timeout) or speeds up, and the ETA with it.
type bar struct {
	w     io.Writer
	total int
	pb    *progressbar.ProgressBar
}

func newBar(w io.Writer, total int) *bar { return &bar{w: w, total: total} }

// draw shows done of total matches (total 0: as before).
func (b *bar) draw(done, total int) {
	if total > 0 && (b.pb == nil || total != b.total) {
		b.total = total
		b.pb = progressbar.NewOptions(total, progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription("matches"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("matches"),
			progressbar.OptionSetPredictTime(true), progressbar.OptionSetWidth(24), progressbar.OptionClearOnFinish())
	}
	if b.pb != nil {
		_ = b.pb.Set(min(max(done, 0), b.total))
	}
}

// clear takes the bar off its line, so the result starts on a clean one.
func (b *bar) clear() {
	if b.pb != nil {
		_ = b.pb.Finish()
		b.pb = nil
	}
}

// progress draws simulate's bar on stderr for a league that takes a
// while, and nothing when stderr is not a terminal. The league only
// stores a count; drawing happens on a ticker, off the league's path.
type progress struct {
	done atomic.Int64
	quit chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// progressDelay is how long a league runs before it gets a bar.
const progressDelay = time.Second

// progressTick is how often simulate's bar is redrawn.
const progressTick = 200 * time.Millisecond

func newProgress(stderr io.Writer, total int) *progress {
	p := &progress{quit: make(chan struct{})}
	if !isTerminal(stderr) {
		return p
	}
	p.wg.Go(func() {
		delay := time.NewTimer(progressDelay)
		defer delay.Stop()
		select {
		case <-p.quit:
			return
		case <-delay.C:
		}
		b := newBar(stderr, total)
		tick := time.NewTicker(progressTick)
		defer tick.Stop()
		for {
			b.draw(int(p.done.Load()), total)
			select {
			case <-p.quit:
				b.clear()
				return
			case <-tick.C:
			}
		}
	})
	return p
}

func (p *progress) set(done, _ int) { p.done.Store(int64(done)) }

func (p *progress) stop() {
	p.once.Do(func() { close(p.quit) })
	p.wg.Wait()
}

// leagueProgress is where a league stood when a progressSource looked.
type leagueProgress struct {
	at          time.Time
	done, total int
}

// roundDone is a completed round, as its line tells it.
type roundDone struct {
	round, rounds                   int
	matches, draws, technicalLosses int
	// took is how long the round was seen running; when it began and
	// ended between two looks, took is 0 and under the time between them.
	took, under time.Duration
}

func (r roundDone) String() string {
	took := fmt.Sprintf("%.1f s", r.took.Seconds())
	if r.took == 0 && r.under > 0 {
		took = fmt.Sprintf("<%.1f s", max(r.under.Seconds(), 0.1))
	}
	return fmt.Sprintf("round %d/%d completed: %s, %s, %s, %s", r.round, r.rounds,
		plural(r.matches, "match", "matches"), plural(r.draws, "draw", "draws"),
		plural(r.technicalLosses, "technical loss", "technical losses"), took)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// progressView shows a league's progress as a progressSource tells it,
// from one goroutine, and close once it is over.
type progressView interface {
	progress(p leagueProgress)
	roundCompleted(r roundDone)
	close()
}

// newProgressView is the view of stderr: a bar on a terminal, a line a
// round anywhere else, where a bar's redraws would be noise in a log.
func newProgressView(stderr io.Writer) progressView {
	if isTerminal(stderr) {
		return &barView{b: newBar(stderr, 0)}
	}
	return &lineView{w: stderr}
}

type barView struct{ b *bar }

func (v *barView) progress(p leagueProgress) { v.b.draw(p.done, p.total) }
func (v *barView) roundCompleted(roundDone)  {}
func (v *barView) close()                    { v.b.clear() }

type lineView struct{ w io.Writer }

func (v *lineView) progress(leagueProgress)    {}
func (v *lineView) roundCompleted(r roundDone) { fmt.Fprintln(v.w, r) }
func (v *lineView) close()                     {}
