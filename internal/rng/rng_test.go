package rng_test

import (
	"math"
	"math/rand/v2"
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

// TestIntN: IntN draws what New's generator draws first, for bounds that
// are powers of two, small, and large enough that the redraw happens.
func TestIntN(t *testing.T) {
	is := is.New(t)
	bounds := []uint64{1, 2, 3, 7, 10, 16, 1000, 1<<30 + 1, 3 << 29, math.MaxInt32, 1<<31 + 1, 1<<62 + 1, 3 << 61, math.MaxInt64}
	for seed := range uint64(2000) {
		for _, b := range bounds {
			if b > math.MaxInt {
				continue // beyond an int here (32 bits)
			}
			n := int(b)
			is.Equal(rng.IntN(seed, n, "R1M1", "drawn_number"), rng.New(seed, "R1M1", "drawn_number").IntN(n))
		}
	}
	is.Equal(testing.AllocsPerRun(10, func() { rng.IntN(7, 10, "drawn_number") }), 0.0)
}

// TestGen: a Gen's generator draws what New's draws, again after it is
// seeded anew, and a new Gen with its generator is one allocation.
func TestGen(t *testing.T) {
	is := is.New(t)
	var g rng.Gen
	for seed := range uint64(50) {
		r, want := g.Rand(seed, "player", "P01", "R1M1"), rng.New(seed, "player", "P01", "R1M1")
		for range 20 {
			is.Equal(r.Uint64(), want.Uint64())
		}
	}
	var sink *rand.Rand
	is.Equal(testing.AllocsPerRun(10, func() { sink = new(rng.Gen).Rand(7, "x") }), 1.0)
	is.True(sink != nil)
}
