// The application's one Clock reaches what waits: given a FakeClock, its uptime and a tool call's
// deadline move only with that clock (a `bash` call with no timeout of its own is stopped when the fake
// clock passes the tool deadline, and not before).

import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log/logger.ts';
import { ABORT_GRACE_MS } from '../../src/limits.ts';
import { Application } from '../../src/server/application.ts';
import { FakeClock } from '../../src/time/fake-clock.ts';
import { guarded } from '../hang-guard.ts';
import { atLeast, killLeftovers, uniqueSleep } from '../tools/processes.ts';

const TOOL_TIMEOUT_MS = 30_000;

test('the uptime and a tool call deadline follow the clock the application was given', async () => {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-clock-')));
  const clock = new FakeClock();
  const app = await Application.start({
    workspace: ws, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: TOOL_TIMEOUT_MS, threads: 0, toolThreads: 1,
    chaos: {}, logger: createLogger('error'), serverVersion: 'test', onGiveUp: () => undefined, metrics: false, clock,
  });
  const arg = uniqueSleep();
  try {
    assert.is(app.health().uptimeMs, 0);
    clock.advance(5000);
    assert.is(app.health().uptimeMs, 5000);

    const replies = new Map<unknown, (m: Record<string, unknown>) => void>();
    const reply = (id: number) => new Promise<Record<string, unknown>>((resolve) => replies.set(id, resolve));
    const session = await app.open({
      principal: { kind: 'local' },
      transport: 'stdio',
      send: (out) => {
        const msg = JSON.parse(out.line) as Record<string, unknown>;
        replies.get(msg.id)?.(msg);
      },
    });
    const send = (msg: object) => session.deliver({ kind: 'line', text: JSON.stringify(msg) });
    const initialized = reply(1);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await guarded(initialized, 'initialize');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });

    const answered = reply(2);
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bash', arguments: { command: `sleep ${arg}`, timeout: 0 } } });
    // Its deadline is armed before the command starts: once the sleep runs, the clock decides.
    await atLeast(arg, 1);
    const early: Record<string, unknown>[] = [];
    void answered.then((m) => early.push(m));
    clock.advance(TOOL_TIMEOUT_MS - 1);
    await new Promise((r) => setImmediate(r));
    assert.equal(early, [], 'answered before its deadline');
    clock.advance(1 + ABORT_GRACE_MS);
    const result = (await guarded(answered, 'the tool call past its deadline')).result as { content: { text: string }[]; isError: boolean };
    assert.is(result.isError, true);
    assert.match(result.content[0]?.text ?? '', /^(Stopped: the tool call passed its deadline of 30 s|Command aborted)$/);
  } finally {
    killLeftovers(arg);
    await app.stop();
    await rm(ws, { recursive: true, force: true });
  }
});

test.run();
