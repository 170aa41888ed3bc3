// What one node opens to another (src/cluster/forward.ts) is bounded per node, with GET streams and other
// requests on separate agents: with the streams' limit taken by open streams, a further stream waits in the
// queue (not a new socket) and a POST still passes at once; a stream that ends lets the queued one through.
// Real sockets on loopback, small limits.

import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type ForwardOutcome, type ForwardTarget, forwardAgents, forwardRequest } from '../../src/cluster/forward.ts';
import { createLogger } from '../../src/log/logger.ts';
import { guarded, pollUntil } from '../hang-guard.ts';

/** A client's reply as forwarding writes it: the status it got, and a close the test can cause. */
class Target extends EventEmitter implements ForwardTarget {
  status = 0;
  destroyed = false;
  writeHead(status: number): this {
    this.status = status;
    return this;
  }
  flushHeaders(): void {}
  write(): boolean {
    return true;
  }
  end(): this {
    return this;
  }
  close(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

const request = (method: string) => ({ method, header: (name: string) => (name === 'accept' ? 'application/json, text/event-stream' : undefined) });

test('with every stream socket to a node held by open GET streams, another stream queues and a POST still passes; an ended stream lets the queued one through', async () => {
  let streamsSeen = 0;
  const home = http.createServer((req, res) => {
    if (req.method === 'GET') {
      streamsSeen++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.flushHeaders();
    }
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}'));
  });
  await new Promise<void>((r) => home.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(home.address() as AddressInfo).port}`;
  const agents = forwardAgents({ streams: 2, requests: 2 });
  const logger = createLogger('error', { write: () => {} });
  const targets: Target[] = [];
  const forwards: Promise<ForwardOutcome>[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const t = new Target();
      targets.push(t);
      forwards.push(forwardRequest(url, request('GET'), null, t, 'front', logger, { agents }));
    }
    await pollUntil('two streams at the home', () => (streamsSeen === 2 && targets.filter((t) => t.status === 200).length === 2 ? true : null), 10_000, 5);
    const queued = Object.values(agents.streams.http.requests).flat().length;
    assert.is(queued, 1, 'the third stream waits in the queue for a socket');
    assert.is(Object.values(agents.streams.http.sockets).flat().length, 2, 'no third socket is opened');
    // A POST beside them is not queued behind the streams.
    const post = new Target();
    const outcome = await guarded(forwardRequest(url, request('POST'), '{"jsonrpc":"2.0","id":1,"method":"ping"}', post, 'front', logger, { agents }), 'the POST beside two open streams');
    assert.equal(outcome, { kind: 'done' });
    assert.is(post.status, 200);
    // One stream's client goes away: its socket goes, and the queued stream reaches the home.
    (targets[0] as Target).close();
    await pollUntil('the queued stream at the home', () => (streamsSeen === 3 && (targets[2] as Target).status === 200 ? true : null), 10_000, 5);
  } finally {
    for (const t of targets) if (!t.destroyed) t.close();
    await Promise.all(forwards);
    for (const pair of [agents.streams, agents.requests]) {
      pair.http.destroy();
      pair.https.destroy();
    }
    home.closeAllConnections();
    await new Promise<void>((r) => home.close(() => r()));
  }
});

test.run();
