// Package dashboard is the manager's web page: the league, its standings,
// a chart of points over rounds, the matches in flight and every agent's
// health, rendered on the server with html/template from files embedded
// in the binary and kept live by a small script over the manager's
// Server-Sent Events (/events). Nothing is fetched from elsewhere: it
// works offline, and everything an agent chose is text, never markup.
package dashboard

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/leaguectl/leaguectl/league"
	"github.com/leaguectl/leaguectl/protocol"
)

// Paths the dashboard serves beside its page at /.
const (
	// Prefix is every path of the dashboard but its page.
	Prefix      = "/dashboard/"
	StaticPath  = Prefix + "static/"
	HealthPath  = Prefix + "health"
	HistoryPath = Prefix + "history"
	StatePath   = Prefix + "standings"
)

//go:embed assets
var assets embed.FS // read-only files of the binary: not state

// Options tune the dashboard. Zero fields take the defaults.
type Options struct {
	// PageSize is the rows of a table the page shows at once (default
	// 50): a 1000-player league is paged, not a 1000-row page.
	PageSize int
	// Slow is the p95 call latency past which an agent is marked slow
	// (default 2s).
	Slow time.Duration
	// Now is the clock of elapsed times and ETAs (default time.Now).
	Now func() time.Time
	// Logger logs what the page could not render.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultPageSize = 50
	DefaultSlow     = 2 * time.Second
)

func (o Options) withDefaults() Options {
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.Slow <= 0 {
		o.Slow = DefaultSlow
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// source is what the dashboard reads of a manager: a fake one in tests
// can stand for a league of any size without playing it.
type source interface {
	Snapshot() (league.Snapshot, uint64)
	Health() []league.AgentHealth
	Events() *league.Events
}

// Handler serves m's dashboard: the page at GET / and, under Prefix, its
// static files, the agents' health (HealthPath), the points of every
// player after each round still kept (HistoryPath) and the standings
// (StatePath), as JSON. Mount it at "GET /{$}" and "GET "+Prefix beside
// league.EventsHandler at /events, behind a Gate.
func Handler(m *league.Manager, opts Options) http.Handler { return newHandler(m, opts) }

func newHandler(src source, opts Options) http.Handler {
	opts = opts.withDefaults()
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		panic(err) // the embedded tree is the binary's own: a build mistake
	}
	d := &dash{src: src, opts: opts,
		page: template.Must(template.New("index.html").Funcs(template.FuncMap{"pct": pct}).ParseFS(assets, "assets/index.html"))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.servePage)
	mux.Handle("GET "+StaticPath, http.StripPrefix(StaticPath, staticFiles(http.FileServerFS(static))))
	mux.HandleFunc("GET "+HealthPath, d.serveHealth)
	mux.HandleFunc("GET "+HistoryPath, d.serveHistory)
	mux.HandleFunc("GET "+StatePath, d.serveStandings)
	return secure(mux)
}

type dash struct {
	src  source
	opts Options
	page *template.Template
}

// secure sets the headers of every answer: the page runs no script but
// its own (so a name that slipped through as markup still could not), is
// framed by nobody, and sends no Referer that could carry a ?token=.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// staticFiles lets browsers keep the script and the style a little: they
// change only with the binary. A directory is not listed.
func staticFiles(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "private, max-age=60")
		h.ServeHTTP(w, r)
	})
}

// pageView is what the template renders: the league as it stands when
// the page is asked for, the first page of each table.
type pageView struct {
	League    leagueView
	Standings []protocol.StandingRow
	Players   int
	InFlight  []flightView
	Flights   int
	Health    []healthView
	Agents    int
	PageSize  int
}

type leagueView struct {
	ID, State     string
	Round, Rounds int
	Done, Total   int
	Elapsed, ETA  string
	Seed          string
	StartedAt     string
	Referees      int
}

type flightView struct {
	league.InFlight
	For string
}

