package cmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// maxPlannedMatches is the most matches simulate plays without --yes: ten
// million take about ten minutes and 16 GB.
const maxPlannedMatches = 10_000_000

// Rough costs of a match, measured with simulate in memory: time from
// docs/performance.md (16,978 matches/s at 200 players on an idle 2-core
// machine), memory from the peak RSS of --players 100 and 500 (1.6 KB a
// match, schedule, results and standings). They make an estimate, not a
// promise: a loaded machine, HTTP or exec agents take longer.
const (
	matchTime   = 60 * time.Microsecond
	matchMemory = 1600 // bytes
)

// leaguePlan is what a league will take, told before it starts.
type leaguePlan struct {
	matches, rounds int
	took            time.Duration
	memory          uint64 // bytes
}

func planOf(matches, rounds int) leaguePlan {
	return leaguePlan{matches: matches, rounds: rounds, took: time.Duration(matches) * matchTime,
		memory: uint64(matches) * matchMemory}
}

func (p leaguePlan) String() string {
	return fmt.Sprintf("%s in %s, about %s and %s of memory", counted(p.matches, "match", "matches"),
		counted(p.rounds, "round", "rounds"), roughDuration(p.took), bytesOf(p.memory))
}

// check refuses a plan too big to start without being asked: more than
// maxPlannedMatches, or more than half of memTotal (0: not known).
func (p leaguePlan) check(memTotal uint64) error {
	var why string
	switch {
	case p.matches > maxPlannedMatches:
		why = fmt.Sprintf("more than %s matches", groupDigits(maxPlannedMatches))
	case memTotal > 0 && p.memory > memTotal/2:
		why = fmt.Sprintf("more than half of this machine's %s of memory", bytesOf(memTotal))
	default:
		return nil
	}
	return usagef(fmt.Errorf("this league is %s: %s; give --yes to play it anyway, or fewer --players", p, why))
}

// memTotal is the machine's memory (MemTotal of /proc/meminfo), 0 where
// it is not known.
func memTotal() uint64 {
	if runtime.GOOS != "linux" {
		return 0
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseMemTotal(f)
}

// parseMemTotal reads "MemTotal:  24683620 kB" from a meminfo.
func parseMemTotal(r io.Reader) uint64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil || kb > 1<<53 {
			return 0
		}
		return kb * 1024
	}
	return 0
}

// roughDuration is d to a unit a person estimates in.
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return plural(max(1, int(d.Round(time.Second)/time.Second)), "second", "seconds")
	case d < 2*time.Hour:
		return plural(int(d.Round(time.Minute)/time.Minute), "minute", "minutes")
	default:
		return plural(int(d.Round(time.Hour)/time.Hour), "hour", "hours")
	}
}

// bytesOf is n bytes in MB or GB (powers of 1024), one figure after the
// point below ten.
func bytesOf(n uint64) string {
	const mb, gb = 1 << 20, 1 << 30
	switch {
	case n >= 10*gb:
		return fmt.Sprintf("%d GB", (n+gb/2)/gb)
	case n >= gb:
		return fmt.Sprintf("%.1f GB", float64(n)/gb)
	case n >= 10*mb:
		return fmt.Sprintf("%d MB", (n+mb/2)/mb)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/mb)
	}
}

// groupDigits writes n with thousands separated by commas: 49,995,000.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// counted is plural with the thousands of n grouped.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return groupDigits(n) + " " + many
}
