package protocol

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
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
