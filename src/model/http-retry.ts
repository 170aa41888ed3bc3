// POSTs JSON to a model API: a per-attempt timeout joined with the caller's AbortSignal, retries with
// exponential backoff and jitter on 429, 408, 5xx, network failures and timeouts, and failures as ModelError.

import { isJsonObject } from './json-object.ts';
import { ModelError } from './types.ts';
import { DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT_MS, MAX_RESPONSE_BYTES } from '../limits.ts';

/** First backoff; it doubles each retry (with jitter: a wait is between half and all of it). */
export const DEFAULT_BACKOFF_BASE_MS = 500;
/** Longest wait between two attempts, `Retry-After` included: a server asking for an hour gets this. */
export const DEFAULT_MAX_BACKOFF_MS = 30_000;
/** Bytes of an error response read to find its message; the rest is discarded unread. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Characters of the server's error message kept in a ModelError. */
export const MAX_ERROR_DETAIL_CHARS = 500;

export interface RetryPolicy {
  timeoutMs: number;
  maxRetries: number;
  backoffBaseMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
  maxRetries: DEFAULT_MAX_RETRIES,
  backoffBaseMs: DEFAULT_BACKOFF_BASE_MS,
  maxBackoffMs: DEFAULT_MAX_BACKOFF_MS,
});

export interface JsonPost {
  /** Named in every error. */
  provider: string;
  url: string;
  /** Added to `content-type` and `accept`, both JSON. */
  headers: Record<string, string>;
  body: unknown;
  signal?: AbortSignal;
  /** Strings scrubbed from every error message: the API key, which some servers echo back in their errors. */
  secrets?: readonly string[];
  /** Overrides of DEFAULT_RETRY_POLICY. */
  policy?: Partial<RetryPolicy>;
  /** Awaited before each attempt (the caller's budget of model calls); its rejection ends the call. */
  admit?: (signal: AbortSignal) => Promise<void>;
}

/** The parsed JSON body of the first successful (2xx) response. */
export async function postJson(req: JsonPost): Promise<unknown> {
  const policy = resolveRetryPolicy(req.provider, req.policy);
  const where = describeEndpoint(req.provider, req.url);
  // The URL's own secrets too: fetch's errors quote the whole URL (one with credentials is refused, quoted).
  req = { ...req, secrets: [...(req.secrets ?? []), ...secretsOfUrl(req.url)] };
  const init: RequestInit = {
    method: 'POST',
    // A redirect is not followed: the request carries the API key (Anthropic's `x-api-key`, which fetch
    // keeps across origins) and the conversation, workspace content included, and would take both wherever
    // the redirect names. It is answered as an error naming where it led (isRedirect below).
    redirect: 'manual',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...req.headers },
    body: JSON.stringify(req.body),
  };
  for (let attempt = 0; ; attempt++) {
    if (req.signal?.aborted) throw abortedError(req.provider, where, req.signal);
    if (req.admit) await admitted(req, where);
    const outcome = await attemptOnce(req, init, policy, where);
    if (outcome.ok) return outcome.value;
    const lastAttempt = !outcome.retryable || attempt >= policy.maxRetries;
    if (lastAttempt) {
      const context = attempt === 0 ? where : `${where}; gave up after ${attempt + 1} attempts`;
      throw new ModelError(req.provider, scrubSecrets(`${outcome.detail} (${context})`, req.secrets), {
        status: outcome.status,
        retryable: outcome.retryable,
        cause: outcome.cause,
      });
    }
    await sleep(backoffMs(attempt, outcome.retryAfterMs, policy), req.signal, () => abortedError(req.provider, where, req.signal));
  }
}

/** Waits for the caller's budget to allow one more attempt; an abort while waiting is reported as any other. */
async function admitted(req: JsonPost, where: string): Promise<void> {
  const signal = req.signal ?? new AbortController().signal;
  try {
    await req.admit?.(signal);
  } catch (err) {
    if (signal.aborted) throw abortedError(req.provider, where, signal);
    throw err;
  }
}

