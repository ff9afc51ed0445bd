// Package rng derives independent random sources from the league seed, so
// that a draw depends on what it is for (a match, a player in a match) and
// never on the order in which goroutines happen to ask.
package rng

import (
	"math/bits"
	"math/rand/v2"
)

// Derive mixes seed with parts into a new 64-bit seed. Different parts, or
// the same parts in another order, give unrelated values.
func Derive(seed uint64, parts ...string) uint64 {
	h := uint64(14695981039346656037) // FNV-1a offset basis
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= 1099511628211
		}
		h ^= 0xff // separator: ("ab","c") differs from ("a","bc")
		h *= 1099511628211
	}
	return mix(seed ^ mix(h))
}

// New returns a generator for (seed, parts…).
func New(seed uint64, parts ...string) *rand.Rand {
	return rand.New(rand.NewPCG(seeds(seed, parts...)))
}

// Gen holds a generator and its source: one allocation where New makes
// two. Its generator draws from the Gen's own source, so a Gen must not be
// copied once Rand was called, and Rand seeds it anew for whoever still
// draws from it: one Gen a generator.
type Gen struct {
	src rand.PCG
	r   rand.Rand
}

// Rand seeds g for (seed, parts…) and returns its generator, which draws
// what New(seed, parts...) draws.
func (g *Gen) Rand(seed uint64, parts ...string) *rand.Rand {
	g.src.Seed(seeds(seed, parts...))
	g.r = *rand.New(&g.src)
	return &g.r
}

// seeds are the seeds of the generator's source for (seed, parts…).
func seeds(seed uint64, parts ...string) (uint64, uint64) {
	s := Derive(seed, parts...)
	return s, mix(s ^ 0x9e3779b97f4a7c15)
}

// IntN is New(seed, parts...).IntN(n), the same number, drawn without
// allocating the generator: what a draw that is made once (a match's
// number) needs. It panics if n <= 0, as rand.Rand.IntN does.
func IntN(seed uint64, n int, parts ...string) int {
	if n <= 0 {
		panic("rng: invalid argument to IntN")
	}
	var src rand.PCG
	src.Seed(seeds(seed, parts...))
	// math/rand/v2's bounded draw (Rand.uint64n), which every platform
	// computes alike: Lemire's multiply, the rare biased product redrawn.
	u := uint64(n)
	if u&(u-1) == 0 {
		return int(src.Uint64() & (u - 1))
	}
	hi, lo := bits.Mul64(src.Uint64(), u)
	if lo < u {
		thresh := -u % u
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), u)
		}
	}
	return int(hi)
}

// mix is SplitMix64's finaliser: it spreads every input bit over the output.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
