package protocol

import (
	"math/rand/v2"
	"net/url"
	"reflect"
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

// TestMethodSlots: MethodType finds every method, alias and type name as
// the map does, and nothing else.
func TestMethodSlots(t *testing.T) {
	for name, want := range methodTypes {
		if got, ok := MethodType(name); !ok || got != want {
			t.Fatalf("MethodType(%q) = %q, %v; want %q", name, got, ok, want)
		}
		for _, other := range []string{name + "x", name[1:], strings.ToUpper(name), strings.ToLower(name)} {
			got, ok := MethodType(other)
			want, wok := methodTypes[other]
			if got != want || ok != wok {
				t.Fatalf("MethodType(%q) = %q, %v; want %q, %v", other, got, ok, want, wok)
			}
		}
	}
	if _, ok := MethodType(""); ok {
		t.Fatal("the empty method has a type")
	}
}

// TestShallowCopy: every message type has a generated copy of its top
// level, a new value equal to the old.
func TestShallowCopy(t *testing.T) {
	for _, mt := range MessageTypes() {
		m := New(mt)
		m.Env().Sender = "referee:REF01"
		c := shallowCopy(m)
		if c == nil || c == m || !reflect.DeepEqual(c, m) {
			t.Fatalf("%s: shallowCopy gave %#v for %#v", mt, c, m)
		}
		c.Env().Sender = "x"
		if m.Env().Sender != "referee:REF01" {
			t.Fatalf("%s: the copy shares its envelope", mt)
		}
	}
}
