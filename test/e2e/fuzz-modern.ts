// The 2026-07-28 half of the fuzz generator: stateless requests whose `params._meta` carries the version,
// client capabilities and client info — valid ones, and ones with unknown or future versions, wrong
// types, missing keys, huge or deeply nested capabilities and client info, Object.prototype's names as
// keys — for `server/discover`, `subscriptions/listen`, the Tasks extension's `tasks/*` with random task
// ids, and `tools/call` of the read-only tools with random, forged, truncated or oversized
// `requestState` and `inputResponses`; and, for Streamable HTTP, the `MCP-Protocol-Version`, `Mcp-Method`
// and `Mcp-Name` headers that repeat the body, right or wrong.
// Never `bash`, `write`, `edit` or `harness_task`: a fuzz run must not run commands or change the workspace.

import { deep, PATHS, PROTOTYPE_NAMES, putOwn, randomId, randomString, randomValue, READ_TOOLS, type Rng } from './fuzz-random.ts';

export const MODERN_VERSION = '2026-07-28';
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const TASKS = 'io.modelcontextprotocol/tasks';

/** The `_meta` of a well-formed 2026-07-28 request (the fresh client after a run uses it too). */
export const modernMeta = (capabilities: object = {}): Record<string, unknown> => ({
  [META_VERSION]: MODERN_VERSION, [META_CAPABILITIES]: capabilities, [META_CLIENT_INFO]: { name: 'fuzz-modern', version: '1' },
});

