package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/leaguectl/leaguectl/protocol"
	"github.com/leaguectl/leaguectl/transport/httprpc"
)

// CookieName is the cookie a browser is given once it has shown the token
// (?token=T): EventSource cannot send an Authorization header.
const CookieName = "leaguectl_dashboard"

// Gate says who may read the read-only pages of an agent (the dashboard,
// /events, /metrics): anyone on its host, the holders of a token, or
// nobody. Its zero value lets nobody in.
type Gate struct {
	// Token, when set, is required of every request: as "Authorization:
	// Bearer T", as the cookie a first ?token=T sets, or as ?token=T.
	Token string
	// Open lets in every request without a token: for a server that only
	// its own host can reach. A browser's request must then name a
	// loopback host, so that a web page whose DNS name was rebound to
	// 127.0.0.1 cannot read the league through the visitor's browser.
	Open bool
	// AnyHost lets an Open gate take any Host: a reverse proxy on this
	// host forwards with the public name (--behind-proxy).
	AnyHost bool
	// Refusal is why nobody is let in, told to whoever asks.
	Refusal string
}

// Wrap serves h to the requests g lets in; the others are answered 401
// (no token or the wrong one) or 404 (nobody is let in), with a JSON
// message that says why.
func (g Gate) Wrap(h http.Handler) http.Handler {
	cookie := g.cookieValue()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case g.Token != "":
		case g.Open:
			if !g.AnyHost && !httprpc.LoopbackHost(r.Host) {
				deny(w, http.StatusForbidden, "this server serves its dashboard, /events and /metrics only by a loopback name such as 127.0.0.1 or localhost, not "+r.Host)
				return
			}
			h.ServeHTTP(w, r)
			return
		default:
			msg := g.Refusal
			if msg == "" {
				msg = "the dashboard, /events and /metrics are off"
			}
			deny(w, http.StatusNotFound, msg)
			return
		}
		if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && protocol.SameSecret(bearer, g.Token) {
			h.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(CookieName); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(cookie)) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query(); q.Has("token") {
			if !protocol.SameSecret(q.Get("token"), g.Token) {
				deny(w, http.StatusUnauthorized, "wrong dashboard token")
				return
			}
			if r.Method == http.MethodGet && r.URL.Path == "/" {
				// A browser's first load: the cookie carries the token
				// from now on (EventSource sends no header), and the
				// address loses it, so that it is neither kept in the
				// history nor shown over a shoulder.
				http.SetCookie(w, &http.Cookie{Name: CookieName, Value: cookie, Path: "/", HttpOnly: true,
					SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
				q.Del("token")
				u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
				http.Redirect(w, r, u.String(), http.StatusSeeOther)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		deny(w, http.StatusUnauthorized, "a dashboard token is required: send Authorization: Bearer T, or open /?token=T in a browser")
	})
}

// cookieValue is what the cookie holds: a MAC of the token rather than the
// token, so that a cookie read off a browser's disk is no bearer token.
func (g Gate) cookieValue() string {
	if g.Token == "" {
		return ""
	}
	m := hmac.New(sha256.New, []byte(g.Token))
	m.Write([]byte("leaguectl dashboard cookie v1"))
	return hex.EncodeToString(m.Sum(nil))
}

func deny(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="leaguectl dashboard"`)
	}
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
