// How the sealed-state fuzzer (fuzz-request-state.ts) changes a real `requestState` and the call it comes
// with: its text changed without the key (cut, flipped, re-spelled, spliced with another state's MAC, not
// a string), its payload changed and sealed again with the test's key (expired, another principal, tool,
// harness, arguments digest or kind, a field of the wrong type), or the call's arguments changed. Every
// change here must be refused, never run. Not a *.test.ts file.

import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { TEST_STATE_KEY } from './fixtures.ts';

/** REQUEST_STATE_TTL_MS as the docs state it (docs/multi-round-trip.md). */
const STATE_TTL_MS = 10 * 60_000;

/** How a state's text is changed without the key (each must be refused). */
export type TextMutation =
  | { readonly kind: 'flip'; readonly at: number; readonly to: string }
  | { readonly kind: 'cut'; readonly at: number }
  | { readonly kind: 'append'; readonly tail: string }
  | { readonly kind: 'prepend'; readonly head: string }
  | { readonly kind: 'respell'; readonly part: 1 | 2 }
  | { readonly kind: 'padded'; readonly part: 1 | 2 }
  | { readonly kind: 'splice'; readonly other: number; readonly keep: 'payload' | 'mac' }
  | { readonly kind: 'dropDot' }
  | { readonly kind: 'upper' }
  | { readonly kind: 'notString'; readonly shape: number };

/** How a state is re-sealed with the (test's) key: each still names something that is not this call now. */
export type Reseal =
  | { readonly kind: 'expired'; readonly ago: number }
  | { readonly kind: 'principal'; readonly p: string }
  | { readonly kind: 'tool'; readonly t: string }
  | { readonly kind: 'harness'; readonly h: string }
  | { readonly kind: 'digest'; readonly a: string }
  | { readonly kind: 'waitKind'; readonly k: 'turn' | 'ask' }
  | { readonly kind: 'badField'; readonly field: string; readonly value: unknown }
  | { readonly kind: 'body'; readonly text: string }
  | { readonly kind: 'version'; readonly v: string };

/** Arguments other than the ticket's: `valid` ones fit bash's schema (-32602), the others do not (a tool error). */
export interface ArgsChange { readonly valid: boolean; readonly change: number }
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const FLIP_TO = [...B64URL, '.', '=', '+', '/', ' ', '\u00e9', '\u0000', '\n'];
const NOT_STRINGS: readonly ((s: string) => unknown)[] = [() => null, () => 5, (s) => [s], (s) => ({ requestState: s }), () => true, () => ({})];
export const textMutationArb: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), to: fc.constantFrom(...FLIP_TO) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('append' as const), tail: fc.constantFrom('A', '=', '==', '.', '.x', ' ', '\n', '\u0000', '.v1') }),
  fc.record({ kind: fc.constant('prepend' as const), head: fc.constantFrom(' ', 'v1.', '.', '\ufeff') }),
  fc.record({ kind: fc.constant('respell' as const), part: fc.constantFrom(1 as const, 2 as const) }),
  fc.record({ kind: fc.constant('padded' as const), part: fc.constantFrom(1 as const, 2 as const) }),
  fc.record({ kind: fc.constant('splice' as const), other: fc.nat(), keep: fc.constantFrom('payload' as const, 'mac' as const) }),
  fc.constant({ kind: 'dropDot' as const }),
  fc.constant({ kind: 'upper' as const }),
  fc.record({ kind: fc.constant('notString' as const), shape: fc.nat({ max: NOT_STRINGS.length - 1 }) }),
);

export const resealArb = (principals: readonly string[]): fc.Arbitrary<Reseal> => fc.oneof(
  fc.record({ kind: fc.constant('expired' as const), ago: fc.constantFrom(1, 1_000, STATE_TTL_MS + 1, Date.now(), Date.now() + 1) }),
  fc.record({ kind: fc.constant('principal' as const), p: fc.constantFrom(...principals, 'anonymous', 'token:', 'token:alice ', 'Local', 'token:bob\u0000', 'local') }),
  fc.record({ kind: fc.constant('tool' as const), t: fc.constantFrom('write', 'read', 'harness_task', 'Bash', 'bash ', '', '__proto__') }),
  fc.record({ kind: fc.constant('harness' as const), h: fc.constantFrom('super-pi-planner', 'super-pi-assistant', 'super-pi-librarian', 'super-pi-code ', '') }),
  fc.record({ kind: fc.constant('digest' as const), a: fc.oneof(fc.constantFrom('', 'A'.repeat(43)), fc.string({ minLength: 1, maxLength: 60 })) }),
  fc.record({ kind: fc.constant('waitKind' as const), k: fc.constantFrom('turn' as const, 'ask' as const) }),
  fc.record({
    kind: fc.constant('badField' as const),
    field: fc.constantFrom('k', 't', 'a', 'p', 'h', 'e', 'r'),
    value: fc.constantFrom(undefined, null, 5, 'x', [], {}, '9999999999999', 'Confirm', 1e308),
  }),
  fc.record({ kind: fc.constant('body' as const), text: fc.constantFrom('not json', '[]', 'null', '{}', '\u00ff\u00fe', '{"k":"confirm"}') }),
  fc.record({ kind: fc.constant('version' as const), v: fc.constantFrom('v2', 'v0', 'V1', '') }),
);