// healthView is one agent's health as the page and HealthPath show it,
// with its verdict, so that the script and the server agree on what is
// slow or down.
type healthView struct {
	ID              string  `json:"agent_id"`
	Role            string  `json:"role"`
	Name            string  `json:"display_name"`
	Endpoint        string  `json:"endpoint"`
	LastSeen        string  `json:"last_seen,omitzero"`
	Ago             string  `json:"-"`
	Calls           uint64  `json:"calls"`
	Failures        uint64  `json:"failures"`
	P50             float64 `json:"p50_ms"`
	P95             float64 `json:"p95_ms"`
	BreakerOpen     bool    `json:"breaker_open"`
	TechnicalLosses int     `json:"technical_losses"`
	LastCode        string  `json:"last_code,omitzero"`
	LastReason      string  `json:"last_reason,omitzero"`
	LastMatch       string  `json:"last_match_id,omitzero"`
	// Status is ok, slow, failing or down (its breaker open).
	Status string `json:"status"`
}

func (d *dash) servePage(w http.ResponseWriter, r *http.Request) {
	now := d.opts.Now()
	snap, _ := d.src.Snapshot()
	health := d.health(now)
	v := pageView{League: leagueOf(snap, now), Players: len(snap.Standings), Flights: len(snap.InFlight),
		Agents: len(health), PageSize: d.opts.PageSize}
	v.Standings = snap.Standings[:min(len(snap.Standings), d.opts.PageSize)]
	for _, f := range snap.InFlight[:min(len(snap.InFlight), d.opts.PageSize)] {
		v.InFlight = append(v.InFlight, flightView{InFlight: f, For: since(now, f.Since)})
	}
	v.Health = health[:min(len(health), d.opts.PageSize)]
	for _, a := range snap.Agents {
		if a.Role == protocol.RoleReferee {
			v.League.Referees++
		}
	}
	// Rendered whole before a byte is sent: a template error is a 500,
	// not half a page.
	var buf bytes.Buffer
	if err := d.page.Execute(&buf, v); err != nil {
		d.opts.Logger.LogAttrs(r.Context(), slog.LevelError, "dashboard page", slog.String("error", err.Error()))
		http.Error(w, "the dashboard could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	_, _ = w.Write(buf.Bytes())
}

// leagueOf is the league's header: the seed only once it is over (before,
// it would foretell a random player's moves).
func leagueOf(s league.Snapshot, now time.Time) leagueView {
	v := leagueView{ID: s.LeagueID, State: s.State, Round: s.Round, Rounds: s.Rounds, Done: s.MatchesDone, Total: s.MatchesTotal,
		Elapsed: "–", ETA: "–"}
	if s.Seed != nil {
		v.Seed = strconv.FormatUint(*s.Seed, 10)
	}
	if !s.StartedAt.IsZero() {
		v.StartedAt = s.StartedAt.UTC().Format(time.RFC3339)
		elapsed := now.Sub(s.StartedAt)
		v.Elapsed = human(elapsed)
		switch {
		case s.State == league.StateCompleted:
			v.ETA = "done"
		case s.MatchesDone > 0 && s.MatchesTotal > s.MatchesDone:
			v.ETA = human(time.Duration(float64(elapsed) * float64(s.MatchesTotal-s.MatchesDone) / float64(s.MatchesDone)))
		}
	}
	return v
}

// health is every agent's health, the worst first so that a dead or slow
// agent is on the first page.
func (d *dash) health(now time.Time) []healthView {
	hs := d.src.Health()
	out := make([]healthView, 0, len(hs))
	for _, h := range hs {
		v := healthView{ID: h.AgentID, Role: string(h.Role), Name: h.DisplayName, Endpoint: h.Endpoint, Calls: h.Calls,
			Failures: h.Failures, P50: ms(h.LatencyP50), P95: ms(h.LatencyP95), BreakerOpen: h.BreakerOpen,
			TechnicalLosses: h.TechnicalLosses, LastCode: string(h.LastLossCode), LastReason: h.LastLossReason, LastMatch: h.LastLossMatch, Ago: "never"}
		if !h.LastSeen.IsZero() {
			v.LastSeen = h.LastSeen.UTC().Format(time.RFC3339Nano)
			v.Ago = since(now, h.LastSeen) + " ago"
		}
		switch {
		case h.BreakerOpen:
			v.Status = "down"
		case h.LatencyP95 > d.opts.Slow:
			v.Status = "slow"
		case h.Failures > 0 || h.TechnicalLosses > 0:
			v.Status = "failing"
		default:
			v.Status = "ok"
		}
		out = append(out, v)
	}
	rank := map[string]int{"down": 0, "slow": 1, "failing": 2, "ok": 3}
	slices.SortStableFunc(out, func(a, b healthView) int { return cmp.Compare(rank[a.Status], rank[b.Status]) })
	return out
}

func (d *dash) serveHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, d.health(d.opts.Now()))
}

