// The sealed `requestState` of a 2026-07-28 multi-round-trip: what it binds (tool, arguments digest,
// principal, harness, expiry, a nonce of its own; for a task's model turn or question, the conversation's
// place too) and how a retry's state is checked. Pure: the HMAC, the digest, the nonce and the time come in
// from the runtime (`RoundTrip`), so no key, clock or randomness lives in the core.

import { MAX_REQUEST_STATE_LENGTH } from '../limits.ts';

/**
 * The runtime's keyed primitives. `mac` is HMAC-SHA256 under the node's state key, `digest` SHA-256, both
 * base64url; `same` compares two MACs in constant time; `nonce` is a fresh value for each seal (random
 * base64url from the runtime; a test may count). Synchronous: the core cannot await.
 */
export interface StateSealer {
  mac(data: string): string;
  digest(data: string): string;
  same(a: string, b: string): boolean;
  /**
   * A value no earlier seal got (docs/multi-round-trip.md#single-use): sealed into every state, so two
   * calls with the same claim sealed in the same millisecond are two states with two digests, each
   * spendable once. The runtime's is STATE_NONCE_BYTES random bytes, base64url.
   */
  nonce(): string;
}

/**
 * What a step of the core may use to seal and open states: the sealer (null: no key, so nothing is
 * ever sealed and an `ask` over 2026-07-28 is refused, never sent unsealed) and the wall-clock time
 * (ms since the epoch, so an expiry means the same on every node of a cluster).
 */
export interface RoundTrip {
  readonly sealer: StateSealer | null;
  readonly now: number;
  /** How long a state sealed now stays valid (REQUEST_STATE_TTL_MS unless a test says otherwise). */
  readonly ttlMs: number;
}

/** What a confirmation's state claims: the call it allows, for whom, until when. */
export interface ConfirmationClaim {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The caller as one string (round-trip.ts `principalKey`): a state sealed for `token:alice` never opens for `token:bob`. */
  readonly principal: string;
  readonly harness: string;
}

const VERSION = 'v1';

/**
 * JSON with object keys sorted, so the same arguments digest the same whatever order a client sends
 * their keys in (the digest binds meaning, not spelling).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

interface Payload {
  k: 'confirm';
  t: string;
  a: string;
  p: string;
  h: string;
  e: number;
  /** The seal's nonce (`StateSealer.nonce`); absent only in states sealed before it existed, which still open. */
  r?: string;
}

/**
 * What a model turn's state claims (a 2026-07-28 `harness_task` sampled by its client): a handle on the
 * conversation's turn the answer belongs to, never the history (that is in the store).
 */
export interface TurnHandle {
  readonly conversationId: string;
  /** The model turn (1-based, of the conversation's current run) the client's answer is for. */
  readonly turn: number;
  /** The transcript's last entry when the turn was asked: a retry finding another is stale. */
  readonly seq: number;
}

/** Where a task waits for its client, as the client carries it back. */
export type TaskWait =
  /** The client's model is asked for the turn's reply. */
  | { readonly kind: 'turn'; readonly handle: TurnHandle }
  /** The person is asked whether the next call of the turn may run (an `ask` rule inside the task). */
  | { readonly kind: 'ask'; readonly handle: TurnHandle };

interface TurnPayload {
  /** `turn`: a model turn; `ask`: the person's yes or no for the next tool call of model turn `n`. */
  k: 'turn' | 'ask';
  c: string;
  n: number;
  s: number;
  t: string;
  a: string;
  p: string;
  h: string;
  e: number;
  r?: string;
}

/** Seals a payload with a nonce of its own: no two seals are the same state, whatever else they share. */
function seal(roundTrip: RoundTrip & { sealer: StateSealer }, payload: Payload | TurnPayload): string {
  const body = `${VERSION}.${toBase64Url(JSON.stringify({ ...payload, r: roundTrip.sealer.nonce() }))}`;
  return `${body}.${roundTrip.sealer.mac(body)}`;
}

/**
 * Seals a confirmation: `v1.<payload>.<mac>`, the payload base64url JSON, the MAC over `v1.<payload>`.
 * Two calls with the same claim at the same `now` get two states (the nonce), so each yes is one run.
 */
export function sealConfirmation(roundTrip: RoundTrip & { sealer: StateSealer }, claim: ConfirmationClaim): string {
  return seal(roundTrip, {
    k: 'confirm', t: claim.tool, a: roundTrip.sealer.digest(canonicalJson(claim.args)),
    p: claim.principal, h: claim.harness, e: roundTrip.now + roundTrip.ttlMs,
  });
}

/** The digest a claim's arguments are bound by (kept on a call in flight, so its turns are sealed without the arguments). */
export function argumentsDigest(sealer: StateSealer, args: Record<string, unknown>): string {
  return sealer.digest(canonicalJson(args));
}

/** Seals a model turn of a call whose arguments digest to `argsDigest` (`argumentsDigest`). */
export function sealTurn(roundTrip: RoundTrip & { sealer: StateSealer }, claim: Omit<ConfirmationClaim, 'args'> & { argsDigest: string }, turn: TurnHandle): string {
  return sealWait(roundTrip, claim, { kind: 'turn', handle: turn });
}

/**
 * Seals where a task waits for its client (a model turn, or the person's answer to a call inside it):
 * the handle binds the conversation, the turn and the transcript's last entry, so the answer is for that
 * place and no other; the call it comes back with is bound by tool, arguments digest, principal and harness.
 */
