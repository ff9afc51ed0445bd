// The dashboard's live half: the page comes rendered from the server, and
// this keeps it current from /events (Server-Sent Events), /dashboard/health
// and /dashboard/standings. Everything an agent chose goes into the page as
// textContent, never as markup.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const pageSize = Number(document.body.dataset.pageSize) || 50;
  const st = {
    league: { state: $("league-state").textContent, round: 0, rounds: 0, done: 0, total: 0, startedAt: $("league-state").dataset.startedAt || "" },
    standings: null, // null until the first snapshot: the server's rows stay
    agents: new Map(),
    flights: new Map(),
    history: [], // {round, pts: Map(player id -> points)}
    health: null,
    page: { standings: 0, health: 0 },
    filter: { standings: "", health: "" },
  };

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function row(cells, numeric) {
    const tr = document.createElement("tr");
    cells.forEach((c, i) => tr.appendChild(el("td", c, numeric && numeric.includes(i) ? "num" : "")));
    return tr;
  }
  function human(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
    return Math.floor(s / 3600) + "h" + String(Math.floor(s / 60) % 60).padStart(2, "0") + "m";
  }
  function nameOf(id) {
    const a = st.agents.get(id);
    return a && a.display_name ? a.display_name : "";
  }

  // Paging and filtering: a table of 1000 players shows one page of rows.
  function paged(kind, rows, match) {
    const f = st.filter[kind].toLowerCase();
    const kept = f ? rows.filter((r) => match(r).some((s) => String(s || "").toLowerCase().includes(f))) : rows;
    const pages = Math.max(1, Math.ceil(kept.length / pageSize));
    st.page[kind] = Math.min(Math.max(0, st.page[kind]), pages - 1);
    document.querySelector('.pager[data-for="' + kind + '"] .pageinfo').textContent = st.page[kind] + 1 + " / " + pages;
    return kept.slice(st.page[kind] * pageSize, (st.page[kind] + 1) * pageSize);
  }
  document.querySelectorAll(".pager").forEach((p) => {
    p.addEventListener("click", (e) => {
      const step = Number(e.target.dataset && e.target.dataset.step);
      if (!step) return;
      st.page[p.dataset.for] += step;
      p.dataset.for === "standings" ? renderStandings() : renderHealth();
    });
  });
  for (const kind of ["standings", "health"]) {
    $(kind + "-filter").addEventListener("input", (e) => {
      st.filter[kind] = e.target.value;
      st.page[kind] = 0;
      kind === "standings" ? renderStandings() : renderHealth();
    });
  }

  function renderLeague() {
    const l = st.league;
    $("league-state").textContent = l.state;
    $("league-round").textContent = l.round;
    $("league-rounds").textContent = l.rounds;
    $("league-done").textContent = l.done;
    $("league-total").textContent = l.total;
    $("league-progress").value = l.total ? Math.floor((100 * l.done) / l.total) : 0;
    if (l.seed !== undefined && l.seed !== null) $("league-seed").textContent = l.seed;
    if (st.standings) $("league-players").textContent = st.standings.length;
    let refs = 0;
    st.agents.forEach((a) => { if (a.role === "referee") refs++; });
    if (st.agents.size) $("league-referees").textContent = refs;
    tick();
  }
  // Elapsed, ETA and how long each match has run move by the second.
  function tick() {
    const l = st.league, now = Date.now();
    if (l.startedAt) {
      const elapsed = now - Date.parse(l.startedAt);
      $("league-elapsed").textContent = l.state === "COMPLETED" && l.endedAt ? human(Date.parse(l.endedAt) - Date.parse(l.startedAt)) : human(elapsed);
      $("league-eta").textContent = l.state === "COMPLETED" ? "done" : l.done > 0 && l.total > l.done ? human((elapsed * (l.total - l.done)) / l.done) : "–";
    }
    document.querySelectorAll("#inflight td[data-since]").forEach((td) => { td.textContent = human(now - Date.parse(td.dataset.since)); });
  }

  function renderStandings() {
    if (!st.standings) return;
    const body = $("standings").tBodies[0];
    const rows = paged("standings", st.standings, (r) => [r.player_id, r.display_name || nameOf(r.player_id)]);
    const frag = document.createDocumentFragment();
    rows.forEach((r) => {
      const tr = row([r.rank || "", r.player_id, r.display_name || nameOf(r.player_id), r.played, r.wins, r.draws, r.losses, r.technical_losses, r.points], [0, 3, 4, 5, 6, 7, 8]);
      tr.dataset.player = r.player_id;
      tr.cells[2].className = "name";
      tr.cells[8].className = "num pts";
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    $("standings-note").textContent = st.standings.length + " players" + (st.standings.length > pageSize ? ", " + pageSize + " a page" : "");
  }

  function renderFlights() {
    const body = $("inflight").tBodies[0];
    const all = Array.from(st.flights.values()).sort((a, b) => (a.since < b.since ? -1 : 1));
    const frag = document.createDocumentFragment();
    all.slice(0, pageSize).forEach((f) => {
      const tr = row([f.match_id, f.player_a_id + " vs " + f.player_b_id, f.referee_id, ""], [3]);
      tr.dataset.match = f.match_id;
      tr.cells[3].dataset.since = f.since;
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    $("flight-count").textContent = all.length > pageSize ? all.length + " (oldest " + pageSize + " shown)" : all.length;
    tick();
  }

  function addResult(text, matchID, cls) {
    const li = el("li", text, "fresh " + (cls || ""));
    if (matchID) li.dataset.match = matchID;
    const list = $("results");
    list.insertBefore(li, list.firstChild);
    while (list.children.length > 30) list.removeChild(list.lastChild);
  }

  function renderHealth() {
    if (!st.health) return;
    const body = $("health").tBodies[0];
    const rows = paged("health", st.health, (h) => [h.agent_id, h.display_name, h.endpoint, h.last_code, h.last_reason, h.status]);
    const now = Date.now();
    const frag = document.createDocumentFragment();
    rows.forEach((h) => {
      const seen = h.last_seen ? human(now - Date.parse(h.last_seen)) + " ago" : "never";
      const tr = row(["", h.agent_id, h.role, h.display_name, h.endpoint, seen, h.calls, h.failures, h.p50_ms.toFixed(1), h.p95_ms.toFixed(1),
        h.breaker_open ? "open" : "closed", h.technical_losses, [h.last_code, h.last_reason].filter(Boolean).join(" ")], [6, 7, 8, 9, 11]);
      tr.className = "st-" + h.status;
      tr.dataset.agent = h.agent_id;
      tr.cells[0].appendChild(el("span", h.status, "badge"));
      tr.cells[3].className = "name";
      tr.cells[4].className = "ep";
      tr.cells[12].className = "reason";
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    $("agent-count").textContent = st.health.length;
  }

  // The chart: every player's points after each round, as one polyline
  // each; the ten leaders alone once there are too many lines to tell apart.
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function renderChart() {
    const chart = $("chart"), legend = $("chart-legend");
    const W = 640, H = 260, L = 36, R = 10, T = 10, B = 24;
    const h = st.history;
    let ids = st.standings ? st.standings.map((r) => r.player_id) : [];
    if (ids.length === 0 && h.length) ids = Array.from(h[h.length - 1].pts.keys());
    const all = ids.length <= 20;
    if (!all) ids = ids.slice(0, 10);
    const maxPts = Math.max(1, ...h.map((x) => Math.max(0, ...ids.map((id) => x.pts.get(id) || 0))));
    const maxRound = Math.max(st.league.rounds || 0, ...h.map((x) => x.round), 1);
    const x = (r) => L + ((W - L - R) * r) / maxRound;
    const y = (p) => H - B - ((H - T - B) * p) / maxPts;
    const kids = [svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }), svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }),
      svg("text", { x: L - 4, y: T + 8, "text-anchor": "end" }, maxPts), svg("text", { x: L - 4, y: H - B, "text-anchor": "end" }, 0),
      svg("text", { x: W - R, y: H - 6, "text-anchor": "end" }, "round " + maxRound), svg("text", { x: L, y: H - 6 }, "round 0")];
    const items = [];
    ids.forEach((id, i) => {
      const color = "hsl(" + ((i * 137.5) % 360) + ",65%,45%)";
      const pts = [[0, 0]].concat(h.filter((r) => r.pts.has(id)).map((r) => [r.round, r.pts.get(id)]));
      const line = svg("polyline", { points: pts.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" "), stroke: color });
      line.appendChild(svg("title", {}, id + " " + nameOf(id)));
      kids.push(line);
      const li = el("li");
      const sw = el("i");
      sw.style.background = color;
      li.append(sw, id + (nameOf(id) ? " " + nameOf(id) : ""));
      items.push(li);
    });
    chart.replaceChildren(...kids);
    legend.replaceChildren(...items);
    const first = h.length ? h[0].round : 0;
    $("chart-note").textContent = (all ? "every player" : "the ten leaders of " + (st.standings ? st.standings.length : "?")) +
      ", after each completed round" + (first > 1 ? " (rounds before " + first + " are no longer kept)" : "");
  }

  function applySnapshot(s) {
    const l = st.league;
    Object.assign(l, { state: s.state, round: s.round_id, rounds: s.rounds, done: s.matches_done, total: s.matches_total, startedAt: s.started_at || "", seed: s.seed });
    st.agents = new Map((s.agents || []).map((a) => [a.agent_id, a]));
    st.standings = s.standings || [];
    st.flights = new Map((s.in_flight || []).map((f) => [f.match_id, f]));
    renderLeague(); renderStandings(); renderFlights(); renderChart();
  }

  // A result moves two players' points and the manager alone ranks them:
  // the table is asked for again, at most twice a second.
  let refreshing = null;
  function refreshStandings() {
    if (refreshing) return;
    refreshing = setTimeout(async () => {
      try {
        const r = await fetch("/dashboard/standings", { cache: "no-store" });
        const s = r.ok ? await r.json() : null;
        // An answer that left before a later event came (the league's end,
        // a newer result) is older than the page: it is dropped.
        if (s && s.matches_done >= st.league.done && !(st.league.state === "COMPLETED" && s.state !== "COMPLETED")) {
          Object.assign(st.league, { round: s.round_id, rounds: s.rounds, done: Math.max(st.league.done, s.matches_done), total: s.matches_total });
          st.standings = s.standings || [];
          renderLeague(); renderStandings();
        }
      } catch (e) { /* the next result asks again */ }
      refreshing = null;
    }, 500);
  }

  const on = {
    snapshot: applySnapshot,
    registration(d) {
      st.agents.set(d.agent_id, d);
      if (d.role === "player" && st.standings && !st.standings.some((r) => r.player_id === d.agent_id)) {
        st.standings.push({ player_id: d.agent_id, display_name: d.display_name, played: 0, wins: 0, draws: 0, losses: 0, technical_losses: 0, points: 0 });
        renderStandings();
      }
      renderLeague();
    },
    league_started(d, ev) {
      Object.assign(st.league, { state: "RUNNING", rounds: d.rounds, total: d.matches, startedAt: st.league.startedAt || ev.at });
      renderLeague(); renderChart();
    },
    round_started(d) { st.league.round = d.round_id; renderLeague(); },
    match_started(d, ev) { st.flights.set(d.match_id, Object.assign({ since: ev.at }, d)); renderFlights(); },
    match_finished(d) {
      st.flights.delete(d.match_id);
      Object.assign(st.league, { done: d.matches_done, total: d.matches_total });
      const side = (id, status) => id + " " + (status || "").toLowerCase();
      addResult("R" + d.round_id + " " + d.match_id + ": " + side(d.player_a_id, d.player_a_status) + " · " + side(d.player_b_id, d.player_b_status) +
        (d.winner ? " → " + d.winner : " → draw"), d.match_id);
      renderFlights(); renderLeague(); refreshStandings();
    },
    technical_loss(d) { addResult("R" + d.round_id + " " + d.match_id + ": technical loss of " + d.player_id + " " + d.error_code + " " + d.reason, d.match_id, "tl"); pollHealth(); },
    round_completed(d) {
      if (d.standings && d.standings.length) {
        st.standings = d.standings;
        st.history = st.history.filter((r) => r.round !== d.round_id);
        st.history.push({ round: d.round_id, pts: new Map(d.standings.map((r) => [r.player_id, r.points])) });
        st.history.sort((a, b) => a.round - b.round);
      }
      renderStandings(); renderChart();
    },
    breaker_opened() { pollHealth(); },
    breaker_closed() { pollHealth(); },
    league_completed(d, ev) {
      Object.assign(st.league, { state: "COMPLETED", done: st.league.total, seed: d.seed, endedAt: ev.at });
      if (d.final_standings) st.standings = d.final_standings;
      if (d.champion) $("champion").textContent = "Champion: " + d.champion.player_id + (d.champion.display_name ? " " + d.champion.display_name : "") + ", " + d.champion.points + " points";
      $("champion").hidden = !d.champion;
      renderLeague(); renderStandings(); renderChart(); pollHealth();
    },
  };

  let polling = false;
  async function pollHealth() {
    if (polling) return;
    polling = true;
    try {
      const r = await fetch("/dashboard/health", { cache: "no-store" });
      if (r.ok) { st.health = await r.json(); renderHealth(); }
    } catch (e) { /* shown as it was until the next poll */ }
    polling = false;
  }

  async function loadHistory() {
    try {
      const r = await fetch("/dashboard/history", { cache: "no-store" });
      if (!r.ok) return;
      const h = await r.json();
      const known = new Set(st.history.map((x) => x.round));
      h.rounds.forEach((round, i) => {
        if (!known.has(round)) st.history.push({ round, pts: new Map(h.players.map((id, j) => [id, h.points[i][j]])) });
      });
      st.history.sort((a, b) => a.round - b.round);
      renderChart();
    } catch (e) { /* the chart fills from the next rounds */ }
  }

  function connect() {
    const es = new EventSource("/events");
    es.onopen = () => { $("live").textContent = "live"; $("live").className = "live on"; };
    es.onerror = () => { $("live").textContent = "reconnecting"; $("live").className = "live off"; };
    for (const type in on) {
      es.addEventListener(type, (m) => {
        let ev;
        try { ev = JSON.parse(m.data); } catch (e) { return; }
        on[type](ev.data || {}, ev);
      });
    }
  }

  connect();
  loadHistory();
  pollHealth();
  setInterval(pollHealth, 3000);
  setInterval(tick, 1000);
})();
