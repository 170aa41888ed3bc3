// The takeover of a server process on the SQLite store (server/node-takeover.ts): it looks only through a
// store that exists — a server that never ran a task creates no database to look — and, once one exists,
// its first pass (a second after start) opens it, which settles the tasks of a dead process: here, with no server
// model, the orphan is left for a process that has one until the patience (`orphanPatienceMs`) past its
// lease, then marked interrupted with its message (test/e2e/sqlite-takeover.test.ts has the processes that
// continue one).

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log/logger.ts';
import { Application } from '../../src/server/application.ts';
import { takeoverSite } from '../../src/server/node-takeover.ts';
import { databasePath } from '../../src/store/location.ts';
import { processOwnership, systemProbe } from '../../src/store/ownership.ts';
import { SqliteConversationStore } from '../../src/store/sqlite-store.ts';
import { LEASE_RENEWALS_PER_TERM } from '../../src/limits.ts';
import { FIRST_TAKEOVER_PASS_DELAY_MS, storedSetup } from '../../src/task/task-takeover.ts';

let ws: string;
let home: string;
const saved = { ...process.env };

test.before.each(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-takeover-ws-')));
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-takeover-home-'));
  // The application finds its store through the environment, as a server does.
  process.env.SUPERPI_HOME = home;
  for (const name of ['SUPERPI_MODEL_URL', 'SUPERPI_ANTHROPIC_API_KEY']) delete process.env[name];
});
test.after.each(async () => {
  process.env = { ...saved };
  await rm(ws, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const start = (more: { orphanPatienceMs?: number } = {}) => Application.start({
  ...more,
  workspace: ws, harness: 'super-pi-code', pageSize: 50, toolTimeoutMs: 30_000, threads: 0, toolThreads: 1,
  chaos: {}, logger: createLogger('error'), serverVersion: 'test', metrics: false, onGiveUp: () => undefined,
});

/** After `start`: its first takeover pass runs FIRST_TAKEOVER_PASS_DELAY_MS later (off the start's path), and a pass with no store or one orphan is quick. */
const firstPassDone = () => new Promise((resolve) => setTimeout(resolve, FIRST_TAKEOVER_PASS_DELAY_MS + 500));

test('a server on a home without a database looks for tasks to take over without creating one', async () => {
  const app = await start();
  await firstPassDone();
  assert.not.ok(existsSync(databasePath(home)), 'no database made by the first pass');
  await app.stop();
  assert.not.ok(existsSync(databasePath(home)), 'nor by the stop');
});

/** A task claimed by a process that then died, with a lease of `leaseMs` (the smallest term lapses at once). */
async function orphanOfDeadProcess(leaseMs?: number): Promise<string> {
  const gone = spawn(process.execPath, ['-e', '0']);
  const pid = gone.pid ?? 0;
  await new Promise((resolve) => gone.on('close', resolve));
  const dead = SqliteConversationStore.open(databasePath(home), { ownership: processOwnership(systemProbe, pid), ...(leaseMs === undefined ? {} : { leaseMs }) });
  const c = dead.createConversation({ principal: 'local', sessionId: 'session-1', harness: 'super-pi-code' });
  const lease = dead.claimTask(c.id, storedSetup({ conversationId: c.id, harness: 'super-pi-code', maxTurns: 4, local: true, forbidWrites: false, canConfirm: true }, { workspace: ws }));
  dead.append(c.id, 'user', { text: 'go' }, lease.epoch);
  dead.close();
  return c.id;
}

/** The conversation as the file says, read by a store that judges no orphan of the dead process (opening one interrupts them). */
function readBack<T>(read: (store: SqliteConversationStore) => T): T {
  const after = SqliteConversationStore.open(databasePath(home), { judgeOrphan: () => 'continue' });
  try {
    return read(after);
  } finally {
    after.close();
  }
}

test('once the database exists, the first pass opens it: a dead process\'s task that this process cannot continue (no server model) is left for one that can', async () => {
  const id = await orphanOfDeadProcess();
  const app = await start();
  await firstPassDone();
  await app.stop();
  readBack((after) => {
    assert.is(after.getConversation(id, 'local')?.status, 'running', 'left for a process with a model');
    assert.is(after.lastEntry(id)?.type, 'user', 'nothing written');
  });
});

test('past orphanPatienceMs after its lease lapsed, the process that cannot continue it marks it interrupted, with its message', async () => {
  const id = await orphanOfDeadProcess(LEASE_RENEWALS_PER_TERM);
  const app = await start({ orphanPatienceMs: 0 });
  await firstPassDone();
  await app.stop();
  readBack((after) => {
    assert.is(after.getConversation(id, 'local')?.status, 'interrupted');
    const last = after.lastEntry(id);
    assert.is(last?.type, 'interrupted');
    assert.match(String((last?.payload as { message: string }).message), `Continue it with conversation_id ${id}`);
  });
});

test('takeoverSite: a PostgreSQL node following roots serves the directories below its workspace; with --workspace, or on SQLite, only the workspace itself', () => {
  const pg = { kind: 'postgres' as const, url: 'postgres://x', label: 'x' };
  const env = { SUPERPI_MODEL_URL: 'http://127.0.0.1:9/v1', SUPERPI_MODEL: 'm' };
  assert.equal(takeoverSite({ workspace: ws, store: pg, followRoots: true }, env), { workspace: ws, below: true, model: true });
  assert.is(takeoverSite({ workspace: ws, store: pg, followRoots: false }, env).below, false, 'the operator named the workspace: sessions never choose a root');
  assert.is(takeoverSite({ workspace: ws, store: { kind: 'sqlite' }, followRoots: true }, env).below, false, 'processes of other projects share the file; a local root may be anywhere');
  assert.is(takeoverSite({ workspace: ws, followRoots: true }, {}).model, false);
});

test.run();
