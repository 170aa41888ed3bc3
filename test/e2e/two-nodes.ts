// Two Streamable HTTP nodes on one store (one SUPERPI_HOME, so one SQLite file) with a scripted model
// endpoint and the two tokens of task-listen-wire.ts: what the Tasks-extension tests start to show that a
// task parked, confirmed or polled on one node is the same task on the other.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { TOKENS } from './task-listen-wire.ts';

export interface TwoNodes {
  readonly box: Sandbox;
  readonly model: ScriptedServer;
  readonly nodeA: RunningServer;
  readonly nodeB: RunningServer;
  /** Stops both nodes and the model, and removes the workspace and the home. */
  stop(): Promise<void>;
}

/** Starts the model (answering from `script`, which the test fills) and both nodes, with `args` added to each. */
export async function startTwoNodes(script: ScriptStep[], args: readonly string[] = []): Promise<TwoNodes> {
  const box = await makeSandbox();
  const home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
  const model = await startScriptedServer(script);
  const env = { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home, SUPERPI_TOKENS: `${TOKENS.alice}=alice,${TOKENS.bob}=bob` };
  const start = () => startHttpServerProcess(box.ws, ['--threads', '1', '--tool-threads', '1', ...args], env);
  const [nodeA, nodeB] = await Promise.all([start(), start()]);
  return {
    box, model, nodeA, nodeB,
    stop: async () => {
      await Promise.all([nodeA.stop(), nodeB.stop()]);
      await model.close();
      await box.cleanup();
      await rm(home, { recursive: true, force: true });
    },
  };
}