// standingsView is the league's progress and table, which the page asks
// for as results arrive: a match's result moves the points of two
// players, and only the manager knows how the tie-breaks rank them.
type standingsView struct {
	State        string                 `json:"state"`
	Round        int                    `json:"round_id"`
	Rounds       int                    `json:"rounds"`
	MatchesDone  int                    `json:"matches_done"`
	MatchesTotal int                    `json:"matches_total"`
	Standings    []protocol.StandingRow `json:"standings"`
}

func (d *dash) serveStandings(w http.ResponseWriter, r *http.Request) {
	s, _ := d.src.Snapshot()
	writeJSON(w, standingsView{State: s.State, Round: s.Round, Rounds: s.Rounds, MatchesDone: s.MatchesDone,
		MatchesTotal: s.MatchesTotal, Standings: s.Standings})
}

// historyView is the points of every player after each completed round
// whose event the manager still keeps: all of them for a league of a few
// dozen players, the latest for a large one (FirstRound says which).
type historyView struct {
	Players    []string `json:"players"`
	FirstRound int      `json:"first_round,omitzero"`
	Rounds     []int    `json:"rounds"`
	// Points[i][j] is Players[j]'s points after Rounds[i].
	Points [][]int `json:"points"`
}

func (d *dash) serveHistory(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, history(d.src.Events()))
}

// history reads the completed rounds' standings out of the events still
// kept: a subscription taken and dropped at once, which costs a copy of
// the buffer and blocks no publisher.
func history(ev *league.Events) historyView {
	// The events still kept, even once the first are not: a gap is no
	// reason to draw nothing.
	missed := ev.Kept()
	h := historyView{Players: []string{}, Rounds: []int{}, Points: [][]int{}}
	col := map[string]int{}
	for _, e := range missed {
		re, ok := e.Data.(league.RoundEvent)
		if p, isPtr := e.Data.(*league.RoundEvent); isPtr && p != nil {
			re, ok = *p, true
		}
		if e.Type != league.EventRoundCompleted || !ok {
			continue
		}
		row := make([]int, len(h.Players), max(len(h.Players), len(re.Standings)))
		for _, s := range re.Standings {
			j, seen := col[s.PlayerID]
			if !seen {
				j = len(h.Players)
				col[s.PlayerID] = j
				h.Players = append(h.Players, s.PlayerID)
				row = append(row, 0)
			}
			row[j] = s.Points
		}
		h.Rounds = append(h.Rounds, re.RoundID)
		h.Points = append(h.Points, row)
	}
	if len(h.Rounds) > 0 {
		h.FirstRound = h.Rounds[0]
	}
	// Rows made before a player first showed up are short: pad them so
	// that every row has a column for every player.
	for i := range h.Points {
		if n := len(h.Players) - len(h.Points[i]); n > 0 {
			h.Points[i] = append(h.Points[i], make([]int, n)...)
		}
	}
	return h
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(done, total int) int {
	if total <= 0 {
		return 0
	}
	return done * 100 / total
}

// since is how long ago t was, to the second.
func since(now, t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return human(now.Sub(t))
}

// human is d as a person reads it: 4s, 2m05s, 1h02m.
func human(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
