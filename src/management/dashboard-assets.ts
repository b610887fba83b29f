/**
 * The dashboard's static assets (docs/observability.md, "Dashboard"): one HTML page, one
 * stylesheet, one script, plain HTML/CSS/JS with no library and no CDN, kept as strings
 * so that they ship in the package's compiled output and the page works offline.
 *
 * The script polls `/dashboard/state` (with the bearer token from `#token=...` when one
 * is given) and renders members, shards per member per type, messages per second, the
 * timeline of shard moves and the last warnings. Elements carry `data-testid` attributes
 * for the browser test (test/management/dashboard-browser.test.ts).
 */

/** The page; `refreshMs` is the poll interval. */
export function dashboardHtml(refreshMs: number): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>shardkit dashboard</title>
<link rel="stylesheet" href="/dashboard/style.css">
</head>
<body data-refresh-ms="${Math.floor(refreshMs)}">
<header>
  <h1>shardkit</h1>
  <span id="self" data-testid="self"></span>
  <span id="status" data-testid="status">connecting…</span>
</header>
<main>
  <section class="card wide">
    <h2>Members <small id="convergence"></small></h2>
    <table data-testid="members">
      <thead><tr><th>member</th><th>status</th><th>reachable</th><th>roles</th><th>version</th><th></th></tr></thead>
      <tbody id="members"></tbody>
    </table>
  </section>
  <section class="card">
    <h2>Messages per second <small>(remote in + out, this member)</small></h2>
    <div class="big" id="rate" data-testid="rate">–</div>
    <svg id="spark" viewBox="0 0 300 60" preserveAspectRatio="none"><polyline id="sparkline" points=""></polyline></svg>
    <div class="muted" id="counters"></div>
  </section>
  <section class="card wide">
    <h2>Shards per member</h2>
    <div id="types" data-testid="types"></div>
  </section>
  <section class="card">
    <h2>Rebalances and hand-offs</h2>
    <ol id="timeline" data-testid="timeline" class="list"></ol>
  </section>
  <section class="card">
    <h2>Last warnings</h2>
    <ol id="warnings" data-testid="warnings" class="list"></ol>
  </section>