const MODERN_METHODS = [
  'server/discover', 'tools/list', 'tools/call', 'tools/call', 'tools/call', 'prompts/list', 'prompts/get', 'resources/list',
  'resources/read', 'resources/templates/list', 'completion/complete', 'subscriptions/listen', 'tasks/get', 'tasks/update',
  'tasks/cancel', 'tasks/result', 'initialize', 'ping', 'logging/setLevel', 'resources/subscribe',
];
const CAPABILITIES: readonly object[] = [
  {}, { extensions: { [TASKS]: {} } }, { elicitation: {} }, { elicitation: { form: {} }, sampling: {} }, { elicitation: { url: {} } },
  { extensions: { [TASKS]: {} }, elicitation: { form: {} } }, { roots: { listChanged: true } }, { extensions: { [TASKS]: true } },
];
const BAD_VERSIONS: readonly unknown[] = [
  '2026-07-29', '2099-01-01', '2025-06-18', '2025-11-25', '2026-07-28 ', ' 2026-07-28', '2026-7-28', '', 20260728, null, true, [], {}, ['2026-07-28'],
  '__proto__', 'toString', 'x'.repeat(5000),
];
const LOG_LEVELS: readonly unknown[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency', 'trace', 'toString', 3, null, {}];

/** A string that a 2026-07-28 request's id is: unique in a run, so its answer can be waited for. */
export type ModernId = `modern-${number}`;

/** What a generated modern request expects: an answer carrying `id` (for a listen: its acknowledgment, or an error). */
export interface ModernExpectation {
  readonly id: ModernId;
  readonly method: string;
  readonly listen: boolean;
  /** The server sorts it into the 2026-07-28 era (its `_meta` names a version, or it is `server/discover`). */
  readonly modern: boolean;
  /** Over HTTP: headers that surely disagree with the body (for a modern request sent without a session, a 400 with -32020). */
  readonly headersMismatch: boolean;
}

export interface ModernOptions {
  /** Open listens are cancelled later in the run by `notifications/cancelled` (stdio, WebSocket); else the test closes them. */
  readonly cancelListens: boolean;
  /** Generate `subscriptions/listen` at all (over HTTP, never inside a batch: its POST would never end). */
  readonly listens: boolean;
}

/** The per-run state of the modern generator: the next id, and the listens a later message cancels. */
export class ModernFuzz {
  #next = 0;
  readonly #openListens: string[] = [];
  constructor(readonly rng: Rng, readonly opts: ModernOptions) {}

  /** A cancellation of one open listen (and its id: it may go unanswered), if any is open and the dice say so. */
  cancellation(): { value: unknown; id: string } | undefined {
    const { rng } = this;
    if (!this.opts.cancelListens || this.#openListens.length === 0 || !rng.chance(0.15)) return undefined;
    const [id] = this.#openListens.splice(rng.int(this.#openListens.length), 1) as [string];
    return { value: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'fuzz' } }, id };
  }

  /** Cancellations of every listen still open, as a host sends before it closes the connection. */
  cancelAll(): { value: unknown; id: string }[] {
    return this.#openListens.splice(0).map((id) => ({ value: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'fuzz: done' } }, id }));
  }

  /**
   * A 2026-07-28 request, valid or broken in its `_meta`, method, params or id; with the HTTP headers its
   * POST carries. `expect` is set when the request's id is one the server must echo (a modern id, a
   * JSON-RPC envelope the server can read); `nested`: inside a batch (no listen there when it may not).
   */
  request(nested: boolean): { value: Record<string, unknown>; headers: Record<string, string>; expect?: ModernExpectation } {
    const { rng } = this;
    let method = rng.chance(0.95) ? rng.pick(MODERN_METHODS) : rng.chance(0.5) ? rng.pick(PROTOTYPE_NAMES) : randomString(rng);
    if (method === 'subscriptions/listen' && (!this.opts.listens || (nested && !this.opts.cancelListens))) method = 'server/discover';
    const id: ModernId = `modern-${this.#next++}`;
    const wellFormedId = rng.chance(0.95);
    const params = this.#params(method);
    const value: Record<string, unknown> = { jsonrpc: '2.0', id: wellFormedId ? id : randomId(this.rng), method, params };
    if (rng.chance(0.02)) value.jsonrpc = rng.pick(['1.0', 2, null]);
    const { headers, mismatch } = this.#headers(method, params);
    const listen = method === 'subscriptions/listen';
    if (listen && wellFormedId && this.opts.cancelListens) this.#openListens.push(id);
    const meta = params._meta;
    // An empty method makes no request at all (-32600 before any era is read).
    const modern = method === 'server/discover' || (method !== '' && typeof meta === 'object' && meta !== null && !Array.isArray(meta) && Object.hasOwn(meta, META_VERSION));
    const expect = wellFormedId && value.jsonrpc === '2.0' ? { id, method, listen, modern, headersMismatch: mismatch } : undefined;
    return expect === undefined ? { value, headers } : { value, headers, expect };
  }

  #params(method: string): Record<string, unknown> {
    const { rng } = this;
    const params: Record<string, unknown> = {};
    switch (method) {
      case 'tools/call': {
        params.name = rng.chance(0.92) ? rng.pick(READ_TOOLS) : rng.pick([...PROTOTYPE_NAMES, randomString(rng), '']);
        params.arguments = rng.chance(0.85)
          ? { path: rng.pick(PATHS), pattern: rng.pick(['greet', 'a', '', '(a+)+$']), ...(rng.chance(0.3) ? { offset: rng.pick([1, -1, 1e12, 'x']) } : {}) }
          : randomValue(rng, 4);
        if (rng.chance(0.45)) params.requestState = this.#requestState();
        if (rng.chance(0.4)) params.inputResponses = this.#inputResponses();
        break;
      }
      case 'subscriptions/listen':
        params.notifications = rng.chance(0.8) ? {
          ...(rng.chance(0.6) ? { resourceSubscriptions: Array.from({ length: rng.pick([0, 1, 3, 65]) }, () => rng.pick(['superpi://conversation/x/transcript', 'superpi://workspace', randomString(rng)])) } : {}),
          ...(rng.chance(0.5) ? { taskIds: Array.from({ length: rng.pick([0, 1, 2, 65]) }, () => this.#taskId()) } : {}),
        } : randomValue(rng, 3);
        break;
      case 'tasks/get': case 'tasks/cancel': case 'tasks/result':
        if (rng.chance(0.9)) params.taskId = this.#taskId();
        break;
      case 'tasks/update':
        if (rng.chance(0.9)) params.taskId = this.#taskId();
        if (rng.chance(0.85)) params.inputResponses = this.#inputResponses();
        break;
      case 'resources/read':
        params.uri = rng.pick(['superpi://workspace', 'superpi://loadout', 'superpi://conversation/x/transcript', 'file:///etc/passwd', randomString(rng)]);
        break;
      case 'prompts/get':
        params.name = rng.pick(['super-pi-code', 'plan_architecture', randomString(rng), ...PROTOTYPE_NAMES]);
        params.arguments = randomValue(rng, 2);
        break;
      case 'completion/complete':
        params.ref = { type: 'ref/resource', uri: 'superpi://workspace' };
        params.argument = { name: 'path', value: rng.pick(PATHS) };
        break;
      case 'resources/list': case 'tools/list': case 'prompts/list':
        if (rng.chance(0.3)) params.cursor = rng.pick([randomString(rng), 'x'.repeat(3000), 5, null]);
        break;
      default:
        if (rng.chance(0.3)) Object.assign(params, randomValue(rng, 3));
    }
    if (rng.chance(0.03)) putOwn(params, rng.pick(PROTOTYPE_NAMES), randomValue(rng, 2));
    const meta = this.#meta();
    if (meta !== undefined) params._meta = meta;
    return params;
  }

  /** `_meta`: mostly well formed, else with one thing wrong (or several). */
  #meta(): unknown {
    const { rng } = this;
    const r = rng.int(100);
    if (r < 3) return undefined;
    if (r < 6) return rng.pick([[], 'x', 5, null, [modernMeta()]]);
    const meta: Record<string, unknown> = { ...modernMeta(rng.pick(CAPABILITIES)) };
    if (rng.chance(0.3)) meta[META_CLIENT_INFO] = { name: randomString(rng), version: randomString(rng, 8), ...(rng.chance(0.3) ? { title: randomString(rng) } : {}) };
    if (rng.chance(0.15)) meta[META_LOG_LEVEL] = rng.pick(LOG_LEVELS);
    if (rng.chance(0.1)) meta.progressToken = randomId(rng);
    if (r < 62) return meta;
    // One broken key (sometimes two).
    for (let n = rng.chance(0.8) ? 1 : 2; n > 0; n--) {
      switch (rng.int(12)) {
        case 0: meta[META_VERSION] = rng.pick(BAD_VERSIONS); break;
        case 1: delete meta[META_VERSION]; break;
        case 2: delete meta[META_CAPABILITIES]; break;
        case 3: meta[META_CAPABILITIES] = rng.pick([[], 'all', 1, null, true, [{}]]); break;
        case 4: meta[META_CAPABILITIES] = this.#huge(); break;
        case 5: meta[META_CAPABILITIES] = { extensions: deep(rng.pick([10, 40, 63, 64, 70, 200])) }; break;
        case 6: meta[META_CLIENT_INFO] = rng.pick([null, 'fuzz', [], 5, { name: 'x'.repeat(300), version: '1' }, { name: 5, version: 1 }, { name: 'n' }, deep(rng.pick([5, 70]))]); break;
        case 7: meta[META_CLIENT_INFO] = { name: 'fuzz', version: '1', title: 'y'.repeat(rng.pick([10, 257, 20_000])), icons: randomValue(rng, 4) }; break;
        case 8: {
          // Object.prototype's names as keys where the server reads own keys only.
          const target = rng.pick([meta, meta[META_CAPABILITIES], meta[META_CLIENT_INFO]]);
          if (typeof target === 'object' && target !== null && !Array.isArray(target)) putOwn(target as Record<string, unknown>, rng.pick(PROTOTYPE_NAMES), randomValue(rng, 2));
          break;
        }
        case 9: {
          const caps: Record<string, unknown> = {};
          putOwn(caps, rng.pick(['__proto__', 'constructor', 'extensions']), rng.chance(0.5) ? { [TASKS]: {} } : randomValue(rng, 3));
          putOwn(caps, rng.pick(PROTOTYPE_NAMES), randomValue(rng, 2));
          meta[META_CAPABILITIES] = caps;
          break;
        }
        case 10: meta[META_LOG_LEVEL] = rng.pick(LOG_LEVELS); break;
        default: putOwn(meta, rng.pick([META_VERSION, META_CAPABILITIES, META_CLIENT_INFO]).toUpperCase(), randomValue(rng, 2));
      }
    }
    return meta;
  }

  /** Capabilities just under or well over MAX_CLIENT_CAPABILITIES_BYTES (64 KiB), in one string or many keys. */
  #huge(): unknown {
    const { rng } = this;
    const size = rng.pick([60_000, 66_000, 100_000]);
    if (rng.chance(0.5)) return { experimental: { blob: 'c'.repeat(size) } };
    const o: Record<string, unknown> = {};
    for (let i = 0; i < size / 20; i++) o[`k${i}`] = 'vvvvvvvvv';
    return o;
  }

  #taskId(): unknown {
    const { rng } = this;
    return rng.pick([
      () => crypto.randomUUID(), () => randomString(rng, 40), () => 'x'.repeat(rng.pick([128, 129, 5000])), () => '', () => rng.int(100), () => null,
      () => rng.pick(PROTOTYPE_NAMES), () => '../../etc/passwd', () => `${crypto.randomUUID()}\u0000`, () => ({ id: 'x' }),
    ])();
  }

  /** A `requestState` this server never sealed: random, shaped like `v1.<payload>.<mac>`, cut, oversized, or not a string. */
  #requestState(): unknown {
    const { rng } = this;
    const b64 = (n: number) => Buffer.from(Array.from({ length: n }, () => rng.int(256))).toString('base64url');
    const shaped = `v1.${Buffer.from(JSON.stringify({ k: rng.pick(['confirm', 'turn', 'ask', '__proto__']), t: rng.pick(READ_TOOLS), a: b64(32), p: 'local', h: 'super-pi-code', e: rng.pick([0, Date.now() + 60_000, 1e300]), r: b64(16) })).toString('base64url')}.${b64(32)}`;
    return rng.pick([
      () => shaped, () => shaped.slice(0, rng.int(shaped.length)), () => `${shaped}x`, () => randomString(rng, 200), () => 'v1..', () => 'v1.e30.',
      () => `v1.${'A'.repeat(rng.pick([4093, 4096, 50_000]))}`, () => '', () => rng.int(1000), () => null, () => ({ state: shaped }), () => [shaped],
      () => `v2.${b64(40)}.${b64(32)}`, () => `v1.${Buffer.from('{"__proto__":{"k":"confirm"}}').toString('base64url')}.${b64(32)}`,
    ])();
  }

  /** `inputResponses`: answers to keys the server may or may not have asked, of every shape. */
  #inputResponses(): unknown {
    const { rng } = this;
    if (rng.chance(0.15)) return rng.pick([[], 'yes', null, 5, true]);
    const responses: Record<string, unknown> = {};
    const keys = rng.chance(0.1) ? Array.from({ length: 20 }, (_, i) => `k${i}`) : Array.from({ length: rng.int(3) + 1 }, () => rng.pick(['confirm', 'sample', 'sample-1', 'confirm-2', ...PROTOTYPE_NAMES, randomString(rng, 12)]));
    for (const key of keys) {
      putOwn(responses, key, rng.pick([
        () => ({ action: rng.pick(['accept', 'decline', 'cancel', 'maybe']), content: rng.chance(0.7) ? { allow: rng.pick([true, false, 'yes', null]) } : randomValue(rng, 2) }),
        () => ({ role: 'assistant', content: { type: 'text', text: randomString(rng) }, model: 'fuzz', stopReason: 'endTurn' }),
        () => randomValue(rng, 3), () => null, () => 'accept', () => deep(rng.pick([20, 70])),
      ])());
    }
    return responses;
  }

  /**
   * The headers of the request's POST: mostly the ones its body implies, else one missing, wrong, in
   * another case or padded, or `Mcp-Name` wrapped as `=?base64?…?=` (valid or not). `mismatch`: the
   * headers surely disagree with the body (the version or method header missing or another value).
   */
  #headers(method: string, params: Record<string, unknown>): { headers: Record<string, string>; mismatch: boolean } {
    const { rng } = this;
    const meta = params._meta;
    const declared = typeof meta === 'object' && meta !== null && !Array.isArray(meta) && Object.hasOwn(meta, META_VERSION) ? (meta as Record<string, unknown>)[META_VERSION] : undefined;
    const headers: Record<string, string> = { 'mcp-protocol-version': typeof declared === 'string' && isHeaderSafe(declared) && declared.trim() === declared ? declared : MODERN_VERSION, 'mcp-method': isHeaderSafe(method) ? method : 'x' };
    const nameField = method === 'tools/call' || method === 'prompts/get' ? 'name' : method === 'resources/read' ? 'uri' : method.startsWith('tasks/') ? 'taskId' : undefined;
    const name = nameField === undefined ? undefined : params[nameField];
    if (typeof name === 'string') headers['mcp-name'] = isHeaderSafe(name) && name.trim() === name ? name : `=?base64?${Buffer.from(name).toString('base64')}?=`;
    if (rng.chance(0.25)) {
      switch (rng.int(9)) {
        case 0: delete headers['mcp-protocol-version']; break;
        case 1: headers['mcp-protocol-version'] = rng.pick(['2025-06-18', '2026-07-29', 'garbage', '']); break;
        case 2: delete headers['mcp-method']; break;
        case 3: headers['mcp-method'] = rng.pick(['tools/list', 'tools/call', 'server/discover', 'TOOLS/CALL', '']); break;
        case 4: headers['mcp-method'] = ` ${headers['mcp-method']}\t`; break;
        case 5: delete headers['mcp-name']; break;
        case 6: headers['mcp-name'] = rng.pick(['bash', 'write', 'read', 'ls', '', 'toString', 'x'.repeat(2000)]); break;
        case 7: headers['mcp-name'] = rng.pick(['=?base64?!!!?=', '=?base64?/w==?=', `=?base64?${Buffer.from('read').toString('base64')}?=`, '=?base64??=', '=?BASE64?cmVhZA==?=']); break;
        default: headers['mcp-protocol-version'] = ` ${headers['mcp-protocol-version'] ?? MODERN_VERSION} `;
      }
    }
    // What surely disagrees, whatever else the server checks: the version or the method header (trimmed).
    const version = headers['mcp-protocol-version']?.trim();
    const named = headers['mcp-method']?.trim();
    const mismatch = version === undefined || (declared !== undefined && version !== declared) || named === undefined || named !== method;
    return { headers, mismatch };
  }
}

