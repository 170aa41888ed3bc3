// The egress proxy over its real Unix socket: CONNECT and plain HTTP to an allowed host pass, anything
// else gets a status with a reason, and no request, however malformed, stops it serving the next one.

import { stat } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EGRESS_MAX_HEADER_BYTES } from '../../../src/limits.ts';
import { egressEnvironment, startEgressProxy } from '../../../src/tools/sandbox/egress.ts';
import { closedPort, echoUpstream, exchange, httpUpstream, proxyFor, RawClient, type ProxyHome, type Upstream } from './egress-fixtures.ts';

/**
 * Runs `body` with an echo upstream, an HTTP upstream and a proxy allowing `localhost` on both ports only.
 * `localhost` resolves to loopback, which an allowed name may not lead to unless the list names the
 * address too: with `loopback` (the default) it does, 127.0.0.1 on both ports; without, it does not.
 */
async function withProxy(body: (home: ProxyHome, echo: Upstream, web: Upstream) => Promise<void>, limits = {}, loopback = true): Promise<void> {
  const echo = await echoUpstream();
  const web = await httpUpstream();
  const names = [`localhost:${echo.port}`, `localhost:${web.port}`];
  const home = await proxyFor(loopback ? [...names, `127.0.0.1:${echo.port}`, `127.0.0.1:${web.port}`] : names, { limits });
  try {
    await body(home, echo, web);
  } finally {
    await home.close();
    await echo.close();
    await web.close();
  }
}

/** A GET through the proxy that closes after its answer, so exchange() returns. */
function get(url: string, extra = ''): string {
  return `GET ${url} HTTP/1.1\r\nHost: ${new URL(url).host}\r\n${extra}Connection: close\r\n\r\n`;
}

/** Proves the proxy still serves: a fresh CONNECT to the allowed echo upstream gets its echo. */
async function stillServes(home: ProxyHome, echo: Upstream): Promise<void> {
  const client = await RawClient.open(home.proxy.socketPath);
  try {
    client.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\nHost: localhost:${echo.port}\r\n\r\n`);
    assert.match(await client.until('\r\n\r\n'), /^HTTP\/1\.1 200 /);
    client.socket.write('ping');
    assert.is(await client.until('echo:ping'), 'echo:ping');
  } finally {
    client.destroy();
  }
}

test('the socket is 0600 in a 0700 directory of its own, and close() removes both', async () => {
  await withProxy(async (home) => {
    const socketPath = home.proxy.socketPath;
    assert.is(path.dirname(path.dirname(socketPath)), home.dir);
    assert.is((await stat(socketPath)).mode & 0o777, 0o600);
    assert.is((await stat(path.dirname(socketPath))).mode & 0o777, 0o700);
    await home.proxy.close();
    await home.proxy.close();
    assert.is(await stat(path.dirname(socketPath)).catch((err: NodeJS.ErrnoException) => err.code), 'ENOENT');
  });
});

test('a bad allow-list entry stops the start with its message', async () => {
  const outcome = await startEgressProxy({ allow: ['https://github.com'], dir: '/nonexistent' }).then(() => 'started', (err: Error) => err.message);
  assert.match(outcome, /"https:\/\/github.com": write the host alone, without a scheme/);
});

test('CONNECT to an allowed host: 200, bytes both ways, a half-close passed on and the answer after it delivered', async () => {
  await withProxy(async (home, echo) => {
    const client = await RawClient.open(home.proxy.socketPath);
    try {
      client.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\nHost: localhost:${echo.port}\r\n\r\nearly`);
      assert.is(await client.until('\r\n\r\n'), 'HTTP/1.1 200 Connection Established\r\n\r\n');
      assert.is(await client.until('echo:early'), 'echo:early', 'bytes sent with the CONNECT reach the upstream');
      client.socket.write('hello');
      assert.is(await client.until('echo:hello'), 'echo:hello');
      client.socket.end();
      assert.is(await client.rest(), 'bye', 'the upstream saw our FIN, and its answer came back after it');
      assert.ok(client.closed);
    } finally {
      client.destroy();
    }
  });
});

