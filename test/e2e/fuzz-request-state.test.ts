// Fuzz, the sealed `requestState` of a 2026-07-28 confirmation, past its seal check: real states asked
// for `bash` (an `ask` rule), then generated retries (fuzz-request-state.ts) — mutated, re-sealed,
// replayed, sent by another caller, to another tool, with other arguments, with a no or a yes, several at
// once — to the real server process (`node bin/super-pi.js`, the dist bundle) over stdio and over
// Streamable HTTP (two token callers, a third of the requests reusing id 1 as independent clients do) on
// 127.0.0.1. Every retry is answered once with its id, as the model says: -32602 and no run, a tool error
// and no run, or one run per state however many yeses race; the workspace's ledger holds exactly the runs
// the model expects; the server never crashes, and a fresh question and its yes still run at the end. Seeded (fast-check): FUZZ_SEED replays a run, FUZZ_STATE_RUNS sets how many plans.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UNCAUGHT_MESSAGE } from '../../src/cli/last-resort.ts';
import { makeSandbox, repoRoot, type Sandbox, startHttpServerProcess, TEST_STATE_KEY } from './fixtures.ts';
import { binEntry, FUZZ_SEED, stopChild } from './fuzz.ts';
import { planArb, runPlan, StateLedger, type StateWire, stillServing } from './fuzz-request-state.ts';
import { httpAsk, type Message, stdioAsker, TOKENS, type Who } from './task-listen-wire.ts';

/** Plans per transport (each asks 2-4 states and sends 4-10 steps of retries). */
const RUNS = Number(process.env.FUZZ_STATE_RUNS ?? 20);
const ASKABLE = { elicitation: { form: {} } };

/** Runs the plans; afterwards the run reached every kind of answer the model has. */
async function fuzz(wire: StateWire, ledger: StateLedger, callers: number): Promise<void> {
  await fc.assert(fc.asyncProperty(planArb(callers, wire.principals), (plan) => runPlan(wire, ledger, plan)), { seed: FUZZ_SEED, numRuns: RUNS, endOnFailure: true, includeErrorInReport: true });
  await ledger.check('after the last run');
  await stillServing(wire, ledger);
  const outcomes = JSON.stringify([...ledger.outcomes]);
  console.log(`seed ${FUZZ_SEED}: ${outcomes}`);
  for (const kind of ['ran', 'alreadyUsed', 'refused', 'notRun']) assert.ok((ledger.outcomes.get(kind) ?? 0) > 0, `no "${kind}" answer in the run: ${outcomes}`);
}

async function withHome<T>(body: (box: Sandbox, home: string) => Promise<T>): Promise<T> {
  const box = await makeSandbox();
  const home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
  try {
    return await body(box, home);
  } finally {
    await box.cleanup();
    await rm(home, { recursive: true, force: true });
  }
}

test(`stdio: ${RUNS} plans of retries on real sealed states; each answered once as the model says, each yes runs once (seed ${FUZZ_SEED})`, () => withHome(async (box, home) => {
  const child = spawn(process.execPath, [binEntry, '--stdio', '--workspace', box.ws, '--log-level', 'error'], {
    cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'],
    // The test's key, so a run can re-seal a state's payload (fuzz-request-state.ts `reseal`).
    env: { ...process.env, SUPERPI_HOME: home, SUPERPI_STATE_KEY: TEST_STATE_KEY },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  // Every answer on stdout, by id: each request is answered exactly once.
  const answered = new Map<unknown, number>();
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      const m = JSON.parse(buf.slice(0, nl)) as Message;
      buf = buf.slice(nl + 1);
      if (m.method === undefined) answered.set(m.id, (answered.get(m.id) ?? 0) + 1);
    }
  });
  try {
    const ask = stdioAsker(child, ASKABLE);
    let sent = 0;
    const wire: StateWire = {
      principals: ['local'],
      call: async (_who, params) => {
        const id = ++sent; // stdioAsker numbers its requests 1, 2, 3… in the order they are made.
        const m = await ask('tools/call', params);
        assert.is(m.id, id);
        return m;
      },
    };
    await fuzz(wire, new StateLedger(box.ws), 1);
    const twice = [...answered].filter(([, n]) => n !== 1);
    assert.equal(twice, [], 'answered more than once');
    assert.is(answered.size, sent, `${sent} requests, ${answered.size} ids answered`);
    assert.is(child.exitCode, null, `the server exited; stderr: ${stderr.slice(-2000)}`);
    assert.not.ok(stderr.includes(UNCAUGHT_MESSAGE), stderr.slice(-2000));
    child.stdin.end();
    assert.is(await new Promise((r) => child.once('exit', r)), 0, `exit code after input closed; stderr: ${stderr.slice(-2000)}`);
  } finally {
    await stopChild(child);
  }
}));

test(`HTTP: ${RUNS} plans of retries by two token callers on real sealed states; each answered as the model says, each yes runs once (seed ${FUZZ_SEED})`, () => withHome(async (box, home) => {
  const server = await startHttpServerProcess(box.ws, ['--log-level', 'error'], { SUPERPI_HOME: home, SUPERPI_TOKENS: `${TOKENS.alice}=alice,${TOKENS.bob}=bob` }, 'bundle');
  try {
    const callers: readonly Who[] = ['alice', 'bob'];
    let next = 0;
    const wire: StateWire = {
      principals: ['token:alice', 'token:bob'],
      call: async (who, params) => {
        // Every third request reuses id 1, as independent clients do: requests at once must each get their own answer.
        const id = next++ % 3 === 0 ? 1 : `state-${next}`;
        const m = await httpAsk(server, 'tools/call', params, callers[who] as Who, ASKABLE, id);
        assert.is(m.id, id, JSON.stringify(m).slice(0, 300));
        return m;
      },
    };
    await fuzz(wire, new StateLedger(box.ws), callers.length);
    assert.is(server.child.exitCode, null, `the server exited; stderr: ${server.stderr().slice(-2000)}`);
    assert.not.ok(server.stderr().includes(UNCAUGHT_MESSAGE), server.stderr().slice(-2000));
  } finally {
    await server.stop();
  }
}));

test.run();
