package protocol

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"
)

// endpointByParse is CheckEndpoint's decision by url.Parse alone.
func endpointByParse(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "mem") && u.Host != "" && u.User == nil
}

// TestPlainEndpoint: what plainEndpoint accepts without parsing, url.Parse
// accepts too, on endpoints built at random from the characters that
// matter, and it accepts the endpoints a league uses.
func TestPlainEndpoint(t *testing.T) {
	for _, s := range []string{"http://127.0.0.1:8101/mcp", "mem://player-P01", "https://league.example.org/mcp", "http://localhost:8000"} {
		if !plainEndpoint(s) {
			t.Fatalf("plainEndpoint(%q) = false", s)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	parts := []string{"http://", "https://", "mem://", "ftp://", "http:", "//", "a", "Z", "0", "9", ".", "-", ":", "/", "_", "~",
		"@", "[", "]", "%", "%2", "%41", "?", "#", " ", "é", "\x00", "\x7f", "::1", "80", "65536"}
	for range 200000 {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		if s := b.String(); plainEndpoint(s) && !endpointByParse(s) {
			t.Fatalf("plainEndpoint takes %q, which url.Parse refuses", s)
		}
	}
}

// FuzzPlainEndpoint: what plainEndpoint takes, url.Parse takes.
func FuzzPlainEndpoint(f *testing.F) {
	f.Add("http://127.0.0.1:8101/mcp")
	f.Add("mem://a:")
	f.Fuzz(func(t *testing.T, s string) {
		if plainEndpoint(s) && !endpointByParse(s) {
			t.Fatalf("plainEndpoint takes %q, which url.Parse refuses", s)
		}
	})
}

// TestMethodSlots: MethodType finds every method, alias and type name as

// FuzzPlainTimestamp: the timestamps read without time.Parse are exactly
// those of their form that time.Parse accepts, read as it reads them.
func FuzzPlainTimestamp(f *testing.F) {
	for _, s := range []string{"2025-01-15T10:30:00Z", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z",
		"2000-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "2025-04-31T00:00:00Z", "2025-13-01T00:00:00Z", "2025-00-10T00:00:00Z",
		"2025-01-00T00:00:00Z", "2025-01-15T24:00:00Z", "2025-01-15T10:60:00Z", "2025-01-15T10:30:60Z", "2025-01-15t10:30:00Z",
		"2025-01-15T10:30:00z", "2025-01-15T10:30:0/Z", "2025-01-15T10:30:0:Z", "2025-01-15T10:30:00.5Z", "2025-01-15T10:30:00+00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		date, clock, ok := plainTimestamp(s)
		ref, err := time.Parse(time.RFC3339Nano, s)
		form := len(s) == 20 && s[19] == 'Z' && s[10] == 'T'
		if ok != (err == nil && form) {
			t.Fatalf("%q: plainTimestamp %v, time.Parse %v", s, ok, err)
		}
		if !ok {
			return
		}
		got, err := ParseTimestamp(s)
		if err != nil || got != ref.UTC() ||
			got != time.Date(date[0], time.Month(date[1]), date[2], clock[0], clock[1], clock[2], 0, time.UTC) {
			t.Fatalf("%q: ParseTimestamp %v (%v), time.Parse %v", s, got, err, ref.UTC())
		}
	})
}