test('CONNECT to a host not on the list (the same listener by its address) gets 403 naming the host and the flag', async () => {
  await withProxy(async (home, echo) => {
    const answer = await exchange(home.proxy.socketPath, `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.match(answer, new RegExp(`127\\.0\\.0\\.1:${echo.port} is not on this sandbox's allow list`));
    assert.match(answer, new RegExp(`--bash-network allow=127\\.0\\.0\\.1:${echo.port}`));
    assert.not.match(answer, /echo:/);
  }, {}, false);
});

test('with loopback opted in, the listener\'s address is reached by itself, but not by another spelling of it', async () => {
  await withProxy(async (home, echo) => {
    const client = await RawClient.open(home.proxy.socketPath);
    try {
      client.socket.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\nx`);
      assert.match(await client.until('echo:x'), /^HTTP\/1\.1 200 [^]*echo:x$/);
    } finally {
      client.destroy();
    }
    for (const other of [`[::ffff:127.0.0.1]:${echo.port}`, `[::ffff:7f00:1]:${echo.port}`, `127.0.0.2:${echo.port}`, `[::1]:${echo.port}`]) {
      assert.match(await exchange(home.proxy.socketPath, `CONNECT ${other} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 403 [^]*is not on this sandbox's allow list/, other);
    }
    for (const other of [`2130706433:${echo.port}`, `0177.0.0.1:${echo.port}`, `0x7f.0.0.1:${echo.port}`, `127.1:${echo.port}`]) {
      assert.match(await exchange(home.proxy.socketPath, `CONNECT ${other} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 400 [^]*four decimal parts/, other);
    }
  });
});

test('CONNECT to an allowed name on another port gets 403; one with no port or a bad target gets 400', async () => {
  await withProxy(async (home, echo) => {
    const other = await closedPort();
    assert.match(await exchange(home.proxy.socketPath, `CONNECT localhost:${other} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 403 /);
    assert.match(await exchange(home.proxy.socketPath, 'CONNECT localhost HTTP/1.1\r\n\r\n'), /^HTTP\/1\.1 400 [^]*needs a port/);
    assert.match(await exchange(home.proxy.socketPath, `CONNECT u@localhost:${echo.port} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 400 [^]*user information/);
    await stillServes(home, echo);
  });
});

test('plain HTTP to an allowed host is forwarded with Host set from the URL and hop-by-hop headers dropped', async () => {
  await withProxy(async (home, _echo, web) => {
    const answer = await exchange(
      home.proxy.socketPath,
      get(`http://localhost:${web.port}/a/b?c=d`, 'Host: evil.example\r\nProxy-Authorization: Basic eA==\r\nConnection: x-drop, close\r\nX-Drop: 1\r\nX-Keep: 2\r\n'),
    );
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, new RegExp(`GET /a/b\\?c=d host=localhost:${web.port} body=$`));
    const seen = JSON.parse(/x-seen: (.*)\r\n/i.exec(answer)?.[1] ?? '{}') as Record<string, string>;
    assert.is(seen['x-keep'], '2');
    assert.is(seen['x-drop'], undefined);
    assert.is(seen['proxy-authorization'], undefined);
  });
});

test('a redirect is passed back as it is, never followed by the proxy', async () => {
  await withProxy(async (home, _echo, web) => {
    const answer = await exchange(home.proxy.socketPath, get(`http://localhost:${web.port}/redirect?to=${encodeURIComponent('http://elsewhere.example/')}`));
    assert.match(answer, /^HTTP\/1\.1 302 Found\r\n/);
    assert.match(answer, /\r\nlocation: http:\/\/elsewhere\.example\/\r\n/i);
  });
});

test('plain HTTP with a body: the body reaches the upstream', async () => {
  await withProxy(async (home, _echo, web) => {
    const answer = await exchange(
      home.proxy.socketPath,
      `POST http://localhost:${web.port}/up HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nConnection: close\r\n\r\nabcde`,
    );
    assert.match(answer, /POST \/up host=localhost:\d+ body=abcde$/);
  });
});

test('plain HTTP to a host not on the list gets 403 with the message, and the upstream sees nothing', async () => {
  await withProxy(async (home, _echo, web) => {
    const answer = await exchange(home.proxy.socketPath, get(`http://127.0.0.1:${web.port}/secret`));
    assert.match(answer, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.match(answer, /is not on this sandbox's allow list[^]*--bash-network allow=/);
    assert.not.match(answer, /GET \/secret/);
  }, {}, false);
});

test('a request that is not for an absolute http:// URL is answered 400 saying what the proxy takes', async () => {
  await withProxy(async (home, echo, web) => {
    assert.match(await exchange(home.proxy.socketPath, 'GET /path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400 [^]*absolute URL/);
    assert.match(await exchange(home.proxy.socketPath, get(`https://localhost:${web.port}/`)), /^HTTP\/1\.1 400 [^]*CONNECT/);
    await stillServes(home, echo);
  });
});

test('a protocol upgrade as plain HTTP gets 501 pointing at CONNECT', async () => {
  await withProxy(async (home, echo, web) => {
    const answer = await exchange(home.proxy.socketPath, `GET http://localhost:${web.port}/ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 501 [^]*use CONNECT/);
    await stillServes(home, echo);
  });
});

test('a refused upstream (nothing listening on an allowed port) gets 502 saying so, by CONNECT and by plain HTTP', async () => {
  const port = await closedPort();
  const home = await proxyFor([`localhost:${port}`, `127.0.0.1:${port}`]);
  try {
    assert.match(await exchange(home.proxy.socketPath, `CONNECT localhost:${port} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 502 [^]*refused the connection \(ECONNREFUSED\)/);
    assert.match(await exchange(home.proxy.socketPath, get(`http://localhost:${port}/`)), /^HTTP\/1\.1 502 [^]*refused the connection/);
  } finally {
    await home.close();
  }
});

test('an allowed name that does not resolve gets 502 naming it', async () => {
  const home = await proxyFor(['no-such-host.invalid:80']);
  try {
    assert.match(await exchange(home.proxy.socketPath, get('http://no-such-host.invalid/')), /^HTTP\/1\.1 502 [^]*no-such-host\.invalid could not be resolved/);
  } finally {
    await home.close();
  }
});

test('headers past the limit get 431; a malformed request line gets 400; the proxy serves on', async () => {
  await withProxy(async (home, echo) => {
    const big = `CONNECT localhost:${echo.port} HTTP/1.1\r\nX-Big: ${'a'.repeat(EGRESS_MAX_HEADER_BYTES)}\r\n\r\n`;
    assert.match(await exchange(home.proxy.socketPath, big), /^HTTP\/1\.1 431 [^]*headers pass 16384 bytes/);
    assert.match(await exchange(home.proxy.socketPath, 'NOT A REQUEST\r\n\r\n'), /^HTTP\/1\.1 400 [^]*could not be read as HTTP/);
    assert.match(await exchange(home.proxy.socketPath, Buffer.from([0, 1, 2, 255, 13, 10, 13, 10])), /^HTTP\/1\.1 400 /);
    await stillServes(home, echo);
  });
});

test('a client that disconnects mid-header, or mid-tunnel, costs only its own connection', async () => {
  await withProxy(async (home, echo) => {
    const half = await RawClient.open(home.proxy.socketPath);
    half.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\nX-Part`);
    half.destroy();
    const tunnelled = await RawClient.open(home.proxy.socketPath);
    tunnelled.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\nx`);
    await tunnelled.until('echo:x');
    tunnelled.destroy();
    await stillServes(home, echo);
  });
});

test('connections past the limit get 503 while the open ones go on', async () => {
  await withProxy(async (home, echo) => {
    const held = await Promise.all([0, 1].map(async () => {
      const client = await RawClient.open(home.proxy.socketPath);
      client.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\n`);
      await client.until('\r\n\r\n');
      return client;
    }));
    try {
      assert.match(await exchange(home.proxy.socketPath, `CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 503 [^]*2 connections are open/);
      held[0]?.socket.write('still');
      assert.is(await held[0]?.until('echo:still'), 'echo:still');
    } finally {
      for (const client of held) client.destroy();
    }
    // The proxy learns of the two closes asynchronously: once it has, a connection is admitted again.
    for (let tries = 0; ; tries++) {
      const probe = await RawClient.open(home.proxy.socketPath);
      probe.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\n`);
      const answer = await probe.until('\r\n\r\n');
      probe.destroy();
      if (!answer.startsWith('HTTP/1.1 503 ')) break;
      if (tries === 100) throw new Error('connections were never admitted again after the held ones closed');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await stillServes(home, echo);
  }, { maxConnections: 2 });
});

test('each door has its own cap below the total: past it 503 naming the command, while another door still connects; closing a door ends its connections', async () => {
  await withProxy(async (home, echo) => {
    const [greedy, other] = [await home.proxy.openDoor(), await home.proxy.openDoor()];
    const tunnelThrough = async (socketPath: string): Promise<RawClient> => {
      const client = await RawClient.open(socketPath);
      client.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\n`);
      assert.match(await client.until('\r\n\r\n'), / 200 /);
      return client;
    };
    const held = [await tunnelThrough(greedy.socketPath), await tunnelThrough(greedy.socketPath)];
    try {
      assert.match(await exchange(greedy.socketPath, `CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\n`), /^HTTP\/1\.1 503 [^]*this command has 2 connections open/);
      held.push(await tunnelThrough(other.socketPath));
      await greedy.close();
      await held[0]?.rest();
      assert.ok(held[0]?.closed, 'the closed door\'s connections were ended');
      held[2]?.socket.write('still');
      assert.is(await held[2]?.until('echo:still'), 'echo:still', 'the other door\'s connection goes on');
    } finally {
      for (const client of held) client.destroy();
    }
  }, { maxConnections: 4, maxConnectionsPerDoor: 2 });
});

test('a connection that never completes its headers gets 408; an idle tunnel is closed', async () => {
  await withProxy(async (home, echo) => {
    assert.match(await exchange(home.proxy.socketPath, 'CONNECT local'), /^HTTP\/1\.1 408 [^]*no complete request/);
    const idle = await RawClient.open(home.proxy.socketPath);
    idle.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\n`);
    assert.match(await idle.until('\r\n\r\n'), / 200 /);
    await idle.rest();
    assert.ok(idle.closed, 'the proxy closed the quiet tunnel');
  }, { headersTimeoutMs: 200, idleTimeoutMs: 300 });
});

test('close() ends open tunnels', async () => {
  await withProxy(async (home, echo) => {
    const client = await RawClient.open(home.proxy.socketPath);
    client.socket.write(`CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\n`);
    await client.until('\r\n\r\n');
    await home.proxy.close();
    await client.rest();
    assert.ok(client.closed);
  });
});

test('fuzz: 300 generated requests (mutated valid ones and random bytes) each get an answer or a close, and the proxy serves on', async () => {
  await withProxy(async (home, echo, web) => {
    const valid = [
      `CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\n`,
      get(`http://localhost:${web.port}/x`),
      get(`http://127.0.0.1:${web.port}/x`),
      `CONNECT [::1]:${echo.port} HTTP/1.1\r\n\r\n`,
    ];
    const mutated = fc.tuple(fc.constantFrom(...valid), fc.nat(), fc.uint8Array({ maxLength: 8 }), fc.nat({ max: 4 }))
      .map(([text, at, insert, cut]) => {
        const bytes = Buffer.from(text);
        const i = at % (bytes.length + 1);
        return Buffer.concat([bytes.subarray(0, i), Buffer.from(insert), bytes.subarray(Math.min(bytes.length, i + cut))]);
      });
    const anyBytes = fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.concat([Buffer.from(b), Buffer.from('\r\n\r\n')]));
    await fc.assert(fc.asyncProperty(fc.oneof(mutated, anyBytes), async (bytes) => {
      const client = await RawClient.open(home.proxy.socketPath);
      try {
        client.socket.end(bytes);
        const answer = await client.rest();
        assert.ok(answer === '' || /^HTTP\/1\.1 \d{3} /.test(answer), `unexpected answer ${JSON.stringify(answer.slice(0, 80))}`);
      } finally {
        client.destroy();
      }
    }), { numRuns: 300 });
    await stillServes(home, echo);
  }, { headersTimeoutMs: 500, idleTimeoutMs: 500 });
});

test('the proxy variables all point at the bridge port, and NO_PROXY is empty', () => {
  const env = egressEnvironment(3128);
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) assert.is(env[name], 'http://127.0.0.1:3128', name);
  assert.is(env.NO_PROXY, '');
  assert.is(env.no_proxy, '');
});

test.run();
