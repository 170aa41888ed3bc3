// Threat-model rule: `bash` runs in an OS sandbox. Over a real stdio server whose HOME, SUPERPI_HOME and
// tokens file are this test's: a command writes only in the workspace and its private /tmp, cannot read
// the credential stores, the server's state or the tokens, gets no secret variable, reaches no network
// (not even the host's loopback) unless --bash-network on or allow= (also when the server's Node lives where
// the sandbox hides it; an allowed name leads to loopback only when its address is allowed too), cannot undo
// the sandbox from inside, and a
// cancelled or timed-out command line runs nothing after the stop. Ordinary work (git, node, npm test) runs.
// Needs bubblewrap: where the server has no sandbox, the file says so and checks nothing.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { access, chmod, copyFile, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { bashIsolation, findExecutable, SYSTEM_BIN_DIRS } from '../../src/tools/bash-isolation.ts';
import { type Connected, connectStdio, startHttpServerProcess, textOf } from './fixtures.ts';

const ID_KEY = 'PRIVATE-KEY-MATERIAL-7f3a';
const PGPASS = 'localhost:5432:*:me:PGPASS-SECRET-91c2';
const STORE_SECRET = 'STORE-TRANSCRIPT-SECRET-5d1e';
const TOKEN = 'TOKEN-SECRET-0b8f';

interface Ground {
  base: string;
  ws: string;
  home: string;
  spHome: string;
  tokens: string;
}

/** Outside /tmp (the sandbox's /tmp is a private one anyway, which would hide a path there for the wrong reason). */
async function makeGround(): Promise<Ground> {
  const base = await realpath(await mkdtemp('/var/tmp/superpi-sbx-'));
  const g = { base, ws: path.join(base, 'ws'), home: path.join(base, 'home'), spHome: path.join(base, 'sp-home'), tokens: path.join(base, 'tokens.txt') };
  await mkdir(g.ws);
  await mkdir(path.join(base, 'sibling'));
  await mkdir(path.join(g.home, '.ssh'), { recursive: true });
  await writeFile(path.join(g.home, '.ssh', 'id_ed25519'), `${ID_KEY}\n`, { mode: 0o600 });
  await writeFile(path.join(g.home, '.pgpass'), `${PGPASS}\n`, { mode: 0o600 });
  await mkdir(g.spHome);
  await writeFile(path.join(g.spHome, 'super-pi.db'), `${STORE_SECRET}\n`);
  await writeFile(g.tokens, `${TOKEN} alice\n`);
  return g;
}

async function serve(g: Ground, extraArgs: string[] = [], node: string = process.execPath): Promise<Connected> {
  // stdio takes no --tokens (an HTTP-only flag): the tokens file is hidden with --bash-hide here, and by
  // default on the HTTP server of the /health test below.
  return connectStdio(g.ws, ['--bash-hide', g.tokens, ...extraArgs], {}, (c) => c, {
    HOME: g.home, SUPERPI_HOME: g.spHome, PGPASSWORD: 'pg-env-secret', AWS_SECRET_ACCESS_KEY: 'aws-env-secret', SUPERPI_API_KEY: 'sp-env-secret',
  }, node);
}