export function sealWait(roundTrip: RoundTrip & { sealer: StateSealer }, claim: Omit<ConfirmationClaim, 'args'> & { argsDigest: string }, wait: TaskWait): string {
  const turn = wait.handle;
  return seal(roundTrip, {
    k: wait.kind, c: turn.conversationId, n: turn.turn, s: turn.seq, t: claim.tool, a: claim.argsDigest,
    p: claim.principal, h: claim.harness, e: roundTrip.now + roundTrip.ttlMs,
  });
}

/**
 * Checks a retry's `requestState` against the call it comes with. null: it is this server's seal, for
 * this call, this principal and this harness, and not expired. Otherwise why not, for a -32602 message.
 * The MAC is checked before anything in the payload is read, so a forged payload is never interpreted.
 */
export function openConfirmation(roundTrip: RoundTrip, state: unknown, claim: ConfirmationClaim): string | null {
  const opened = openState(roundTrip, state, claim);
  if (typeof opened === 'string') return opened;
  return opened.k === 'confirm' ? null : 'requestState is a task\'s wait for its client, not a confirmation of this call';
}

/**
 * A confirmation's state, opened: what its single use is recorded by (docs/multi-round-trip.md#single-use).
 * `digest`: SHA-256 of the state exactly as sent — the MAC admits one spelling of each sealed payload, so
 * the same confirmation always has the same digest, states sealed before single use existed included.
 * `expiresAt`: the state's sealed expiry, until which its use must be remembered.
 */
export interface OpenedConfirmation {
  readonly kind: 'confirm';
  readonly digest: string;
  readonly expiresAt: number;
}

/**
 * Opens a retry's state of any kind: why it is refused (a -32602 message), a confirmation (with what its
 * use is recorded by), or where in a task it answers (a model turn, or the person's answer to a call inside the task).
 */
export function openRetryState(roundTrip: RoundTrip, state: unknown, claim: ConfirmationClaim): string | OpenedConfirmation | TaskWait {
  const opened = openState(roundTrip, state, claim);
  if (typeof opened === 'string') return opened;
  // A state that opened was sealed by this sealer and is a string (openState checked both).
  if (opened.k === 'confirm') return { kind: 'confirm', digest: roundTrip.sealer?.digest(state as string) ?? '', expiresAt: opened.e };
  return { kind: opened.k, handle: { conversationId: opened.c, turn: opened.n, seq: opened.s } };
}

function openState(roundTrip: RoundTrip, state: unknown, claim: ConfirmationClaim): string | Payload | TurnPayload {
  if (typeof state !== 'string') return 'requestState must be the string this server sent';
  if (state.length > MAX_REQUEST_STATE_LENGTH) return `requestState is ${state.length} characters, more than MAX_REQUEST_STATE_LENGTH (${MAX_REQUEST_STATE_LENGTH}); send back the state exactly as this server sent it`;
  if (roundTrip.sealer === null) return 'this server has no state key, so it cannot accept a requestState';
  const parts = state.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION || !BASE64URL.test(parts[1] ?? '') || !BASE64URL.test(parts[2] ?? '')) {
    return 'requestState is malformed (not a state this server sealed); send back the state exactly as it was sent, or call the tool again without one';
  }
  const body = `${parts[0]}.${parts[1]}`;
  if (!roundTrip.sealer.same(roundTrip.sealer.mac(body), parts[2] as string)) {
    return 'requestState failed verification (altered, forged, or sealed with another key); call the tool again without it to be asked afresh';
  }
  const payload = readPayload(parts[1] as string);
  if (payload === null) return 'requestState is malformed (its sealed content is unreadable)';
  if (payload.e <= roundTrip.now) return 'requestState has expired; call the tool again without it to be asked afresh';
  if (payload.p !== claim.principal) return 'requestState was sealed for another caller';
  if (payload.t !== claim.tool) return `requestState was sealed for another tool (${payload.t}), not ${claim.tool}`;
  if (payload.h !== claim.harness) return 'requestState was sealed under another harness';
  if (!roundTrip.sealer.same(payload.a, roundTrip.sealer.digest(canonicalJson(claim.args)))) {
    return payload.k === 'confirm'
      ? 'requestState was sealed for other arguments: the person confirmed a different call'
      : `requestState was sealed for other arguments: retry the same call the ${payload.k === 'ask' ? 'question' : 'model turn'} was asked for`;
  }
  return payload;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function readPayload(encoded: string): Payload | TurnPayload | null {
  const text = fromBase64Url(encoded);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // Sealed by this key yet not JSON: only a key shared with something else could do that. Said as malformed.
    void err;
    return null;
  }
  const v = value as Partial<Payload | TurnPayload> | null;
  if (typeof v !== 'object' || v === null || (v.k !== 'confirm' && v.k !== 'turn' && v.k !== 'ask') || typeof v.t !== 'string' || typeof v.a !== 'string'
    || typeof v.p !== 'string' || typeof v.h !== 'string' || typeof v.e !== 'number') return null;
  if (v.r !== undefined && typeof v.r !== 'string') return null;
  if (v.k === 'confirm') return v as Payload;
  const t = v as Partial<TurnPayload>;
  if (typeof t.c !== 'string' || !Number.isSafeInteger(t.n) || !Number.isSafeInteger(t.s)) return null;
  return t as TurnPayload;
}

/** UTF-8 text as base64url without padding (the core has no Buffer). */
export function toBase64Url(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The UTF-8 text of a base64url string, or null when it is not base64url of UTF-8. */
export function fromBase64Url(encoded: string): string | null {
  if (encoded.length % 4 === 1) return null;
  let binary: string;
  try {
    binary = atob(encoded.replace(/-/g, '+').replace(/_/g, '/'));
  } catch (err) {
    void err; // not base64: the caller says "malformed"
    return null;
  }
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    void err; // not UTF-8: the caller says "malformed"
    return null;
  }
}
