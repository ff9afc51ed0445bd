package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestSimulateRefusesAHugeLeague: --players 10000 is refused before
// anything of it is made, with its estimate, which names its matches.
func TestSimulateRefusesAHugeLeague(t *testing.T) {
	is := is.New(t)
	var stdout, stderr bytes.Buffer
	err := Run(t.Context(), []string{"simulate", "--players", "10000", "--seed", "1"}, &stdout, &stderr)
	is.Equal(ExitCode(err), ExitValidation)                          // refused, as a usage error
	is.True(strings.Contains(stderr.String(), "49,995,000 matches")) // the match count
	is.True(strings.Contains(stderr.String(), "9,999 rounds"))
	is.True(strings.Contains(stderr.String(), "--yes")) // how to play it anyway
	is.Equal(stdout.Len(), 0)
}

func TestLeaguePlanCheck(t *testing.T) {
	const gb = 1 << 30
	for _, tc := range []struct {
		name     string
		matches  int
		memTotal uint64
		refused  bool
	}{
		{"small", 4950, 16 * gb, false},
		{"ten million", maxPlannedMatches, 0, false},
		{"above ten million", maxPlannedMatches + 1, 0, true},
		{"above half the memory", 1_000_000, 2 * gb, true},
		{"memory unknown", 1_000_000, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := planOf(tc.matches, 10).check(tc.memTotal)
			is.Equal(err != nil, tc.refused)
		})
	}
}

func TestParseMemTotal(t *testing.T) {
	is := is.New(t)
	is.Equal(parseMemTotal(strings.NewReader("MemFree: 1 kB\nMemTotal:       24683620 kB\n")), uint64(24683620*1024))
	is.Equal(parseMemTotal(strings.NewReader("MemTotal: lots\n")), uint64(0)) // not a number: not known
	is.Equal(parseMemTotal(strings.NewReader("")), uint64(0))
}

func TestPlanString(t *testing.T) {
	is := is.New(t)
	is.Equal(planOf(1, 1).String(), "1 match in 1 round, about 1 second and 0.0 MB of memory")
	is.Equal(groupDigits(49995000), "49,995,000")
	is.Equal(groupDigits(999), "999")
}