/** fetch refuses header values outside visible ASCII and tabs/spaces (a ByteString without controls). */
function isHeaderSafe(v: string): boolean {
  return /^[\x20-\x7e]*$/.test(v);
}

/** How long a run waits, after its last message, for the answers still owed to its modern requests. */
const OWED_DEADLINE_MS = 30_000;

/**
 * The answers a connection owes its 2026-07-28 requests: each is answered once, by a message echoing its
 * id that is a result (a modern one says its `resultType`) or a JSON-RPC error; a listen by its
 * acknowledgment or an error. A listen the run cancelled is owed nothing.
 */
export class ModernAnswers {
  readonly #owed = new Map<string, ModernExpectation>();
  readonly #answered = new Set<string>();
  /** Answers of the wrong shape, or a second answer to one id. */
  readonly problems: string[] = [];
  /** What the answers were: `result`, `error`, `acknowledged` (a listen): a run asserts it saw each. */
  readonly outcomes = new Map<'result' | 'error' | 'acknowledged', number>();

  /** Books what a case sent owes (or no longer owes). */
  sent(c: { readonly expect?: ModernExpectation; readonly cancels?: string }): void {
    if (c.expect !== undefined) this.#owed.set(c.expect.id, c.expect);
    if (c.cancels !== undefined) this.#owed.delete(c.cancels);
  }

