// Package rng derives independent random sources from the league seed, so
// that a draw depends on what it is for (a match, a player in a match) and
// never on the order in which goroutines happen to ask.
package rng

import (
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
	s := Derive(seed, parts...)
	return rand.New(rand.NewPCG(s, mix(s^0x9e3779b97f4a7c15)))
}

// mix is SplitMix64's finaliser: it spreads every input bit over the output.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
