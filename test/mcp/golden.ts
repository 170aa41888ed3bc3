// Helpers for golden tests of the pure core: feed lines, collect reply lines and effects.

import type { Effect, EffectResult } from '../../src/mcp/effects.ts';
import { handleEffectResult, handleMcpLine } from '../../src/mcp/handle.ts';
import type { RoundTrip } from '../../src/mcp/request-state.ts';
import { type ConnectionState, initialState } from '../../src/mcp/state.ts';

export interface Run {
  state: ConnectionState;
  replies: unknown[];
  effects: Effect[];
}

export const fresh = (over: Partial<Parameters<typeof initialState>[0]> = {}): ConnectionState =>
  initialState({ workspace: '/ws', ...over });

export function feed(state: ConnectionState, ...lines: (string | object)[]): Run {
  return feedAt(undefined, state, ...lines);
}

/** `feed` on a node whose multi-round-trip seal and clock are `roundTrip` (the runtime's input to the core). */
export function feedAt(roundTrip: RoundTrip | undefined, state: ConnectionState, ...lines: (string | object)[]): Run {
  const run: Run = { state, replies: [], effects: [] };
  for (const l of lines) {
    const step = handleMcpLine(typeof l === 'string' ? l : JSON.stringify(l), run.state, roundTrip);
    run.state = step.state;
    run.replies.push(...step.replies.map((r) => JSON.parse(r.line)));
    run.effects.push(...step.effects);
  }
  return run;
}

/** One effect's result folded back on a node with `roundTrip`. */
export function foldAt(roundTrip: RoundTrip | undefined, state: ConnectionState, result: EffectResult): Run {
  const step = handleEffectResult(result, state, roundTrip);
  return { state: step.state, replies: step.replies.map((r) => JSON.parse(r.line)), effects: step.effects };
}

/**
 * A run whose accepted 2026-07-28 confirmation asked the store to record its use (`consumeConfirmation`),
 * continued with the store's answer (`firstUse`, as the first retry of a state gets) folded on a node with
 * `roundTrip`: the consumption leaves the run's effects, and what the answer brought is added.
 */
export function spentAt(roundTrip: RoundTrip | undefined, run: Run, firstUse = true): Run {
  const effect = run.effects.find((e) => e.kind === 'consumeConfirmation');
  if (effect === undefined || effect.kind !== 'consumeConfirmation') throw new Error(`the run asked for no consumeConfirmation: ${JSON.stringify(run.replies)}`);
  const next = foldAt(roundTrip, run.state, { kind: 'confirmationConsumed', ticket: effect.ticket, firstUse });
  return { state: next.state, replies: [...run.replies, ...next.replies], effects: [...run.effects.filter((e) => e !== effect), ...next.effects] };
}

export function fold(state: ConnectionState, ...results: EffectResult[]): Run {
  const run: Run = { state, replies: [], effects: [] };
  for (const r of results) {
    const step = handleEffectResult(r, run.state);
    run.state = step.state;
    run.replies.push(...step.replies.map((x) => JSON.parse(x.line)));
    run.effects.push(...step.effects);
  }
  return run;
}

export const init = (version = '2025-06-18', capabilities: object = {}, extra: object = {}) => ({
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: version, capabilities, clientInfo: { name: 'golden', version: '1' }, ...extra },
});

/** A session past initialize (and its reply), at `version`. */
export function ready(version = '2025-06-18', capabilities: object = {}, over: Partial<Parameters<typeof initialState>[0]> = {}): ConnectionState {
  return feed(fresh(over), init(version, capabilities), { jsonrpc: '2.0', method: 'notifications/initialized' }).state;
}

export const req = (id: number | string, method: string, params?: object) =>
  params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