  /** `id` was refused by the transport before any core read it (an HTTP status for the POST's headers): owed nothing more. */
  refused(id: string): void {
    this.#owed.delete(id);
  }

  /** Reads one message from the server. */
  seen(m: unknown): void {
    if (typeof m !== 'object' || m === null) return;
    const msg = m as { id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> }; result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (msg.method === 'notifications/subscriptions/acknowledged') {
      const id = msg.params?._meta?.[META_SUBSCRIPTION_ID];
      if (typeof id !== 'string') return;
      this.#owed.delete(id);
      // Counted even when the run had already sent its cancellation: the server had not read it yet.
      if (id.startsWith('modern-')) this.#count('acknowledged');
      return;
    }
    if (msg.method !== undefined || typeof msg.id !== 'string' || !msg.id.startsWith('modern-')) return;
    const shown = JSON.stringify(m).slice(0, 300);
    if (this.#answered.has(msg.id) && !this.#owed.has(msg.id)) this.problems.push(`a second answer to ${msg.id}: ${shown}`);
    this.#answered.add(msg.id);
    const expected = this.#owed.get(msg.id);
    this.#owed.delete(msg.id);
    this.#count(msg.error !== undefined ? 'error' : 'result');
    if (msg.error !== undefined) {
      if (typeof msg.error.code !== 'number' || typeof msg.error.message !== 'string' || msg.result !== undefined) this.problems.push(`a malformed error: ${shown}`);
    } else if (typeof msg.result !== 'object' || msg.result === null || Array.isArray(msg.result)) {
      this.problems.push(`neither a result object nor an error: ${shown}`);
    } else if (expected?.modern === true && typeof (msg.result as { resultType?: unknown }).resultType !== 'string') {
      this.problems.push(`a 2026-07-28 result without resultType: ${shown}`);
    }
  }

  #count(outcome: 'result' | 'error' | 'acknowledged'): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
  }

  /** Waits until nothing is owed (or the deadline passed): what is still owed then, each with its method. */
  async settled(): Promise<string[]> {
    const deadline = Date.now() + OWED_DEADLINE_MS;
    while (this.#owed.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return [...this.#owed.values()].map((e) => `${e.id} (${e.method})`);
  }
}
