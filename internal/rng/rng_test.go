package rng_test

import (
	"strconv"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/rng"
)

func TestDerive(t *testing.T) {
	is := is.New(t)
	is.Equal(rng.Derive(42, "R1M1"), rng.Derive(42, "R1M1"))        // stable
	is.True(rng.Derive(42, "R1M1") != rng.Derive(43, "R1M1"))       // seed matters
	is.True(rng.Derive(42, "R1M1") != rng.Derive(42, "R1M2"))       // match matters
	is.True(rng.Derive(42, "ab", "c") != rng.Derive(42, "a", "bc")) // parts are separated
	is.True(rng.Derive(42, "P01", "R1M1") != rng.Derive(42, "R1M1", "P01"))
	is.Equal(rng.New(7, "x").IntN(1000), rng.New(7, "x").IntN(1000)) // same draw
}

// TestUniform: draws of 1..10 over many match ids are close to uniform, so
// the referee's number is fair.
func TestUniform(t *testing.T) {
	is := is.New(t)
	var counts [11]int
	const n = 100000
	for i := range n {
		counts[rng.New(1, "R", strconv.Itoa(i)).IntN(10)+1]++
	}
	for v := 1; v <= 10; v++ {
		is.True(counts[v] > n/10-600 && counts[v] < n/10+600) // within ~6 sigma of n/10
	}
}
