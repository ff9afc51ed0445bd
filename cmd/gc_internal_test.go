package cmd

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/matryer/is"
)

// TestTuneGC: simulate's collector settings apply only where GOGC and
// GOMEMLIMIT are unset, and are undone afterwards.
func TestTuneGC(t *testing.T) {
	is := is.New(t)
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	limit := debug.SetMemoryLimit(-1)
	for _, tc := range []struct {
		env       map[string]string
		gc, limit bool
	}{
		{map[string]string{}, true, true},
		{map[string]string{"GOGC": "50"}, false, true},
		{map[string]string{"GOMEMLIMIT": "2GiB"}, true, false},
		{map[string]string{"GOGC": "off", "GOMEMLIMIT": "2GiB"}, false, false},
	} {
		restore := tuneGC(func(k string) string { return tc.env[k] })
		gc := debug.SetGCPercent(-1)
		debug.SetGCPercent(gc)
		is.Equal(gc == simulateGCPercent, tc.gc)
		is.Equal(debug.SetMemoryLimit(-1) == simulateMemoryLimit, tc.limit)
		restore()
		gc = debug.SetGCPercent(-1)
		debug.SetGCPercent(gc)
		is.Equal(gc, before) // put back
		is.Equal(debug.SetMemoryLimit(-1), limit)
	}
}

// TestTuneProcs: a league over HTTP gets half as many Ps again, unless
// GOMAXPROCS is set or the league is in memory; the old number comes back.
func TestTuneProcs(t *testing.T) {
	is := is.New(t)
	before := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		env      map[string]string
		overHTTP bool
		want     int
	}{
		{map[string]string{}, true, before + (before+1)/2},
		{map[string]string{}, false, before},
		{map[string]string{"GOMAXPROCS": "1"}, true, before},
	} {
		restore := tuneProcs(func(k string) string { return tc.env[k] }, tc.overHTTP)
		is.Equal(runtime.GOMAXPROCS(0), tc.want)
		restore()
		is.Equal(runtime.GOMAXPROCS(0), before) // put back
	}
}