async function bash(c: Connected, command: string, extra: Record<string, unknown> = {}): Promise<string> {
  return textOf(await c.client.callTool({ name: 'bash', arguments: { command, ...extra } }));
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

// Skipped only where bwrap is not installed (or not Linux): with bwrap present, no sandbox is a failure.
const available = process.platform === 'linux' && (await findExecutable('bwrap', SYSTEM_BIN_DIRS)) !== null;
if (!available) console.log('  (bwrap is not installed here: bash-sandbox rules not checked)');

let g: Ground;
let c: Connected;
test.before(async () => {
  if (!available) return;
  g = await makeGround();
  c = await serve(g);
});
test.after(async () => {
  if (!available) return;
  await c?.close();
  await rm(g.base, { recursive: true, force: true });
});

test('with bwrap installed, bash runs in the bubblewrap sandbox', async () => {
  if (!available) return;
  const isolation = await bashIsolation();
  assert.is(isolation.kind, 'bubblewrap', JSON.stringify(isolation));
});

test('a write to a sibling of the workspace, to $HOME or to their parent lands nowhere; the workspace and the private /tmp are written', async () => {
  if (!available) return;
  const out = await bash(c, `echo x > ../sibling/f; echo x > "$HOME/f"; echo x > ${g.base}/f; echo ok > in-ws; echo private > /tmp/scratch && cat /tmp/scratch`);
  assert.ok(out.includes('private'), out);
  for (const f of [path.join(g.base, 'sibling', 'f'), path.join(g.home, 'f'), path.join(g.base, 'f')]) assert.not.ok(await exists(f), `${f} was written`);
  assert.is(await readFile(path.join(g.ws, 'in-ws'), 'utf8'), 'ok\n');
});

test('~/.ssh keys, ~/.pgpass, the server\'s SUPERPI_HOME (store) and the tokens file cannot be read', async () => {
  if (!available) return;
  const out = await bash(c, `cat "$HOME/.ssh/id_ed25519" "$HOME/.pgpass" ${g.spHome}/super-pi.db ${g.tokens}; ls -a "$HOME/.ssh" ${g.spHome}`);
  for (const secret of [ID_KEY, 'PGPASS-SECRET', STORE_SECRET, TOKEN]) assert.not.ok(out.includes(secret), `${secret} leaked: ${out}`);
  assert.not.ok(out.includes('id_ed25519\n'), out);
});

test('env shows no PGPASSWORD, AWS_* or SUPERPI_* variable', async () => {
  if (!available) return;
  const out = await bash(c, 'env');
  assert.ok(/^PATH=/m.test(out), out);
  assert.not.ok(/^(PGPASSWORD|AWS_|SUPERPI_)/m.test(out), out);
  assert.not.ok(out.includes('env-secret'), out);
});

test('a loopback listener of the host is not reached with the network off, and is reached with --bash-network on', async () => {
  if (!available) return;
  // The probe closes at once: a reset on the listener's side is expected, not a failure.
  const server = net.createServer((s) => s.on('error', () => undefined).end('hello\n'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const probe = `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached) 2>/dev/null || echo unreachable`;
  try {
    assert.is((await bash(c, probe)).trim(), 'unreachable');
    const on = await serve(g, ['--bash-network', 'on']);
    try {
      assert.is((await bash(on, probe)).trim(), 'reached');
    } finally {
      await on.close();
    }
  } finally {
    server.close();
  }
});

test('allow=localhost:PORT alone does not lead to the host\'s loopback (403 saying why, the listener sees nobody); with 127.0.0.1:PORT on the list too it does, through the proxy only', async () => {
  if (!available) return;
  const http = await import('node:http');
  let seen = 0;
  const listener = http.createServer((_req, res) => {
    seen += 1;
    res.end('allowed-listener\n');
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const port = (listener.address() as net.AddressInfo).port;
  try {
    const nameOnly = await serve(g, ['--bash-network', `allow=localhost:${port}`]);
    try {
      // curl honours HTTP_PROXY, which the sandbox points at the bridge to the server's proxy.
      const plain = await bash(nameOnly, `curl -sS --max-time 10 -w ' code=%{http_code}' http://localhost:${port}/ 2>&1`);
      assert.match(plain, /localhost:\d+ is on the allow list, but it resolves only to special-purpose addresses[^]*127\.0\.0\.1 \(loopback, 127\.0\.0\.0\/8\)[^]* code=403$/, plain);
      const tunnel = await bash(nameOnly, `curl -sS --max-time 10 --proxytunnel http://localhost:${port}/ 2>&1; echo " exit=$?"`);
      assert.match(tunnel, /response 403\n exit=56\n$/, tunnel);
      assert.is(seen, 0, 'the listener saw no request');
    } finally {
      await nameOnly.close();
    }
    const allowed = await serve(g, ['--bash-network', `allow=localhost:${port},127.0.0.1:${port}`]);
    try {
      const named = await bash(allowed, `curl -sS --max-time 10 http://localhost:${port}/ 2>&1; echo "exit=$?"`);
      assert.match(named, /allowed-listener/);
      // Another spelling of the same address is another host, not on the list.
      const other = await bash(allowed, `curl -sS --max-time 10 -o /dev/null -w '%{http_code}' 'http://[::ffff:127.0.0.1]:${port}/' 2>&1; echo " exit=$?"`);
      assert.match(other, /^403/, other);
      // Around the proxy there is no network at all: a direct connection is refused.
      const direct = await bash(allowed, `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached) 2>/dev/null || echo unreachable`);
      assert.is(direct.trim(), 'unreachable');
    } finally {
      await allowed.close();
    }
  } finally {
    listener.close();
  }
});

test('with the server\'s Node under the temp directory (hidden in the sandbox), allow=localhost:PORT,127.0.0.1:PORT still reaches the listener, and only that one file is shown', async () => {
  if (!available) return;
  // As a CI's or a version manager's Node under /tmp: the sandbox's /tmp is a private one (and a TMPDIR
  // other than /tmp is hidden), so the bridge's Node is visible only if the sandbox binds it in.
  const nodeDir = await mkdtemp(path.join(os.tmpdir(), 'superpi-node-'));
  const node = path.join(nodeDir, 'node');
  await copyFile(process.execPath, node);
  await chmod(node, 0o755);
  await writeFile(path.join(nodeDir, 'beside-node'), 'NOT-SHOWN-BESIDE-NODE\n');
  const http = await import('node:http');
  const listener = http.createServer((_req, res) => res.end('allowed-listener\n'));
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const port = (listener.address() as net.AddressInfo).port;
  const allowed = await serve(g, ['--bash-network', `allow=localhost:${port},127.0.0.1:${port}`], node);
  try {
    const named = await bash(allowed, `curl -sS --max-time 10 http://localhost:${port}/ 2>&1; echo "exit=$?"`);
    assert.match(named, /allowed-listener/, named);
    const shown = await bash(allowed, `cat ${nodeDir}/beside-node 2>/dev/null; ls -A /tmp`);
    assert.not.ok(shown.includes('NOT-SHOWN'), shown);
    assert.is(shown, '.super-pi-egress.sock\n.super-pi-node\n');
  } finally {
    await allowed.close();
    listener.close();
    await rm(nodeDir, { recursive: true, force: true });
  }
});

test('git, node and npm test of a small project in the workspace still work', async () => {
  if (!available) return;
  await mkdir(path.join(g.ws, 'proj'));
  await writeFile(path.join(g.ws, 'proj', 'package.json'), JSON.stringify({ name: 'proj', version: '1.0.0', scripts: { test: 'node test.js' } }));
  await writeFile(path.join(g.ws, 'proj', 'test.js'), "require('node:assert').equal(1 + 1, 2); console.log('tests passed');\n");
  const out = await bash(c, 'cd proj && git init -q && git add -A && git -c user.email=t@example.com -c user.name=t commit -qm init && git log --oneline | wc -l && node -e "console.log(40 + 2)" && npm test 2>&1');
  assert.ok(/^1\n42\n/.test(out), out);
  assert.ok(out.includes('tests passed'), out);
});

test('a symlink the command makes to a hidden path is refused by the server\'s read (the confined path)', async () => {
  if (!available) return;
  await bash(c, `ln -s "$HOME/.ssh/id_ed25519" key-link`);
  const r = await c.client.callTool({ name: 'read', arguments: { path: 'key-link' } });
  assert.is(r.isError, true);
  assert.not.ok(textOf(r).includes(ID_KEY), textOf(r));
});

test('bwrap in bwrap, unshare, mount, umount and /proc/*/root do not reach a hidden path', async () => {
  if (!available) return;
  const key = `${g.home}/.ssh/id_ed25519`;
  const out = await bash(c, [
    `bwrap --ro-bind / / cat ${key}`,
    `unshare -rm cat ${key}`,
    `unshare -m sh -c 'umount ${g.home}/.ssh; cat ${key}'`,
    `umount ${g.home}/.ssh; cat ${key}`,
    `mount -t tmpfs none ${g.ws}/m`,
    `for p in /proc/[0-9]*; do cat $p/root${key}; done`,
    'echo done',
  ].join('; '));
  assert.ok(out.includes('done'), out);
  assert.not.ok(out.includes(ID_KEY), out);
});

test('a timed-out and a cancelled `sleep 3; echo ran > f` never write f', async () => {
  if (!available) return;
  const timedOut = await c.client.callTool({ name: 'bash', arguments: { command: 'sleep 3; echo ran > f-timeout', timeout: 1 } });
  assert.ok(textOf(timedOut).endsWith('Command timed out after 1 seconds'), textOf(timedOut));
  const controller = new AbortController();
  const call = c.client.callTool({ name: 'bash', arguments: { command: 'sleep 3; echo ran > f-cancel' } }, undefined, { signal: controller.signal });
  setTimeout(() => controller.abort(), 1000);
  await call.then(() => undefined, () => undefined);
  await new Promise((r) => setTimeout(r, 3500));
  assert.not.ok(await exists(path.join(g.ws, 'f-timeout')), 'f-timeout was written');
  assert.not.ok(await exists(path.join(g.ws, 'f-cancel')), 'f-cancel was written');
});

test('an HTTP server reports the sandbox in /health: bashSandbox {kind: bubblewrap}', async () => {
  if (!available) return;
  const server = await startHttpServerProcess(g.ws, [], { HOME: g.home, SUPERPI_HOME: g.spHome });
  try {
    let health: Record<string, unknown> = {};
    // The probe runs shortly after the start (ISOLATION_PROBE_DELAY_MS), off the first exchanges.
    for (let i = 0; i < 100 && (health.bashSandbox as { kind?: string } | undefined)?.kind !== 'bubblewrap'; i++) {
      health = (await (await fetch(server.url.replace('/mcp', '/health'))).json()) as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(health.bashSandbox, { kind: 'bubblewrap' });
    assert.is(health.bashIsolation, 'bubblewrap');
  } finally {
    await server.stop();
  }
});

test.run();
