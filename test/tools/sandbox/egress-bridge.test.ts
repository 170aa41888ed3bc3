// The egress bridge run for real: a child process on 127.0.0.1 that carries curl's proxy traffic to the
// proxy's Unix socket, half-closes included; and the same inside a network namespace of its own (bwrap
// --unshare-net, as the sandbox runs it), where it is the only way out and dies with the namespace.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { egressBridgeArgv, egressEnvironment } from '../../../src/tools/sandbox/egress.ts';
import { allGone, killLeftovers } from '../processes.ts';
import { closedPort, echoUpstream, httpUpstream, proxyFor, type ProxyHome, type Upstream } from './egress-fixtures.ts';

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to its end (at most 30 s) and returns its exit code and output. */
function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts the bridge with a stdin pipe (its lifeline) and resolves once it printed `ready`. */
async function startBridge(socketPath: string, port: number): Promise<ChildProcess> {
  const [file, ...args] = egressBridgeArgv(socketPath, port);
  const child = spawn(file as string, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the bridge exited (${code}) before it was ready`)));
  });
  return child;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function withBridge(body: (home: ProxyHome, web: Upstream, echo: Upstream, port: number) => Promise<void>): Promise<void> {
  const web = await httpUpstream();
  const echo = await echoUpstream();
  // localhost resolves to loopback: the list names 127.0.0.1 too, or the proxy would refuse to lead there.
  const home = await proxyFor([`localhost:${web.port}`, `localhost:${echo.port}`, `127.0.0.1:${web.port}`, `127.0.0.1:${echo.port}`]);
  const port = await closedPort();
  try {
    await body(home, web, echo, port);
  } finally {
    killLeftovers(home.proxy.socketPath);
    await home.close();
    await web.close();
    await echo.close();
  }
}

test('the argv is this Node with an inline script, the socket path and the port; a bad port is refused', () => {
  const argv = egressBridgeArgv('/run/egress.sock', 3128);
  assert.is(argv[0], process.execPath);
  assert.is(argv[1], '-e');
  assert.equal(argv.slice(3), ['/run/egress.sock', '3128']);
  assert.throws(() => egressBridgeArgv('/s', 0), /1 to 65535/);
  assert.throws(() => egressBridgeArgv('/s', 70000), /1 to 65535/);
});

test('curl through the bridge reaches an allowed host by plain HTTP and by CONNECT, and gets the 403 for another, also after a redirect', async () => {
  await withBridge(async (home, web, _echo, port) => {
    const bridge = await startBridge(home.proxy.socketPath, port);
    try {
      const env = { ...process.env, ...egressEnvironment(port) };
      const plain = await run('curl', ['-sS', `http://localhost:${web.port}/plain`], env);
      assert.is(plain.stdout, `GET /plain host=localhost:${web.port} body=`);
      const tunnelled = await run('curl', ['-sS', '--proxytunnel', `http://localhost:${web.port}/tunnel`], env);
      assert.is(tunnelled.stdout, `GET /tunnel host=localhost:${web.port} body=`);
      const refused = await run('curl', ['-sS', `http://127.0.0.2:${web.port}/no`], env);
      assert.match(refused.stdout, /127\.0\.0\.2:\d+ is not on this sandbox's allow list[^]*--bash-network allow=/);
      const redirected = await run('curl', ['-sS', '-L', `http://localhost:${web.port}/redirect?to=${encodeURIComponent(`http://127.0.0.2:${web.port}/next`)}`], env);
      assert.match(redirected.stdout, /^super-pi egress proxy: 127\.0\.0\.2:\d+ is not on/, 'the redirect is the client\'s to follow, and its new host is checked again');
      const refusedTunnel = await run('curl', ['-sS', '--proxytunnel', `http://127.0.0.2:${web.port}/no`], env);
      assert.is(refusedTunnel.code, 56, 'curl: CONNECT tunnel failed');
      assert.match(refusedTunnel.stderr, /403/);
    } finally {
      bridge.stdin?.end();
    }
    assert.is(await exited(bridge), 0, 'the bridge exits when its stdin pipe closes');
  });
});

test('a half-close through the bridge reaches the upstream, and its answer after it comes back', async () => {
  await withBridge(async (home, _web, echo, port) => {
    const bridge = await startBridge(home.proxy.socketPath, port);
    try {
      const received = await new Promise<string>((resolve, reject) => {
        const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
        let text = '';
        socket.on('error', reject);
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.endsWith('echo:x')) socket.end();
        });
        socket.on('end', () => resolve(text));
        socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\nx`);
      });
      assert.is(received, 'HTTP/1.1 200 Connection Established\r\n\r\necho:xbye');
    } finally {
      bridge.stdin?.end();
    }
    await exited(bridge);
  });
});

test('a bridge whose port is taken says so on stderr and exits 1, never printing ready', async () => {
  await withBridge(async (home, web) => {
    const [file, ...args] = egressBridgeArgv(home.proxy.socketPath, web.port);
    const ran = await run(file as string, args);
    assert.is(ran.code, 1);
    assert.is(ran.stdout, '');
    assert.match(ran.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${web.port}: .*EADDRINUSE`));
  });
});

/** Whether bwrap can make a network namespace here (not in every container); the test below needs it. */
async function bwrapWorks(): Promise<boolean> {
  const probe = await run('bwrap', ['--dev-bind', '/', '/', '--unshare-net', '--unshare-pid', 'true']);
  return probe.code === 0;
}

test('inside bwrap --unshare-net (lo up, nothing else): the direct way fails, the bridge way works, and the bridge dies with the namespace', async () => {
  if (!(await bwrapWorks())) {
    console.log('  (skipped: bwrap cannot make a network namespace here)');
    return;
  }
  await withBridge(async (home, web, _echo, port) => {
    // As a launcher in the sandbox would: start the bridge detached, wait for its line, then run the command.
    const script = [
      'ip -br link show lo',
      '("$0" "$@" &) | head -n 1 >/dev/null',
      `curl -sS --noproxy '*' --max-time 5 http://localhost:${web.port}/direct; echo " direct=$?"`,
      `curl -sS --max-time 5 http://localhost:${web.port}/bridged; echo " bridged=$?"`,
    ].join('\n');
    const ran = await run('bwrap', [
      '--dev-bind', '/', '/', '--unshare-net', '--unshare-pid', '--die-with-parent',
      'sh', '-c', script, ...egressBridgeArgv(home.proxy.socketPath, port),
    ], { ...process.env, ...egressEnvironment(port) });
    assert.match(ran.stdout, /^lo\s.*<[^>]*\bUP\b/, 'bwrap brings lo up');
    assert.match(ran.stdout, / direct=7\n/, 'no way out but the bridge');
    assert.match(ran.stdout, new RegExp(`GET /bridged host=localhost:${web.port} body= bridged=0\\n`));
    assert.ok(await allGone(home.proxy.socketPath), 'the bridge ended with its namespace');
  });
});

test.run();
