// A real stdio server process for tests that signal or kill it: started in a process group of its own
// (so every process of its tree, wrappers included, can be listed and cleaned up), driven with raw
// JSON-RPC lines. Not a *.test.ts file.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface StdioProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The process group of the whole tree (the pid of the process started). */
  readonly group: number;
  send(message: unknown): void;
  /** The reply to request `id`; rejects after `withinMs`. */
  reply(id: number, withinMs?: number): Promise<Record<string, unknown>>;
  stderr(): string;
  stdout(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILLs whatever is left of the process group. */
  cleanup(): void;
}

/**
 * `inherited`: descriptors the server gets besides stdio, at fd 3 onwards ('ignore' leaves a number unused),
 * as a parent that leaks its descriptors would hand them over.
 */
export function startStdio(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env, inherited: readonly (number | 'ignore')[] = []): StdioProcess {
  const child = spawn(command, [...args], { cwd: repoRoot, detached: true, stdio: ['pipe', 'pipe', 'pipe', ...inherited], env }) as ChildProcessWithoutNullStreams;
  const group = child.pid as number;
  let out = '';
  let err = '';
  const replies = new Map<number, Record<string, unknown>>();
  const waiters = new Map<number, (r: Record<string, unknown>) => void>();
  let pending = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    pending += d.toString();
    let nl: number;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const msg = JSON.parse(line) as Record<string, unknown>;
      if (typeof msg.id !== 'number') continue;
      replies.set(msg.id, msg);
      waiters.get(msg.id)?.(msg);
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  // A test may close or signal the server while a write is in flight.
  child.stdin.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    group,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    reply: (id, withinMs = 30_000) => {
      const got = replies.get(id);
      if (got) return Promise.resolve(got);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no reply to ${id} within ${withinMs} ms; stderr:\n${err}`)), withinMs);
        waiters.set(id, (r) => {
          clearTimeout(timer);
          resolve(r);
        });
      });
    },
    stderr: () => err,
    stdout: () => out,
    exited,
    cleanup: () => {
      for (const pid of groupMembers(group)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
        }
      }
    },
  };
}

export const initialize = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'process-test', version: '1.0.0' } },
};
export const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };

export function bashCall(id: number, command: string): unknown {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'bash', arguments: { command } } };
}

/** Live (not zombie) processes in process group `group`. */
/** A process's command line (arguments joined by NUL), or null once it is gone: it may exit between a listing and this read. */
export function commandLineOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ESRCH') return null;
    throw e;
  }
}

export function groupMembers(group: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ESRCH') continue;
      throw e;
    }
    // After "(comm) ": state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') continue;
    if (Number(fields[2]) === group) found.push(Number(name));
  }
  return found;
}

/** Polls until process group `group` is empty (true) or `withinMs` passes (false). */
export async function groupGone(group: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (groupMembers(group).length === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return groupMembers(group).length === 0;
}
