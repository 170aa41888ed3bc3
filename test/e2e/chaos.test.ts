// Fault injection end to end: several sessions (each a stdio server driven by the SDK client) pipeline
// thousands of calls while scheduler workers are killed, or connection actors crash, for real.
// Every request must be answered (result or error), at least 90% must succeed, every session must
// still work afterwards — and a restart storm must end in a clear give-up, not a spin.

import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Connected, connectStdio, makeSandbox, repoRoot, type Sandbox, stdioEntry } from './fixtures.ts';

/** Calls per session, and how many each session keeps in flight. */
const CALLS = 1000;
const IN_FLIGHT = 8;
const SESSIONS = 3;
/** Rounds of pipelined calls at most, until the faults the test counts have happened (see below). */
const MAX_ROUNDS = 5;
/** A request not answered within this is a hang: the test fails. */
const ANSWER_WITHIN_MS = 15_000;

interface Tally { ok: number; errors: number; unanswered: number; codes: Map<number, number> }

async function hammer(c: Connected): Promise<Tally> {
  const tally: Tally = { ok: 0, errors: 0, unanswered: 0, codes: new Map() };
  let next = 0;
  const one = async (i: number) => {
    try {
      const kind = i % 3;
      if (kind === 0) await c.client.ping({ timeout: ANSWER_WITHIN_MS });
      else if (kind === 1) await c.client.callTool({ name: 'read', arguments: { path: 'README.md' } }, undefined, { timeout: ANSWER_WITHIN_MS });
      else await c.client.callTool({ name: 'ls', arguments: { path: 'src' } }, undefined, { timeout: ANSWER_WITHIN_MS });
      tally.ok++;
    } catch (err) {
      const message = String((err as Error).message);
      if (/timed out/i.test(message)) tally.unanswered++;
      else {
        tally.errors++;
        const code = (err as { code?: number }).code ?? 0;
        tally.codes.set(code, (tally.codes.get(code) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < CALLS) await one(next++);
  }));
  return tally;
}

/** Chaos is still on: a request may be aborted again, and a client retries an aborted request. */
async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if ((err as { code?: number }).code !== -32010 || attempt >= 5) throw err;
    }
  }
}

async function stillWorks(c: Connected): Promise<void> {
  assert.equal(await retried(() => c.client.ping()), {});
  const { tools } = await retried(() => c.client.listTools());
  assert.is(tools.length, 8);
  const r = await retried(() => c.client.callTool({ name: 'read', arguments: { path: 'README.md' } }));
  assert.not.ok(r.isError);
}

const chaos = suite('fault injection over stdio');
let box: Sandbox;

chaos.before(async () => {
  box = await makeSandbox();
});
chaos.after(async () => {
  await box.cleanup();
});

for (const [mode, flag] of [['kill-worker', 'kill-worker=1000'], ['crash-actor', 'crash-actor=0.002']] as const) {
  chaos(`--chaos ${flag}: ${SESSIONS} sessions x ${CALLS} pipelined calls are all answered, >= 90% succeed, sessions still work`, async () => {
    // An initialize can be aborted by the chaos too; a host then starts the server again.
    // crash-actor's crashes a second grow with the server's speed: the session's default intensity (10 a
    // second) would make this test measure the machine, so the session is given room; recovery is tested.
    const tolerant = mode === 'crash-actor' ? ['--restart-intensity', 'session=1000/1'] : [];
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => retried(() => connectStdio(box.ws, ['--threads', '2', '--tool-threads', '1', '--chaos', flag, ...tolerant]))));
    try {
      // First, that the faults happened, counted from outside: a really killed thread is restarted by the
      // schedulers supervisor; a really crashed actor is reported by its session. A chaos mode that only
      // logs, or never throws, leaves these at zero. A fast machine can finish a round before the second
      // kill (one every 1000 ms): rounds go on until two faults happened, at most MAX_ROUNDS.
      const faultsSoFar = () => {
        const lines = sessions.map((s) => s.stderr()).join('\n').split('\n');
        return mode === 'kill-worker'
          ? lines.filter((l) => l.includes(': restarted') && l.includes('"supervisor":"schedulers"')).length
          : lines.filter((l) => l.includes('connection actor exited') && l.includes('crash-actor made this connection actor crash')).length;
      };
      const tallies: Awaited<ReturnType<typeof hammer>>[] = [];
      let rounds = 0;
      while (rounds < MAX_ROUNDS && (rounds === 0 || faultsSoFar() < 2)) {
        tallies.push(...await Promise.all(sessions.map(hammer)));
        rounds++;
      }
      const total = tallies.reduce((t, x) => ({ ok: t.ok + x.ok, errors: t.errors + x.errors, unanswered: t.unanswered + x.unanswered }), { ok: 0, errors: 0, unanswered: 0 });
      const codes = [...new Set(tallies.flatMap((t) => [...t.codes.keys()]))];
      const sent = SESSIONS * CALLS * rounds;
      console.log(`  ${mode}: ${total.ok} ok, ${total.errors} errors (codes ${codes.join(', ') || 'none'}), ${total.unanswered} unanswered of ${sent} (${rounds} round${rounds === 1 ? '' : 's'})`);
      const faults = faultsSoFar();
      assert.ok(faults >= 2, `at least 2 ${mode === 'kill-worker' ? 'thread restarts' : 'actor crashes'} in ${rounds} rounds (${faults})`);
      assert.is(total.unanswered, 0, 'every request is answered');
      assert.is(total.ok + total.errors, sent);
      assert.ok(total.ok >= 0.9 * sent, `at least 90% succeed (${total.ok})`);
      assert.ok(codes.every((c) => c === -32010), `failures are 'request aborted' errors, got ${codes.join(', ')}`);
      for (const s of sessions) await stillWorks(s);
      for (const s of sessions) assert.match(s.stderr(), new RegExp(`WARNING: fault injection is ON: --chaos ${mode}`));
      if (mode === 'kill-worker') assert.ok(sessions.some((s) => /chaos: killing a scheduler worker/.test(s.stderr())), 'workers were really killed');
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  });
}

chaos('a restart storm escalates to the root, which exits with a clear message instead of spinning', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', stdioEntry, '--workspace', box.ws, '--threads', '2', '--chaos', 'kill-worker=20'], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await Promise.race([
    new Promise<number | null>((r) => child.once('exit', (c) => r(c))),
    new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000)),
  ]);
  if (code === 'timeout') child.kill('SIGKILL');
  assert.is(code, 1, `expected exit code 1; stderr:\n${stderr.slice(-2000)}`);
  // Whichever intensity is crossed first — the session's own (its actor keeps dying with the workers)
  // or the schedulers' (escalating to the root) — the server says so and exits; it does not spin.
  assert.match(stderr, /super-pi gave up: the root supervisor "root" exited|super-pi: session session-1 was given up/, stderr.slice(-1500));
  assert.match(stderr, /RestartIntensityError: supervisor "[^"]+" gave up/);
});

chaos.run();
