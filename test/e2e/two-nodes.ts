// Two Streamable HTTP nodes on one store with a scripted model endpoint: on one SQLite file (one
// SUPERPI_HOME, the two tokens of task-listen-wire.ts), or on one PostgreSQL database of a cluster test's
// ground; or two stdio processes on one SQLite file. What the Tasks-extension, cluster and cross-process
// tests start to show that a task parked, confirmed, polled or written on one node is the same task on the
// other.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ScriptedServer, type ScriptStep, startScriptedServer } from '../model/fixtures/scripted-server.ts';
import { type ClusterGround, makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { type StdioTaskServer, startStdioTaskServer, stopStdioServer, TOKENS } from './task-listen-wire.ts';

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

/**
 * Runs `body` with nodes `node-a` and `node-b` on a fresh database of the ground's PostgreSQL (one thread
 * of each kind), the model answering from `script`, and `env` added (the tokens); prints the nodes' stderr
 * when `body` throws, and stops the nodes and the model whatever happens.
 */
export async function withClusterNodes<T>(ground: ClusterGround, script: ScriptStep[], env: Readonly<Record<string, string>>, body: (a: RunningServer, b: RunningServer, box: Sandbox) => Promise<T>): Promise<T> {
  const { pg, box } = ground;
  const store = await pg.createDatabase();
  const model = await startScriptedServer(script);
  const nodes: RunningServer[] = [];
  let failed = true;
  try {
    const withModel = { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', ...env };
    for (const id of ['node-a', 'node-b']) nodes.push(await startHttpServerProcess(box.ws, ['--store', store, '--node-id', id, '--threads', '1', '--tool-threads', '1'], withModel));
    const result = await body(nodes[0] as RunningServer, nodes[1] as RunningServer, box);
    failed = false;
    return result;
  } finally {
    if (failed) for (const n of nodes) console.error(n.stderr());
    for (const n of nodes) await n.stop();
    await model.close();
  }
}

/** Two stdio server processes (A and B) on one SQLite file, as two hosts on one machine run them. */
export interface TwoStdioProcesses {
  readonly box: Sandbox;
  /** Their SUPERPI_HOME: the database is `databasePath(home)`. */
  readonly home: string;
  readonly model: ScriptedServer;
  readonly a: StdioTaskServer;
  readonly b: StdioTaskServer;
  /** Ends both processes and the model, and removes the workspace and the home. */
  stop(): Promise<void>;
}

/** Starts the model (answering from `script`) and both processes, each with the model, the home and its own `env` added. */
export async function startTwoStdioProcesses(script: ScriptStep[], envA: Readonly<Record<string, string>> = {}, envB: Readonly<Record<string, string>> = envA): Promise<TwoStdioProcesses> {
  const box = await makeSandbox();
  const home = await mkdtemp(path.join(os.tmpdir(), 'superpi-home-'));
  const model = await startScriptedServer(script);
  const env = { SUPERPI_MODEL_URL: `${model.url}/v1`, SUPERPI_MODEL: 'scripted', SUPERPI_API_KEY: 'sk-test', SUPERPI_HOME: home };
  const a = startStdioTaskServer(box.ws, { ...env, ...envA });
  const b = startStdioTaskServer(box.ws, { ...env, ...envB });
  return {
    box, home, model, a, b,
    stop: async () => {
      await Promise.all([stopStdioServer(a), stopStdioServer(b)]);
      await model.close();
      await box.cleanup();
      await rm(home, { recursive: true, force: true });
    },
  };
}