</main>
<script src="/dashboard/app.js"></script>
</body>
</html>
`;
}

export const DASHBOARD_CSS = `:root { --bg: #f6f7f9; --card: #fff; --fg: #1d2330; --muted: #6b7280; --ok: #1a7f37; --bad: #c62828; --warn: #b26a00; --bar: #3b82f6; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; gap: 16px; align-items: baseline; padding: 12px 20px; background: #1d2330; color: #fff; }
header h1 { margin: 0; font-size: 18px; }
#status { margin-left: auto; font-size: 12px; opacity: .8; }
main { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 16px; padding: 16px 20px; }
.card { background: var(--card); border-radius: 8px; padding: 12px 16px; box-shadow: 0 1px 2px rgba(0,0,0,.08); min-width: 0; }
.card.wide { grid-column: 1 / -1; }
h2 { margin: 0 0 8px; font-size: 15px; }
h2 small { font-weight: normal; color: var(--muted); }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eceef2; white-space: nowrap; }
th { color: var(--muted); font-weight: 600; font-size: 12px; }
.st-up { color: var(--ok); font-weight: 600; }
.st-leaving, .st-exiting, .st-joining, .st-weakly-up { color: var(--warn); font-weight: 600; }
.st-down, .st-removed { color: var(--bad); font-weight: 600; }
.unreachable { color: var(--bad); font-weight: 600; }
.bar { display: inline-block; height: 10px; background: var(--bar); border-radius: 2px; vertical-align: middle; margin-right: 6px; }
.big { font-size: 32px; font-weight: 600; }
#spark { width: 100%; height: 60px; }
#sparkline { fill: none; stroke: var(--bar); stroke-width: 2; }
.list { margin: 0; padding-left: 20px; max-height: 260px; overflow: auto; font-size: 13px; }
.list li { margin: 2px 0; }
.muted, time { color: var(--muted); font-size: 12px; }
.lvl-error { color: var(--bad); }
.lvl-warn { color: var(--warn); }
.tag { font-size: 11px; padding: 1px 6px; border-radius: 8px; background: #eef2ff; margin-left: 4px; }
@media (max-width: 800px) { main { grid-template-columns: 1fr; } }
`;

export const DASHBOARD_APP_JS = `"use strict";
(function () {
  var refreshMs = Number(document.body.getAttribute("data-refresh-ms")) || 1000;
  var token = (new URLSearchParams(location.hash.slice(1))).get("token");
  var rates = [];
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function clock(ms) { return new Date(ms).toLocaleTimeString(); }
  function renderMembers(m) {
    var body = document.getElementById("members");
    body.textContent = "";
    m.members.forEach(function (x) {
      var tr = el("tr", { "data-testid": "member-row", "data-node": x.node, "data-status": x.status, "data-reachable": String(x.reachable) });
      tr.appendChild(el("td", null, x.node));
      tr.appendChild(el("td", { class: "st-" + x.status }, x.status));
      tr.appendChild(el("td", { class: x.reachable ? "" : "unreachable" }, x.reachable ? "yes" : "NO"));
      tr.appendChild(el("td", null, x.roles.join(",") || "-"));
      tr.appendChild(el("td", null, x.appVersion));
      var tags = el("td");
      if (x.node === m.self) tags.appendChild(el("span", { class: "tag" }, "self"));
      if (x.node === m.leader) tags.appendChild(el("span", { class: "tag" }, "leader"));
      if (x.node === m.oldest) tags.appendChild(el("span", { class: "tag" }, "oldest"));
      tr.appendChild(tags);
      body.appendChild(tr);
    });
    document.getElementById("convergence").textContent = m.members.length + " member(s), convergence " + (m.convergence ? "yes" : "no");
  }
  function renderTypes(types) {
    var root = document.getElementById("types");
    root.textContent = "";
    if (types.length === 0) root.appendChild(el("p", { class: "muted" }, "no entity types started on this member"));
    types.forEach(function (t) {
      var total = t.regions.reduce(function (n, r) { return n + r.shardCount; }, 0) || 1;
      var h = el("h3", null, t.type + " ");
      h.appendChild(el("small", { class: "muted" }, total + " shard(s)"));
      root.appendChild(h);
      var table = el("table", { "data-testid": "type-table", "data-type": t.type });
      var head = el("tr");
      ["member", "shards", "entities", "shard ids"].forEach(function (c) { head.appendChild(el("th", null, c)); });
      table.appendChild(head);
      t.regions.slice().sort(function (a, b) { return a.node < b.node ? -1 : 1; }).forEach(function (r) {
        var tr = el("tr", { "data-testid": "type-row", "data-type": t.type, "data-node": r.node, "data-shards": String(r.shardCount), "data-entities": String(r.entityCount) });
        tr.appendChild(el("td", null, r.node));
        var c = el("td");
        c.appendChild(el("span", { class: "bar", style: "width:" + Math.max(2, Math.round(120 * r.shardCount / total)) + "px" }));
        c.appendChild(document.createTextNode(String(r.shardCount)));
        tr.appendChild(c);
        tr.appendChild(el("td", null, r.entityCount));
        tr.appendChild(el("td", { class: "muted" }, r.shards.map(function (s) { return s.shardId + "(" + s.entities + ")"; }).join(" ")));
        table.appendChild(tr);
      });
      t.failed.forEach(function (n) {
        var tr = el("tr");
        tr.appendChild(el("td", null, n));
        tr.appendChild(el("td", { class: "unreachable", colspan: "3" }, "did not answer"));
        table.appendChild(tr);
      });
      root.appendChild(table);
    });
  }
  function renderList(id, items, render) {
    var root = document.getElementById(id);
    root.textContent = "";
    if (items.length === 0) root.appendChild(el("li", { class: "muted" }, "none yet"));
    items.slice().reverse().forEach(function (x) { root.appendChild(render(x)); });
  }
  function renderRate(s) {
    rates.push(s.messagesPerSecond);
    if (rates.length > 60) rates.shift();
    document.getElementById("rate").textContent = s.messagesPerSecond.toFixed(1);
    var max = Math.max.apply(null, rates.concat([1]));
    var pts = rates.map(function (v, i) { return (i * 300 / 59).toFixed(1) + "," + (58 - 56 * v / max).toFixed(1); });
    document.getElementById("sparkline").setAttribute("points", pts.join(" "));
    document.getElementById("counters").textContent = "remote in " + s.remoteMessages.in + ", out " + s.remoteMessages.out + "; pending asks " + s.askPending + "; dead letters " + s.deadLetters;
  }
  function render(s) {
    document.getElementById("self").textContent = s.self;
    renderMembers(s.members);
    renderTypes(s.types);
    renderRate(s);
    renderList("timeline", s.timeline, function (e) {
      var li = el("li", { "data-testid": "timeline-entry", "data-kind": e.kind });
      li.appendChild(el("time", null, clock(e.atMs) + " "));
      li.appendChild(document.createTextNode(e.text));
      return li;
    });
    renderList("warnings", s.warnings, function (w) {
      var li = el("li", { class: "lvl-" + w.level, "data-testid": "warning" });
      li.appendChild(el("time", null, clock(w.atMs) + " "));
      li.appendChild(document.createTextNode(w.level.toUpperCase() + " " + w.message));
      return li;
    });
  }
  function poll() {
    var headers = token ? { authorization: "Bearer " + token } : {};
    fetch("/dashboard/state", { headers: headers, cache: "no-store" })
      .then(function (r) {
        if (!r.ok) return Promise.reject({ message: "HTTP " + r.status + (r.status === 401 ? " (add #token=... to the URL)" : "") });
        return r.json();
      })
      .then(function (s) {
        render(s);
        document.getElementById("status").textContent = "updated " + clock(s.nowMs);
        document.body.setAttribute("data-updated", String(s.nowMs));
      })
      .catch(function (e) { document.getElementById("status").textContent = "error: " + e.message; })
      .then(function () { setTimeout(poll, refreshMs); });
  }
  poll();
})();
`;
