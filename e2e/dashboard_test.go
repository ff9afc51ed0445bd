package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-json-experiment/json"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// hostileName is a player's chosen name that would be an element, and run
// a script, if the dashboard made markup of it.
const hostileName = `<img src=x onerror=alert(1)>`

// screenshotDir is where the dashboard's screenshot is kept after the
// test (ignored by git: e2e/testdata/.gitignore), for CI to keep and for
// docs/dashboard.png.
const screenshotDir = "testdata/out"

// chromium is the headless browser the dashboard is loaded in: Debian's
// chromium, which .ci/run installs when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the dashboard test needs Chromium, and there is no chromium on PATH: install it with "+
			"`apt-get update && apt-get install -y chromium` (.ci/run does): %v", err)
	}
	return path
}

// browser is a headless Chromium tab, closed when the test ends.
func browser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		// Root in a container has no user namespace for the sandbox.
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return tab
}

// domRow is a row of the dashboard's standings table as its cells read.
type domRow struct {
	Rank, Player, Name, Played, W, D, L, TL, Points string
}

// TestDashboard runs a league across processes and watches it in headless
// Chromium: a result shows up in the page while the league runs, without
// a reload, and once it is over the page shows every player and the final
// standings exactly as the manager tells them.
func TestDashboard(t *testing.T) {
	is := is.New(t)
	chromium(t) // fail at once, before any process starts, when it is missing
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t.Setenv("LEAGUECTL_RETRY_INITIAL_DELAY", "20ms")
	t.Setenv("LEAGUECTL_RETRY_MAX_DELAY", "100ms")

	const admin, players = "adm1n", 6
	mgr := startServer(t, "manager", "serve-manager", "--port", "0", "--seed", "5", "--admin-token", admin)
	base := strings.TrimSuffix(mgr.endpoint, "/mcp")
	startServer(t, "REF01", "serve-referee", "--port", "0", "--manager", mgr.endpoint, "--id", "REF01", "--name", "Referee One", "--seed", "5")
	names := map[string]string{}
	for i := 1; i <= players; i++ {
		id := fmt.Sprintf("P%02d", i)
		names[id] = "Player " + id[1:]
		if i == 3 {
			names[id] = hostileName
		}
		// Slow players: the league lasts a few seconds, long enough to be
		// watched.
		startServer(t, id, "serve-player", "--port", "0", "--manager", mgr.endpoint, "--id", id, "--name", names[id],
			"--fault", "slow:150ms", "--seed", "5")
	}

	tab := browser(t, ctx)
	// The page is loaded before the league starts; a mark set in it now
	// is gone if it ever reloads.
	err := chromedp.Do(tab,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#live.on")),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[string](`window.__loadedOnce = "yes"`)(ctx, tg)
			return err
		}))
	if err != nil {
		t.Fatalf("load the dashboard: %v\nmanager:\n%s", err, mgr.stderr)
	}
	live, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#live")))
	is.NoErr(err)
	is.Equal(live, "live") // the page listens on /events

	type started struct {
		out, errs string
		err       error
	}
	done := make(chan started, 1)
	leaguectl, dir := bin(t), t.TempDir()
	go func() {
		c := exec.CommandContext(ctx, leaguectl, "start", "--manager", mgr.endpoint, "--admin-token", admin,
			"--min-players", fmt.Sprint(players), "--wait", "--output", "json")
		c.Dir = dir
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		done <- started{out.String(), errb.String(), err}
	}()

	// While the league runs: the first result shows up in the page.
	wctx, wcancel := context.WithTimeout(tab, 60*time.Second)
	err = chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS("#results li[data-match]")))
	wcancel()
	if err != nil {
		t.Fatalf("no result in the page: %v\nmanager:\n%s", err, mgr.stderr)
	}
	first, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#results li[data-match]")))
	is.NoErr(err)
	mark, err := chromedp.Run(tab, chromedp.Evaluate[string](`window.__loadedOnce || "reloaded"`))
	is.NoErr(err)
	is.Equal(mark, "yes")                   // no reload: it came over /events
	is.True(strings.Contains(first, " → ")) // a result: who won, or a draw
	state, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#league-state")))
	is.NoErr(err)
	is.Equal(state, "RUNNING") // seen while the league runs
	t.Logf("a result while the league runs: %q", first)

	var res started
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("start --wait did not return")
	}
	if res.err != nil {
		t.Fatalf("start: %v\n%s\nmanager:\n%s", res.err, res.errs, mgr.stderr)
	}
	final := decode(t, res.out)

	// After the league: the page says so, with the champion.
	wctx, wcancel = context.WithTimeout(tab, 30*time.Second)
	_, err = chromedp.Run(wctx, chromedp.Poll[bool](`document.getElementById("league-state").textContent === "COMPLETED" &&
		!document.getElementById("champion").hidden && document.querySelectorAll("#health tbody tr").length === 7`,
		chromedp.WithPollingTimeout(30*time.Second)))
	wcancel()
	if err != nil {
		t.Fatalf("the page did not show the league completed: %v", err)
	}
	rows, err := chromedp.Run(tab, chromedp.Evaluate[[]domRow](`Array.from(document.querySelectorAll("#standings tbody tr")).map(tr => {
		const c = Array.from(tr.cells).map(td => td.textContent);
		return {Rank: c[0], Player: c[1], Name: c[2], Played: c[3], W: c[4], D: c[5], L: c[6], TL: c[7], Points: c[8]};
	})`))
	is.NoErr(err)
	images, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll("img").length`))
	is.NoErr(err)
	hostileCell, err := chromedp.Run(tab, chromedp.Evaluate[string](
		`(Array.from(document.querySelectorAll("#standings td.name")).find(td => td.textContent.startsWith("<img")) || {}).textContent || ""`))
	is.NoErr(err)
	seed, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#league-seed")))
	is.NoErr(err)
	champion, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#champion")))
	is.NoErr(err)
	is.Equal(images, 0)                // the hostile name made no element
	is.Equal(hostileCell, hostileName) // it is shown, as text
	is.Equal(seed, "5")                // told once the league is over
	is.True(strings.HasPrefix(champion, "Champion: "+final.Champion.PlayerID))

	// The final standings, exactly: as start --wait and the manager's
	// standings query give them.
	want := domRows(final.FinalStandings, names)
	is.Equal(len(rows), players) // every player
	is.Equal(rows, want)
	out, errs, code := runCLI(t, "query", "standings", "--manager", mgr.endpoint, "--admin-token", admin, "--output", "json")
	if code != 0 {
		t.Fatalf("query standings: %s", errs)
	}
	var q struct {
		Data struct {
			Standings []protocol.StandingRow `json:"standings"`
		} `json:"data"`
	}
	is.NoErr(json.Unmarshal([]byte(out), &q))
	if len(q.Data.Standings) == 0 {
		t.Fatalf("query standings answered no standings:\n%s", out)
	}
	is.Equal(domRows(q.Data.Standings, names), rows) // the manager's get_standings

	// Health: every agent, with its endpoint and latencies.
	health, err := chromedp.Run(tab, chromedp.Evaluate[[][]string](
		`Array.from(document.querySelectorAll("#health tbody tr")).map(tr => Array.from(tr.cells).map(td => td.textContent))`))
	is.NoErr(err)
	seen := map[string]bool{}
	for _, h := range health {
		seen[h[1]] = true
		is.True(strings.HasPrefix(h[4], "http://127.0.0.1:")) // its registered endpoint
	}
	is.Equal(len(seen), players+1) // six players and the referee

	path := screenshot(t, tab, "dashboard.png")
	t.Logf("screenshot of the dashboard after the league: %s", path)
}

// domRows is the standings table as the dashboard should show it.
func domRows(standings []protocol.StandingRow, names map[string]string) []domRow {
	rows := make([]domRow, 0, len(standings))
	for _, r := range standings {
		rows = append(rows, domRow{Rank: fmt.Sprint(r.Rank), Player: r.PlayerID, Name: names[r.PlayerID], Played: fmt.Sprint(r.Played),
			W: fmt.Sprint(r.Wins), D: fmt.Sprint(r.Draws), L: fmt.Sprint(r.Losses), TL: fmt.Sprint(r.TechnicalLosses), Points: fmt.Sprint(r.Points)})
	}
	return rows
}

// screenshot saves the whole page as a PNG under screenshotDir and
// returns its path.
func screenshot(t *testing.T, tab context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := filepath.Abs(filepath.Join(screenshotDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDashboardGate: who may read a manager's /, /events and /metrics,
// by its flags: anyone on loopback; beyond it (here, behind a trusted
// proxy) nobody without --dashboard-token, the token's holders with it;
// and nobody anywhere with --no-dashboard.
func TestDashboardGate(t *testing.T) {
	pages := []string{"/", "/events", "/metrics", "/dashboard/health"}
	get := func(t *testing.T, url string, h http.Header) (int, string, *http.Response) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = h
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// /events never ends: it is read up to its first event.
		var b []byte
		buf := make([]byte, 4096)
		for !bytes.Contains(b, []byte("event: ")) {
			n, err := resp.Body.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				break
			}
		}
		return resp.StatusCode, string(b), resp
	}
	manager := func(t *testing.T, args ...string) string {
		m := startServer(t, "manager", append([]string{"serve-manager", "--port", "0", "--open-referees"}, args...)...)
		return strings.TrimSuffix(m.endpoint, "/mcp")
	}

	t.Run("loopback: no token needed", func(t *testing.T) {
		base := manager(t)
		for _, p := range pages {
			is := is.New(t)
			code, _, _ := get(t, base+p, nil)
			is.Equal(code, http.StatusOK) // p
		}
	})
	t.Run("beyond loopback without a token: refused, and told why", func(t *testing.T) {
		base := manager(t, "--trusted-proxy", "10.0.0.1")
		for _, p := range pages {
			is := is.New(t)
			code, body, _ := get(t, base+p, nil)
			is.Equal(code, http.StatusNotFound)                  // p
			is.True(strings.Contains(body, "--dashboard-token")) // how to let them in
			is.True(strings.Contains(body, "LEAGUECTL_DASHBOARD_TOKEN"))
		}
		is := is.New(t)
		code, _, _ := get(t, base+"/health", nil)
		is.Equal(code, http.StatusOK) // the league itself still serves
	})
	t.Run("beyond loopback with a token", func(t *testing.T) {
		t.Setenv("LEAGUECTL_DASHBOARD_TOKEN", "t0ken")
		base := manager(t, "--trusted-proxy", "10.0.0.1")
		for _, p := range pages {
			is := is.New(t)
			code, _, _ := get(t, base+p, nil)
			is.Equal(code, http.StatusUnauthorized) // p without the token
			code, _, _ = get(t, base+p, http.Header{"Authorization": {"Bearer wrong"}})
			is.Equal(code, http.StatusUnauthorized) // p with the wrong one
			code, _, _ = get(t, base+p, http.Header{"Authorization": {"Bearer t0ken"}})
			is.Equal(code, http.StatusOK) // p with the token
		}
		is := is.New(t)
		code, _, resp := get(t, base+"/?token=t0ken", nil)
		is.Equal(code, http.StatusSeeOther) // a browser's first load
		is.Equal(resp.Header.Get("Location"), "/")
		cookies := resp.Cookies()
		is.Equal(len(cookies), 1)
		is.True(cookies[0].HttpOnly)
		is.Equal(cookies[0].SameSite, http.SameSiteStrictMode)
		cookie := http.Header{"Cookie": {cookies[0].Name + "=" + cookies[0].Value}}
		for _, p := range pages {
			code, body, _ := get(t, base+p, cookie)
			is.Equal(code, http.StatusOK) // p by the cookie, as EventSource asks
			if p == "/events" {
				is.True(strings.Contains(body, "event: snapshot")) // the stream starts with the league
			}
		}
	})
	t.Run("--no-dashboard: off everywhere", func(t *testing.T) {
		base := manager(t, "--no-dashboard")
		for _, p := range pages {
			is := is.New(t)
			code, _, _ := get(t, base+p, nil)
			is.Equal(code, http.StatusNotFound) // p
		}
	})
}
