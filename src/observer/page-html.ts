// The observer page: plain HTML and inline styles; its script is /observer/app.js (page-script.ts).
// Bundled with the server as a string, so it needs no build step and no network beyond super-pi.

export const OBSERVER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>super-pi observer</title>
<style>
  :root { --fg: #1d2330; --muted: #6b7385; --line: #dde1e8; --ok: #2f8f4e; --warn: #b7791f; --bad: #c53030; --accent: #3b5bdb; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #f6f7f9; }
  header { display: flex; align-items: center; gap: 16px; padding: 10px 16px; background: #1d2330; color: #fff; }
  header h1 { font-size: 15px; margin: 0; font-weight: 600; }
  header .status { color: #b8c0d0; }
  header form { margin-left: auto; display: none; gap: 6px; }
  header form.shown { display: flex; }
  main { display: grid; grid-template-columns: minmax(320px, 1fr) minmax(420px, 1.4fr); gap: 12px; padding: 12px; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; overflow: auto; }
  section h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 0 0 8px; }
  .wide { grid-column: 1 / -1; }
  ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 16px; }
  ul.tree { padding-left: 0; }
  ul.tree li { margin: 2px 0; }
  .node { display: inline-flex; gap: 6px; align-items: baseline; }
  .dot { width: 8px; height: 8px; border-radius: 50%; display: inline-block; background: var(--ok); }
  .dot.restarting { background: var(--warn); } .dot.stopped { background: var(--muted); } .dot.failed { background: var(--bad); }
  .muted { color: var(--muted); }
  .restarts { color: var(--warn); font-weight: 600; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); white-space: nowrap; }
  th { color: var(--muted); font-weight: 500; }
  tr.task { cursor: pointer; } tr.task:hover, tr.task.selected { background: #eef2ff; }
  .actors { display: flex; flex-wrap: wrap; gap: 3px; max-width: 520px; }
  .actor { font-size: 11px; padding: 0 4px; border-radius: 3px; background: #eef0f4; }
  .actor.busy { background: #fde8c8; }
  pre#transcript { margin: 0; max-height: 280px; overflow: auto; font: 12px/1.35 ui-monospace, Menlo, monospace; white-space: pre-wrap; }
  svg { display: block; width: 100%; height: 150px; }
  .legend span { margin-right: 12px; } .legend i { display: inline-block; width: 10px; height: 3px; margin-right: 4px; vertical-align: middle; }
</style>
</head>
<body>
<header>
  <h1>super-pi observer</h1>
  <span class="status" id="status">connecting…</span>
  <form id="auth"><input id="token" type="password" placeholder="bearer token" autocomplete="off"><button type="submit">Connect</button></form>
</header>
<main>
  <section id="tree-section"><h2>Supervision tree</h2><ul class="tree" id="tree"></ul></section>
  <section>
    <h2>Calls per second and latency (p50 / p99)</h2>
    <svg id="chart" viewBox="0 0 600 150" preserveAspectRatio="none" role="img" aria-label="calls per second and latency"></svg>
    <div class="legend muted"><span><i style="background:#3b5bdb"></i>calls/s</span><span><i style="background:#2f8f4e"></i>p50 ms</span><span><i style="background:#c53030"></i>p99 ms</span><span>(latency on a log scale)</span><span id="chart-scale"></span></div>
    <h2 style="margin-top:12px">Worker threads</h2>
    <table id="workers"><thead><tr><th>thread</th><th>state</th><th>restarts</th><th>heap</th><th>deepest mailbox</th><th>actors (mailbox depth)</th></tr></thead><tbody></tbody></table>
  </section>
  <section class="wide">
    <h2>Sessions</h2>
    <table id="sessions"><thead><tr><th>session</th><th>transport</th><th>principal</th><th>harness</th><th>version</th><th>age</th><th>in flight</th><th>restarts</th></tr></thead><tbody></tbody></table>
  </section>
  <section class="wide">
    <h2>Tasks <span class="muted" style="text-transform:none">(click one for its transcript)</span></h2>
    <table id="tasks"><thead><tr><th>task</th><th>session</th><th>principal</th><th>harness</th><th>status</th><th>turns</th><th>tool calls</th><th>restarts</th><th>age</th></tr></thead><tbody></tbody></table>
    <h2 style="margin-top:12px" id="transcript-title">Transcript</h2>
    <pre id="transcript" class="muted">no task selected</pre>
  </section>
</main>
<script src="/observer/app.js"></script>
</body>
</html>
`;
