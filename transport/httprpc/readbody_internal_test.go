package httprpc

import (
	"strings"
	"testing"
	"testing/iotest"

	"github.com/matryer/is"
)

// TestReadBody: the whole body, whatever its announced length says, read
// in pieces or at once.
func TestReadBody(t *testing.T) {
	body := strings.Repeat("0123456789", 50)
	for _, tc := range []struct {
		name string
		n    int64
	}{{"announced", 500}, {"unknown", -1}, {"announced short", 100}, {"announced long", 900}, {"over the limit", 1 << 30}, {"empty", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := readBody(iotest.OneByteReader(strings.NewReader(body)), tc.n, 1<<20)
			is.NoErr(err)
			is.Equal(string(got), body)
		})
	}
	t.Run("error", func(t *testing.T) {
		is := is.New(t)
		_, err := readBody(iotest.TimeoutReader(strings.NewReader(body)), 500, 1<<20)
		is.True(err != nil)
	})
}
