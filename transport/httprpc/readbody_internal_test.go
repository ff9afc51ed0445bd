package httprpc

import (
	"io"
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

// TestReadBodyGrowsAsItComes: an announced length claims at most sizedFrom
// bytes before the body comes, and a long body still arrives whole, with
// what follows it left unread by readSized.
func TestReadBodyGrowsAsItComes(t *testing.T) {
	is := is.New(t)
	const announced = 1 << 20
	b, err := readBody(strings.NewReader("{"), announced, announced)
	is.NoErr(err) // shorter than announced: the caller's reader says so
	is.Equal(string(b), "{")
	is.True(cap(b) <= sizedFrom)

	b, err = readSized(strings.NewReader("{"), announced)
	is.Equal(err, io.ErrUnexpectedEOF)
	is.Equal(string(b), "{")
	is.True(cap(b) <= sizedFrom)

	long := strings.Repeat("0123456789", 30_000) // 300,000 bytes: grown four times
	b, err = readBody(iotest.HalfReader(strings.NewReader(long)), int64(len(long)), announced)
	is.NoErr(err)
	is.Equal(string(b), long)

	r := strings.NewReader(long + "next request")
	b, err = readSized(iotest.HalfReader(r), int64(len(long)))
	is.NoErr(err)
	is.Equal(string(b), long)
	rest, err := io.ReadAll(r)
	is.NoErr(err)
	is.Equal(string(rest), "next request") // not read past the body

	b, err = readSized(strings.NewReader("abc"), 3) // no bigger than the body
	is.NoErr(err)
	is.Equal(string(b), "abc")
	is.Equal(cap(b), 3)

	body := strings.Repeat("x", 2*sizedFrom) // twice the start, exactly
	b, err = readBody(strings.NewReader(body), int64(len(body)), announced)
	is.NoErr(err)
	is.Equal(string(b), body)
}

// TestIdleConnsFor: a quarter of the files the process may open, between
// 256 and 4,096; 4,096 when the system does not say.
func TestIdleConnsFor(t *testing.T) {
	for files, want := range map[uint64]int{0: 4096, 1024: 256, 4096: 1024, 10000: 2500, 16384: 4096, 1 << 20: 4096} {
		if got := idleConnsFor(files); got != want {
			t.Errorf("idleConnsFor(%d) = %d, want %d", files, got, want)
		}
	}
}
