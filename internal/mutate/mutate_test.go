package mutate_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/internal/mutate"
)

// TestBytes: at most the edits asked for, each a byte of the alphabet put
// in, replaced or one dropped; the same seed, the same edits.
func TestBytes(t *testing.T) {
	is := is.New(t)
	r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	changed := 0
	for range 1000 {
		in := []byte("0123456789")
		out := mutate.Bytes(r1, bytes.Clone(in), "xy", 2)
		is.Equal(out, mutate.Bytes(r2, bytes.Clone(in), "xy", 2)) // deterministic
		is.True(len(out) >= len(in)-2 && len(out) <= len(in)+2)
		kept := 0
		for _, c := range out {
			if c != 'x' && c != 'y' {
				kept++
			}
		}
		is.True(kept >= len(in)-2) // at most two of the original bytes gone
		if !bytes.Equal(out, in) {
			changed++
		}
	}
	is.True(changed > 500) // most inputs edited
	is.Equal(len(mutate.Bytes(r1, nil, "x", 3)), 0)
}
