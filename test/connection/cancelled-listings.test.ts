// Path completion and the workspace resource list a directory a batch at a time, for as long as the
// directory is large (workspace content). A cancelled request stops that work at the next batch: nothing is
// answered for it, nothing is logged as a failure, and the runner holds no work for it after. Without the
// cancel, the same effects answer (so the test shows the cancel, not an empty directory, stopped them).

import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EffectRunner } from '../../src/connection/effect-runner.ts';
import { completePath } from '../../src/connection/path-completion.ts';
import { gatherWorkspaceContext } from '../../src/connection/workspace-context.ts';
import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import type { ToolExecutor } from '../../src/tools/contract.ts';

/** Names in each listed directory: several of eachConfinedEntry's batches. */
const NAMES = 3_000;

const cancelled = suite('cancelled listings');
let ws = '';

cancelled.before(async () => {
  ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'superpi-cancel-list-')));
  mkdirSync(path.join(ws, 'big'));
  writeFileSync(path.join(ws, 'one'), '');
  for (let i = 0; i < NAMES; i++) {
    linkSync(path.join(ws, 'one'), path.join(ws, 'big', `n${String(i).padStart(5, '0')}`));
    linkSync(path.join(ws, 'one'), path.join(ws, `r${String(i).padStart(5, '0')}`));
  }
});
cancelled.after(async () => {
  await rm(ws, { recursive: true, force: true });
});

const noTools: ToolExecutor = () => Promise.reject(new Error('no tool runs here'));

function runner() {
  const results: EffectResult[] = [];
  const errors: string[] = [];
  const logger = { level: 'debug' as const, log: (level: string, message: string) => { if (level === 'error') errors.push(message); } };
  const effects = new EffectRunner({ workspace: ws, logger, toolTimeoutMs: 30_000, executeTool: noTools }, (r) => results.push(r));
  return { effects, results, errors };
}

async function drained(effects: EffectRunner): Promise<void> {
  for (let i = 0; i < 2_000 && effects.inFlight > 0; i++) await new Promise<void>((r) => setTimeout(r, 5));
  assert.is(effects.inFlight, 0, 'the runner still holds the work');
}

const listings: readonly [string, (ticket: number) => Effect, EffectResult['kind']][] = [
  ['path completion', (ticket) => ({ kind: 'completePath', ticket, prefix: 'big/n' }), 'pathCompletions'],
  ['the workspace resource', (ticket) => ({ kind: 'readWorkspace', ticket }), 'workspaceContext'],
];

for (const [name, effect, answered] of listings) {
  cancelled(`${name} of ${NAMES} names answers when it is not cancelled`, async () => {
    const { effects, results, errors } = runner();
    effects.run(effect(1));
    await drained(effects);
    assert.equal(results.map((r) => r.kind), [answered]);
    assert.equal(errors, []);
  });

  cancelled(`${name} cancelled at once stops: no answer, no failure logged, no work held`, async () => {
    const { effects, results, errors } = runner();
    effects.run(effect(2));
    effects.run({ kind: 'cancel', ticket: 2 });
    await drained(effects);
    assert.equal(results, []);
    assert.equal(errors, []);
  });
}

cancelled('completePath and gatherWorkspaceContext reject with the reason of an aborted signal', async () => {
  const controller = new AbortController();
  const reason = new Error('cancelled by the client');
  controller.abort(reason);
  for (const run of [() => completePath(ws, 'big/n', controller.signal), () => gatherWorkspaceContext(ws, undefined, controller.signal)]) {
    const outcome = await run().then(() => 'answered', (err: unknown) => err);
    assert.is(outcome, reason);
  }
});

cancelled.run();