/** Merges overrides into the defaults; a bad field is reported by name. */
export function resolveRetryPolicy(provider: string, overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...overrides };
  const bad = (field: keyof RetryPolicy, want: string): ModelError =>
    new ModelError(provider, `retry policy: ${field} must be ${want}, got ${String(policy[field])}`);
  if (!(Number.isFinite(policy.timeoutMs) && policy.timeoutMs > 0)) throw bad('timeoutMs', 'a positive number of milliseconds');
  if (!(Number.isInteger(policy.maxRetries) && policy.maxRetries >= 0)) throw bad('maxRetries', 'a non-negative integer');
  if (!(Number.isFinite(policy.backoffBaseMs) && policy.backoffBaseMs >= 0)) throw bad('backoffBaseMs', 'a non-negative number');
  if (!(Number.isFinite(policy.maxBackoffMs) && policy.maxBackoffMs >= 0)) throw bad('maxBackoffMs', 'a non-negative number');
  return policy;
}

/** `Retry-After` in milliseconds (`retry-after-ms`, seconds, or an HTTP date), or undefined when absent or unreadable. */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Wait before retry `attempt + 1`: the server's Retry-After when given, else doubling backoff with jitter; capped. */
export function backoffMs(attempt: number, retryAfterMs: number | undefined, policy: RetryPolicy, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxBackoffMs);
  const ceiling = Math.min(policy.backoffBaseMs * 2 ** attempt, policy.maxBackoffMs);
  // Half fixed, half random: clients that failed together do not retry together, yet each still waits.
  return ceiling / 2 + random() * (ceiling / 2);
}

/** 429 (rate limit), 408 (the server timed out waiting for us) and every 5xx may succeed later; other 4xx will not. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

type AttemptOutcome =
  | { ok: true; value: unknown }
  | { ok: false; detail: string; retryable: boolean; status?: number; retryAfterMs?: number; cause?: unknown };

async function attemptOnce(req: JsonPost, init: RequestInit, policy: RetryPolicy, where: string): Promise<AttemptOutcome> {
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  let response: Response;
  let text: string;
  try {
    response = await fetch(req.url, { ...init, signal });
    text = await readText(response, response.ok ? MAX_RESPONSE_BYTES : MAX_ERROR_BODY_BYTES, response.ok);
  } catch (err) {
    if (req.signal?.aborted) throw abortedError(req.provider, where, req.signal);
    if (err instanceof ResponseTooLarge) {
      throw new ModelError(req.provider, `response larger than ${MAX_RESPONSE_BYTES} bytes (${where})`, { cause: err });
    }
    const detail = timeout.aborted ? `no complete response within ${policy.timeoutMs} ms` : `network error: ${scrubSecrets(describeNetworkError(err), req.secrets)}`;
    return { ok: false, detail, retryable: true, cause: err };
  }
  if (isRedirect(response.status)) {
    const to = redirectTarget(response.headers.get('location'), req.url);
    return {
      ok: false,
      detail: scrubSecrets(`the endpoint answered with a redirect${to === undefined ? '' : ` to ${to}`}, which is not followed (the request carries the API key and the conversation): configure the URL it leads to, if that is the endpoint`, req.secrets),
      status: response.status,
      retryable: false,
    };
  }
  if (!response.ok) {
    return {
      ok: false,
      detail: errorDetail(text, response.statusText, req.secrets),
      status: response.status,
      retryable: isRetryableStatus(response.status),
      retryAfterMs: parseRetryAfter(response.headers),
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const detail = `response is not JSON: ${truncate(scrubSecrets(text.trim(), req.secrets))} (${where})`;
    throw new ModelError(req.provider, detail, { status: response.status, cause: err });
  }
}

class ResponseTooLarge extends Error {
  override readonly name = 'ResponseTooLarge';
}

/** Reads at most `limit` bytes; past it, a success is an error (`strict`) and an error body is cut off. */
async function readText(response: Response, limit: number, strict: boolean): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > limit) {
      await reader.cancel();
      if (strict) throw new ResponseTooLarge(`more than ${limit} bytes`);
      text += decoder.decode(value.subarray(0, value.byteLength - (bytes - limit)), { stream: true });
      break;
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

/**
 * The server's own error message when the body is JSON of a known shape, else the body itself; secrets are
 * scrubbed before truncating, so a key cut in half at the limit cannot leave its prefix behind.
 */
function errorDetail(body: string, statusText: string, secrets: readonly string[] = []): string {
  const trimmed = body.trim();
  if (trimmed === '') return statusText || 'empty response body';
  return truncate(scrubSecrets(messageFromJson(trimmed) ?? trimmed.replace(/\s+/g, ' '), secrets));
}

/** OpenAI `{error: {message}}`, Anthropic `{type: 'error', error: {type, message}}`, and the common `{error}`, `{message}`, `{detail}`. */
function messageFromJson(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (an HTML page from a proxy, plain text): the caller shows the text itself.
    return undefined;
  }
  if (!isJsonObject(body)) return undefined;
  const error = body.error;
  if (isJsonObject(error) && typeof error.message === 'string') {
    return typeof error.type === 'string' ? `${error.type}: ${error.message}` : error.message;
  }
  for (const candidate of [error, body.message, body.detail]) if (typeof candidate === 'string') return candidate;
  return undefined;
}

