// Why the core's per-call state copies are written field by field (src/mcp/step.ts): on Node 20 (V8 11.3)
// a spread of an object that was itself made by a spread takes a slow path, and a connection state is
// always the previous step's copy. Each variant copies a connection state twice per iteration (a tool
// call's work registered, then answered), feeding each copy to the next, as the core does.
// Usage: npx tsx bench/v8-copies.ts   (ns per pair of copies, the minimum of 7 runs of 300,000)

import { loadavg } from 'node:os';
import { initialState } from '../src/mcp/state.ts';
import type { ConnectionState, Pending } from '../src/mcp/state.ts';
import { addPending, removePending } from '../src/mcp/step.ts';
import { fmt, table } from './lib/stats.ts';

const N = 300_000;
const none: ReadonlyMap<number, Pending> = new Map();
const start = () => initialState({ workspace: '/tmp' });
const literal = (s: ConnectionState, pending: ReadonlyMap<number, Pending>, nextTicket: number): ConnectionState => ({
  config: s.config, phase: s.phase, protocolVersion: s.protocolVersion, clientCapabilities: s.clientCapabilities, clientInfo: s.clientInfo,
  harness: s.harness, logLevel: s.logLevel, pending, nextTicket, conversations: s.conversations, subscriptions: s.subscriptions,
  root: s.root, rootsAsked: s.rootsAsked, rootsRound: s.rootsRound, rootsWaiting: s.rootsWaiting, rootsHeld: s.rootsHeld,
});
const variants: readonly (readonly [string, () => void])[] = [
  ['spread of the previous spread (the core before)', () => { let s = start(); for (let i = 0; i < N; i++) { s = { ...s, pending: none, nextTicket: i }; s = { ...s, pending: none }; } }],
  ['Object.assign of the previous copy', () => { let s = start(); for (let i = 0; i < N; i++) { s = Object.assign({}, s, { pending: none, nextTicket: i }); s = Object.assign({}, s, { pending: none }); } }],
  ['spread of one fixed object', () => { const s0 = start(); for (let i = 0; i < N; i++) { const s = { ...s0, pending: none, nextTicket: i }; if (s.nextTicket < 0) break; } }],
  ['field by field (the core now)', () => { let s = start(); for (let i = 0; i < N; i++) { s = literal(s, none, i); s = literal(s, none, s.nextTicket); } }],
  ['addPending + removePending (src/mcp/step.ts)', () => { let s = start(); for (let i = 0; i < N; i++) { const added = addPending(s, { kind: 'tool', requestId: i, tool: 'read' }); s = removePending(added.state, added.ticket); } }],
];
const best = new Map<string, number>();
for (let r = 0; r < 7; r++) {
  for (const [name, run] of variants) {
    const t0 = process.hrtime.bigint();
    run();
    best.set(name, Math.min(best.get(name) ?? Number.POSITIVE_INFINITY, Number(process.hrtime.bigint() - t0) / N));
  }
}
process.stdout.write(`Node ${process.version}; load average ${fmt(loadavg()[0] ?? 0, 1)}\n`);
process.stdout.write(`${table(['two copies of a connection state', 'ns'], [...best].map(([name, ns]) => [name, fmt(ns, 0)]))}\n`);
