package cmd

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/leaguectl/leaguectl/protocol"
)

// writeJSON prints exactly one JSON object and a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return &exitError{code: ExitRuntime, err: err}
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeStandingsTable prints the final standings and the champion.
// The seed is shown when known (an operator's view of a league).
func writeStandingsTable(w io.Writer, lc *protocol.LeagueCompleted, seed *uint64) error {
	players := len(lc.FinalStandings)
	fmt.Fprintf(w, "League %s: %d players, %d rounds, %d matches", lc.LeagueID, players, lc.TotalRounds, lc.TotalMatches)
	if seed != nil {
		fmt.Fprintf(w, " (seed %d)", *seed)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tPLAYER\tNAME\tPLAYED\tW\tD\tL\tTL\tPOINTS")
	for _, r := range lc.FinalStandings {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n",
			r.Rank, r.PlayerID, r.DisplayName, r.Played, r.Wins, r.Draws, r.Losses, r.TechnicalLosses, r.Points)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := lc.Champion; c != nil {
		_, err := fmt.Fprintf(w, "\nChampion: %s (%s) with %d points\n", c.PlayerID, c.DisplayName, c.Points)
		return err
	}
	return nil
}

// progress draws a bar on stderr for a league that takes a while, and
// nothing when stderr is not a terminal. The league only stores a count;
// drawing happens on a ticker, off the league's path.
type progress struct {
	done  atomic.Int64
	total int
	quit  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

// progressDelay is how long a league runs before it gets a bar.
const progressDelay = time.Second

func newProgress(stderr io.Writer, total int) *progress {
	p := &progress{total: total, quit: make(chan struct{})}
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
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
		bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("matches"),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			_ = bar.Set(int(p.done.Load()))
			select {
			case <-p.quit:
				_ = bar.Finish()
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
