package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/dashboard"
)

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "the page") })

// serve is one request through g, from host with the header h (or the
// cookie c).
func serve(g dashboard.Gate, target, host string, h http.Header, c *http.Cookie) *http.Response {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = host
	for k, v := range h {
		r.Header[k] = v
	}
	if c != nil {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	g.Wrap(ok).ServeHTTP(w, r)
	return w.Result()
}

func bearer(t string) http.Header { return http.Header{"Authorization": {"Bearer " + t}} }

func TestGate(t *testing.T) {
	const host = "league.example:8000"
	tok := dashboard.Gate{Token: "s3cret"}
	cases := []struct {
		name   string
		gate   dashboard.Gate
		target string
		host   string
		header http.Header
		code   int
	}{
		{"loopback, no token", dashboard.Gate{Open: true}, "/", "127.0.0.1:8000", nil, 200},
		{"loopback by name", dashboard.Gate{Open: true}, "/events", "localhost:8000", nil, 200},
		{"loopback, IPv6", dashboard.Gate{Open: true}, "/metrics", "[::1]:8000", nil, 200},
		{"loopback, a rebound name", dashboard.Gate{Open: true}, "/", "evil.example:8000", nil, 403},
		{"loopback behind a proxy of this host", dashboard.Gate{Open: true, AnyHost: true}, "/", host, nil, 200},
		{"token: none given", tok, "/", host, nil, 401},
		{"token: wrong", tok, "/", host, bearer("s3cre"), 401},
		{"token: wrong, longer", tok, "/events", host, bearer("s3cret!"), 401},
		{"token: right", tok, "/", host, bearer("s3cret"), 200},
		{"token: right, /events", tok, "/events", host, bearer("s3cret"), 200},
		{"token: right in the query, /metrics", tok, "/metrics?token=s3cret", host, nil, 200},
		{"token: wrong in the query", tok, "/?token=nope", host, nil, 401},
		{"token: needed on loopback too once given", tok, "/", "127.0.0.1:8000", nil, 401},
		{"beyond loopback without a token", dashboard.Gate{Refusal: "give --dashboard-token"}, "/", host, bearer("x"), 404},
		{"the zero gate", dashboard.Gate{}, "/", "127.0.0.1:8000", nil, 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			r := serve(c.gate, c.target, c.host, c.header, nil)
			b, _ := io.ReadAll(r.Body)
			is.Equal(r.StatusCode, c.code) // status
			if c.code == 200 {
				is.Equal(string(b), "the page")
				return
			}
			is.Equal(r.Header.Get("Content-Type"), "application/json") // a message that says why
			is.True(strings.HasPrefix(string(b), `{"error":"`))
			if c.code == 401 {
				is.Equal(r.Header.Get("WWW-Authenticate"), `Bearer realm="leaguectl dashboard"`)
			}
		})
	}
	t.Run("the refusal says how to let them in", func(t *testing.T) {
		is := is.New(t)
		r := serve(dashboard.Gate{Refusal: "give --dashboard-token T"}, "/", host, nil, nil)
		b, _ := io.ReadAll(r.Body)
		is.Equal(string(b), `{"error":"give --dashboard-token T"}`+"\n")
	})
}

// TestGateCookie: a browser opens /?token=T once, is sent to / with a
// cookie, and its page's EventSource (which sends no header) gets in by
// the cookie.
func TestGateCookie(t *testing.T) {
	is := is.New(t)
	g := dashboard.Gate{Token: "s3cret"}
	first := serve(g, "/?token=s3cret&page=2", "league.example", nil, nil)
	is.Equal(first.StatusCode, http.StatusSeeOther)
	is.Equal(first.Header.Get("Location"), "/?page=2") // the token leaves the address bar
	cookies := first.Cookies()
	is.Equal(len(cookies), 1)
	c := cookies[0]
	is.Equal(c.Name, dashboard.CookieName)
	is.True(c.HttpOnly)                           // no script reads it
	is.Equal(c.SameSite, http.SameSiteStrictMode) // no other site sends it
	is.Equal(c.Path, "/")                         // /events and /dashboard/ too
	is.True(c.Value != "" && c.Value != "s3cret") // not the token itself
	is.True(!strings.Contains(c.Value, "s3cret"))

	for _, path := range []string{"/", "/events", "/dashboard/health", "/metrics"} {
		r := serve(g, path, "league.example", nil, &http.Cookie{Name: c.Name, Value: c.Value})
		is.Equal(r.StatusCode, http.StatusOK) // in by the cookie
	}
	forged := serve(g, "/events", "league.example", nil, &http.Cookie{Name: c.Name, Value: "s3cret"})
	is.Equal(forged.StatusCode, http.StatusUnauthorized) // the token is no cookie
	other := serve(dashboard.Gate{Token: "other"}, "/events", "league.example", nil, &http.Cookie{Name: c.Name, Value: c.Value})
	is.Equal(other.StatusCode, http.StatusUnauthorized) // a cookie of another token
}