export const argsChangeArb: fc.Arbitrary<ArgsChange> = fc.record({ valid: fc.boolean(), change: fc.nat({ max: 99 }) });

/**
 * The state's text changed without the key: every result differs from the state, and from `other` (another
 * state of the run, whose parts a splice takes).
 */
export function mutateText(state: string, m: TextMutation, other: string): unknown {
  const [v, payload, mac] = state.split('.') as [string, string, string];
  switch (m.kind) {
    case 'flip': {
      const at = m.at % state.length;
      const to = m.to === state[at] ? (m.to === 'A' ? 'B' : 'A') : m.to;
      return state.slice(0, at) + to + state.slice(at + 1);
    }
    case 'cut': return state.slice(0, m.at % state.length);
    case 'append': return state + m.tail;
    case 'prepend': return m.head + state;
    case 'respell': return m.part === 1 ? `${v}.${respell(payload)}.${mac}` : `${v}.${payload}.${respell(mac)}`;
    case 'padded': return m.part === 1 ? `${v}.${standardBase64(payload)}.${mac}` : `${v}.${payload}.${standardBase64(mac)}`;
    case 'splice': {
      const [, op, om] = other.split('.') as [string, string, string];
      return m.keep === 'payload' ? `${v}.${payload}.${om}` : `${v}.${op}.${mac}`;
    }
    case 'dropDot': return state.replace('.', '');
    case 'upper': return `V1${state.slice(2)}`;
    case 'notString': return (NOT_STRINGS[m.shape] as (s: string) => unknown)(state);
  }
}

/**
 * The same bytes in another base64url spelling: the last character of a part whose length is not a
 * multiple of 4 carries unused low bits; setting one gives a text that decodes to the same bytes. A state
 * is its text (its MAC and its single use are of the text), so this must be refused, never a second spend.
 */
function respell(part: string): string {
  const rest = part.length % 4;
  if (rest === 0) return `${part}A`; // No spare bits: an extra character instead.
  const unused = rest === 2 ? 4 : 2;
  const last = B64URL.indexOf(part[part.length - 1] as string);
  return part.slice(0, -1) + (B64URL[last ^ (1 << (unused - 1))] as string);
}

/** The part in standard base64 with padding (`+`, `/`, `=`): the same bytes, spelled as base64url never is. */
function standardBase64(part: string): string {
  const std = Buffer.from(part, 'base64url').toString('base64');
  return std === part ? `${std}=` : std;
}

/** The state's payload changed and sealed again with the test key: a valid MAC over a claim that is not this call's. */
export function reseal(state: string, r: Reseal, principal: string): string {
  const [, payload] = state.split('.') as [string, string];
  const claim = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  let version = 'v1';
  let body: string | undefined;
  switch (r.kind) {
    case 'expired': claim.e = Date.now() - r.ago; break;
    case 'principal': claim.p = r.p === principal ? `${principal}x` : r.p; break;
    case 'tool': claim.t = r.t; break;
    case 'harness': claim.h = r.h; break;
    case 'digest': claim.a = r.a; break;
    case 'waitKind': Object.assign(claim, { k: r.k, c: crypto.randomUUID(), n: 1, s: 0 }); break;
    case 'badField':
      // `e` set to a number still in the future, or `r` to a string or left out (a state sealed before
      // nonces), would be a valid state: null then.
      claim[r.field] = (r.field === 'e' && typeof r.value === 'number' && r.value > Date.now()) || (r.field === 'r' && (typeof r.value === 'string' || r.value === undefined)) ? null : r.value;
      break;
    case 'body': body = Buffer.from(r.text, 'latin1').toString('base64url'); break;
    case 'version': version = r.v; break;
  }
  const sealed = `${version}.${body ?? Buffer.from(JSON.stringify(claim)).toString('base64url')}`;
  return `${sealed}.${createHmac('sha256', TEST_STATE_KEY).update(sealed, 'utf8').digest('base64url')}`;
}

/** Arguments that are not the ticket's: `valid` ones fit bash's schema and would append to the ledger if run. */
export function otherArgs(t: { readonly tag: string; readonly args: Record<string, unknown> }, c: ArgsChange, run: number): { args: Record<string, unknown>; valid: boolean } {
  const command = t.args.command as string;
  if (c.valid) {
    const changes: Record<string, unknown>[] = [
      { ...t.args, command: `${command} ` }, { ...t.args, command: command.replace(' >> ', ' >>') },
      { ...t.args, command: command.replace(t.tag, `${t.tag}x`) }, { ...t.args, command: command.replace(t.tag, `${t.tag}\u200b`) },
      { ...t.args, command: command.replace(t.tag, `r${run}t99`) }, { ...t.args, timeout: t.args.timeout === 1 ? 2 : 1 },
      t.args.timeout === undefined ? { ...t.args, timeout: 0.5 } : { command },
    ];
    return { args: changes[c.change % changes.length] as Record<string, unknown>, valid: true };
  }
  const invalid: Record<string, unknown>[] = [{ ...t.args, extra: 1 }, { ...t.args, command: '' }, { command: 5 }, {}, { ...t.args, timeout: -1 }, { ...t.args, timeout: 'x' }, { cmd: command }];
  return { args: invalid[c.change % invalid.length] as Record<string, unknown>, valid: false };
}
