// The observer page's script, served as /observer/app.js. Plain browser JavaScript with no library: it
// reads the snapshot stream with fetch (so the bearer token can ride in a header, which EventSource
// cannot send), renders with textContent only (no markup from data), and draws the chart as inline SVG.
// Characters past ASCII are \u escapes inside the script's own string literals: the command's bundle is
// kept ASCII (scripts/build.mjs), and a raw template cannot be escaped for it by the bundler.

export const OBSERVER_SCRIPT = String.raw`'use strict';
(function () {
  var TOKEN_KEY = 'superpi-observer-token';
  var token = sessionStorage.getItem(TOKEN_KEY) || '';
  var selectedTask = null;
  var transcriptSeq = 0;
  var transcriptTimer = null;
  var byId = function (id) { return document.getElementById(id); };

  function headers() { return token ? { Authorization: 'Bearer ' + token } : {}; }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function age(ms) {
    var s = Math.floor(ms / 1000);
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm ' + (s % 60) + 's';
    return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm';
  }
  function row(cells, cls) {
    var tr = el('tr', cls);
    cells.forEach(function (c) { var td = el('td'); if (c instanceof Node) td.appendChild(c); else td.textContent = String(c); tr.appendChild(td); });
    return tr;
  }
  function fill(tableId, rows) {
    var body = byId(tableId).tBodies[0];
    body.replaceChildren.apply(body, rows);
  }
  function setStatus(text) { byId('status').textContent = text; }
  function askToken(message) {
    setStatus(message);
    byId('auth').classList.add('shown');
  }

  function treeNode(n) {
    var li = el('li');
    li.dataset.node = n.id;
    li.dataset.state = n.state;
    li.dataset.restarts = String(n.restarts);
    var span = el('span', 'node');
    span.appendChild(el('i', 'dot ' + n.state));
    span.appendChild(el('b', '', n.id));
    span.appendChild(el('span', 'muted', n.state));
    if (n.restarts > 0) span.appendChild(el('span', 'restarts', '\u21bb ' + n.restarts));
    if (n.lastExit) span.appendChild(el('span', 'muted', 'last exit: ' + n.lastExit));
    li.appendChild(span);
    if (n.children.length > 0 || n.more > 0) {
      var ul = el('ul');
      n.children.forEach(function (c) { ul.appendChild(treeNode(c)); });
      if (n.more > 0) ul.appendChild(el('li', 'muted', '\u2026 ' + n.more + ' more'));
      li.appendChild(ul);
    }
    return li;
  }

  function drawChart(points) {
    var svg = byId('chart');
    var ns = 'http://www.w3.org/2000/svg';
    var W = 600, H = 150, pad = 4;
    var maxCalls = 1, maxMs = 1;
    points.forEach(function (p) { maxCalls = Math.max(maxCalls, p.calls); if (p.p99 !== null) maxMs = Math.max(maxMs, p.p99); });
    var x = function (i) { return points.length < 2 ? 0 : (i / (points.length - 1)) * W; };
    // Latency on a log scale: one slow call (a task) must not flatten every other.
    var logScale = function (v) { return Math.log10(1 + v); };
    var linear = function (v) { return v; };
    function line(key, max, color, scale) {
      var d = '';
      var pen = false;
      points.forEach(function (p, i) {
        var v = p[key];
        if (v === null) { pen = false; return; }
        d += (pen ? 'L' : 'M') + x(i).toFixed(1) + ' ' + (H - pad - (scale(v) / scale(max)) * (H - 2 * pad)).toFixed(1) + ' ';
        pen = true;
      });
      var path = document.createElementNS(ns, 'path');
      path.setAttribute('d', d || 'M0 ' + (H - pad));
      path.setAttribute('fill', 'none');
      path.setAttribute('stroke', color);
      path.setAttribute('stroke-width', '1.5');
      path.setAttribute('vector-effect', 'non-scaling-stroke');
      path.dataset.series = key;
      return path;
    }
    var grid = document.createElementNS(ns, 'line');
    grid.setAttribute('x1', '0'); grid.setAttribute('x2', String(W)); grid.setAttribute('y1', String(H - pad)); grid.setAttribute('y2', String(H - pad));
    grid.setAttribute('stroke', '#dde1e8');
    svg.replaceChildren(grid, line('calls', maxCalls, '#3b5bdb', linear), line('p50', maxMs, '#2f8f4e', logScale), line('p99', maxMs, '#c53030', logScale));
    var total = points.reduce(function (a, p) { return a + p.calls; }, 0);
    byId('chart-scale').textContent = 'last ' + points.length + ' s: ' + total + ' calls; peak ' + maxCalls + '/s, p99 up to ' + maxMs.toFixed(1) + ' ms';
  }

  function render(s) {
    setStatus('up ' + age(s.uptimeMs) + ' \u00b7 ' + s.sessionCount + ' session(s) \u00b7 ' + s.tasks.length + ' task(s) \u00b7 updated ' + new Date(s.time).toLocaleTimeString() + (s.metrics ? '' : ' \u00b7 metrics off'));
    byId('tree').replaceChildren(treeNode(s.tree));
    fill('workers', s.workers.map(function (w) {
      var actors = el('div', 'actors');
      w.actors.forEach(function (a) { actors.appendChild(el('span', a[1] > 0 ? 'actor busy' : 'actor', a[1] > 0 ? a[0] + ' (' + a[1] + ')' : a[0])); });
      if (w.actorCount > w.actors.length) actors.appendChild(el('span', 'muted', '\u2026 ' + (w.actorCount - w.actors.length) + ' more'));
      var tr = row(['scheduler-' + w.index, w.state, w.restarts, (w.heapUsed / 1048576).toFixed(1) + ' MB', w.deepestMailbox, actors]);
      tr.dataset.worker = String(w.index);
      return tr;
    }));
    var sessionRows = s.sessions.map(function (x) {
      var tr = row([x.id, x.transport, x.principal, x.harness, x.version || '\u2014', age(x.ageMs), x.inFlight, x.restarts]);
      tr.dataset.session = x.id;
      return tr;
    });
    if (s.sessionCount > s.sessions.length) sessionRows.push(row(['\u2026 ' + (s.sessionCount - s.sessions.length) + ' more (the busiest are listed)'], 'muted'));
    fill('sessions', sessionRows);
    fill('tasks', s.tasks.map(function (t) {
      var tr = row([t.id, t.session, t.principal, t.harness, t.status, t.turns, t.toolCalls, t.restarts, age(t.ageMs)], t.id === selectedTask ? 'task selected' : 'task');
      tr.dataset.task = t.id;
      tr.dataset.status = t.status;
      tr.addEventListener('click', function () { selectTask(t.id); });
      return tr;
    }));
    drawChart(s.calls);
  }

  function selectTask(id) {
    if (selectedTask === id) return;
    selectedTask = id;
    transcriptSeq = 0;
    byId('transcript-title').textContent = 'Transcript of ' + id;
    var pre = byId('transcript');
    pre.textContent = '';
    pre.classList.remove('muted');
    if (transcriptTimer) clearTimeout(transcriptTimer);
    pollTranscript();
  }

  function pollTranscript() {
    var id = selectedTask;
    fetch('/observer/transcript?task=' + encodeURIComponent(id) + '&after=' + transcriptSeq, { headers: headers() })
      .then(function (r) { return r.ok ? r.json() : r.json().then(function (b) { throw new Error(b.error || r.status); }); })
      .then(function (body) {
        if (id !== selectedTask) return;
        var pre = byId('transcript');
        body.entries.forEach(function (e) {
          transcriptSeq = Math.max(transcriptSeq, e.seq);
          pre.appendChild(document.createTextNode('#' + e.seq + ' ' + new Date(e.time).toLocaleTimeString() + ' ' + e.type + '  ' + JSON.stringify(e.payload) + '\n'));
        });
      })
      .catch(function (err) { byId('transcript').appendChild(document.createTextNode('(' + err.message + ')\n')); })
      .then(function () { if (id === selectedTask) transcriptTimer = setTimeout(pollTranscript, 1000); });
  }

  function connect() {
    fetch('/observer/events', { headers: headers() }).then(function (res) {
      if (res.status === 401 || res.status === 403) {
        return res.json().then(function (b) { askToken(b.error || 'a bearer token of an observer is needed'); });
      }
      if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
      byId('auth').classList.remove('shown');
      var reader = res.body.getReader();
      var decoder = new TextDecoder();
      var buffer = '';
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) throw new Error('the stream ended');
          buffer += decoder.decode(chunk.value, { stream: true });
          var cut;
          while ((cut = buffer.indexOf('\n\n')) !== -1) {
            var frame = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            var data = frame.split('\n').filter(function (l) { return l.indexOf('data: ') === 0; }).map(function (l) { return l.slice(6); }).join('\n');
            if (data) render(JSON.parse(data));
          }
          return pump();
        });
      }
      return pump();
    }).catch(function (err) {
      setStatus('disconnected (' + err.message + '); retrying');
      setTimeout(connect, 2000);
    });
  }

  byId('auth').addEventListener('submit', function (ev) {
    ev.preventDefault();
    token = byId('token').value.trim();
    sessionStorage.setItem(TOKEN_KEY, token);
    connect();
  });
  connect();
})();
`;
