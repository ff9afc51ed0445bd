// Package mutate makes small random edits to bytes, for tests that feed
// a decoder variants of good input.
package mutate

import "math/rand/v2"

// Bytes returns data (which it may change) with up to edits random edits:
// a byte replaced by one of alphabet, a byte dropped, or one of alphabet
// put in.
func Bytes(r *rand.Rand, data []byte, alphabet string, edits int) []byte {
	for k := r.IntN(edits + 1); k > 0 && len(data) > 0; k-- {
		i := r.IntN(len(data))
		switch r.IntN(3) {
		case 0:
			data[i] = alphabet[r.IntN(len(alphabet))]
		case 1:
			data = append(data[:i], data[i+1:]...)
		default:
			data = append(data[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, data[i:]...)...)
		}
	}
	return data
}