function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // undici reports "fetch failed" and puts the reason (ECONNREFUSED, a TLS failure…) in `cause`.
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

/**
 * What of a URL may be a key: its user name and password, and its query string; longest first, so that a
 * part inside another is not redacted first and leave the rest of the longer one behind.
 */
function secretsOfUrl(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // describeEndpoint has refused this URL already.
    return [];
  }
  const raw = [parsed.username, parsed.password, parsed.search, parsed.search.slice(1)];
  const parts = [...raw, ...raw.map(decoded)];
  return [...new Set(parts.filter((p) => p.length > 1))].sort((a, b) => b.length - a.length);
}

/** A URL part as an error may quote it, decoded; as it is when it does not decode. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** `POST origin/path`: no query string and no credentials, which is where keys in URLs live. */
function describeEndpoint(provider: string, url: string): string {
  try {
    const parsed = new URL(url);
    return `POST ${parsed.origin}${parsed.pathname}`;
  } catch (err) {
    throw new ModelError(provider, 'the endpoint URL is not a valid URL', { cause: err });
  }
}

/** 3xx with somewhere to go (304 and the like have none, but a POST gets none of them either). */
function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}

/** Where a redirect leads, as `origin/path` (no query string, no credentials), or undefined when it names nowhere readable. */
function redirectTarget(location: string | null, base: string): string | undefined {
  if (location === null) return undefined;
  try {
    const to = new URL(location, base);
    return `${to.origin}${to.pathname}`;
  } catch {
    // An unreadable Location is still a redirect; the error says so without naming it.
    return undefined;
  }
}

function abortedError(provider: string, where: string, signal: AbortSignal | undefined): ModelError {
  return new ModelError(provider, `request aborted by the caller (${where})`, { cause: signal?.reason });
}

/** Resolves after `ms`, or rejects with `onAbort()` as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined, onAbort: () => Error): Promise<void> {
  return new Promise((resolve, reject) => {
    const abort = (): void => {
      clearTimeout(timer);
      reject(onAbort());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret !== '') out = out.split(secret).join('[redacted]');
  return out;
}

function truncate(text: string): string {
  return text.length <= MAX_ERROR_DETAIL_CHARS ? text : `${text.slice(0, MAX_ERROR_DETAIL_CHARS)}…`;
}
