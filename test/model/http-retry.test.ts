import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AnthropicProvider } from '../../src/model/anthropic.ts';
import { DEFAULT_RETRY_POLICY, backoffMs, parseRetryAfter, postJson, resolveRetryPolicy } from '../../src/model/http-retry.ts';
import { OpenAICompatibleProvider } from '../../src/model/openai-compatible.ts';
import { ModelError, type ModelRequest } from '../../src/model/types.ts';
import { guarded } from '../hang-guard.ts';
import { startScriptedServer } from './fixtures/scripted-server.ts';

const ok = { body: { choices: [{ finish_reason: 'stop', message: { content: 'fine' } }] } };
const request: ModelRequest = { system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] };
/** Fast retries, so the tests measure behaviour rather than the production backoff. */
const quick = { backoffBaseMs: 10, maxBackoffMs: 2_000 };

async function rejection(promise: Promise<unknown>): Promise<ModelError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(err, ModelError, `expected a ModelError, got ${inspect(err)}`);
  return err as ModelError;
}

test('429 with Retry-After: waits the given seconds, then retries and succeeds', async () => {
  const server = await startScriptedServer([{ status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'slow down' } } }, ok]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm', retry: quick });
    const started = Date.now();
    const turn = await provider.complete(request);
    assert.is(turn.text, 'fine');
    assert.is(server.requests.length, 2);
    assert.ok(Date.now() - started >= 950, 'the Retry-After second was honoured');
  } finally {
    await server.close();
  }
});

test('500 three times: a retryable ModelError naming provider, status, the server message and the attempts', async () => {
  const boom = { status: 500, body: { error: { message: 'upstream exploded' } } };
  const server = await startScriptedServer([boom, boom, boom, ok]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm', retry: { ...quick, maxRetries: 2 } });
    const err = await rejection(provider.complete(request));
    assert.is(server.requests.length, 3);
    assert.is(err.provider, 'openai-compatible');
    assert.is(err.status, 500);
    assert.is(err.retryable, true);
    assert.match(err.message, /^openai-compatible: HTTP 500: upstream exploded \(POST http:\/\/127\.0\.0\.1:\d+\/chat\/completions; gave up after 3 attempts\)$/);
  } finally {
    await server.close();
  }
});

test('admitRequest is awaited before every attempt, retries included, so a budget counts what the endpoint receives', async () => {
  const boom = { status: 500, body: { error: { message: 'try again' } } };
  const server = await startScriptedServer([boom, boom, ok]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm', retry: quick });
    const seen: number[] = [];
    const turn = await provider.complete({ ...request, admitRequest: async () => { seen.push(server.requests.length); } });
    assert.is(turn.text, 'fine');
    assert.equal(seen, [0, 1, 2], 'admitted once before each of the three requests');
  } finally {
    await server.close();
  }
});

test('a request the budget does not admit is never sent; an abort while it waits is the usual abort error', async () => {
  const server = await startScriptedServer([ok]);
  try {
    const provider = new AnthropicProvider({ apiKey: 'k', model: 'm', baseUrl: server.url, retry: quick });
    const controller = new AbortController();
    const pending = provider.complete({ ...request, signal: controller.signal, admitRequest: (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })) });
    controller.abort(new Error('cancelled'));
    const err = await rejection(guarded(pending, 'the aborted wait'));
    assert.match(err.message, /abort/i);
    assert.is(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test('400: no retry, not retryable, the Anthropic error type and message kept', async () => {
  const server = await startScriptedServer([
    { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' } } },
    ok,
  ]);
  try {
    const provider = new AnthropicProvider({ apiKey: 'sk-ant-test-key', model: 'm', baseUrl: server.url, retry: quick });
    const err = await rejection(provider.complete(request));
    assert.is(server.requests.length, 1);
    assert.is(err.status, 400);
    assert.is(err.retryable, false);
    assert.match(err.message, /^anthropic: HTTP 400: invalid_request_error: max_tokens: too large \(POST /);
  } finally {
    await server.close();
  }
});

test('a long error body is truncated', async () => {
  const server = await startScriptedServer([{ status: 422, body: 'x'.repeat(5000) }]);
  try {
    const err = await rejection(postJson({ provider: 'p', url: `${server.url}/x`, headers: {}, body: {} }));
    assert.ok(err.message.length < 700, `message of ${err.message.length} characters`);
    assert.match(err.message, /x…/);
  } finally {
    await server.close();
  }
});

test('timeout: each attempt has its deadline, timeouts are retried, then a ModelError says so', async () => {
  const server = await startScriptedServer([{ hang: true }, { hang: true }]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm', retry: { ...quick, timeoutMs: 150, maxRetries: 1 } });
    // Without a per-attempt deadline the hanging server would never answer.
    const err = await rejection(guarded(provider.complete(request), 'two attempts of 150 ms'));
    assert.is(server.requests.length, 2);
    assert.is(err.retryable, true);
    assert.is(err.status, undefined);
    assert.match(err.message, /^openai-compatible: no complete response within 150 ms .*gave up after 2 attempts/);
  } finally {
    await server.close();
  }
});

test('abort via AbortSignal: the request stops promptly and the server sees the connection close', async () => {
  const server = await startScriptedServer([{ hang: true }]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm' });
    const controller = new AbortController();
    let abortedAt: number | undefined;
    setTimeout(() => {
      abortedAt = Date.now();
      controller.abort(new Error('task cancelled'));
    }, 100);
    // The server never answers and the default deadline is 2 minutes: only the abort can end this.
    const err = await rejection(guarded(provider.complete({ ...request, signal: controller.signal }), 'the aborted request'));
    assert.ok(abortedAt !== undefined, 'the request ended after the abort, not before');
    assert.match(err.message, /^openai-compatible: request aborted by the caller/);
    assert.is(err.retryable, false);
    assert.is((err.cause as Error).message, 'task cancelled');
    assert.is(server.requests.length, 1);
    const closedAt = await guarded(server.requests[0]!.closed, 'the server seeing the connection close');
    assert.ok(closedAt >= abortedAt, 'the server saw the client go, after the abort');
  } finally {
    await server.close();
  }
});

test('abort during a backoff wait stops at once, without waiting for Retry-After', async () => {
  const server = await startScriptedServer([{ status: 503, headers: { 'retry-after': '20' } }, ok]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    // Waiting out the 20 s Retry-After before noticing the abort would trip the guard.
    const err = await rejection(guarded(provider.complete({ ...request, signal: controller.signal }), 'the abort during backoff'));
    assert.match(err.message, /aborted/);
    assert.is(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test('an already aborted signal sends nothing', async () => {
  const server = await startScriptedServer([ok]);
  try {
    const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm' });
    const err = await rejection(provider.complete({ ...request, signal: AbortSignal.abort() }));
    assert.match(err.message, /aborted/);
    assert.is(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test('the API key never appears in an error, even when the server echoes it', async () => {
  const key = 'sk-live-0123456789abcdef';
  const server = await startScriptedServer([
    { status: 401, body: { error: { message: `Incorrect API key provided: ${key}.` } } },
    // The key straddles the truncation limit: scrubbing must happen before the cut.
    { status: 403, body: `${'y'.repeat(490)} ${key} trailing` },
    { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${key}` } } },
  ]);
  try {
    const openai = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm', apiKey: key, retry: quick });
    const anthropic = new AnthropicProvider({ baseUrl: server.url, model: 'm', apiKey: key, retry: quick });
    const errors = [await rejection(openai.complete(request)), await rejection(openai.complete(request)), await rejection(anthropic.complete(request))];
    assert.match(errors[0]?.message ?? '', /Incorrect API key provided: \[redacted\]/);
    for (const err of errors) {
      assert.not.ok(inspect(err, { depth: 10 }).includes(key), err.message);
      assert.not.ok(inspect(err, { depth: 10 }).includes(key.slice(0, 12)), `a prefix of the key leaked: ${err.message}`);
    }
  } finally {
    await server.close();
  }
  // Nothing listens at the closed server's port: a network error, retried, and still no key.
  const provider = new OpenAICompatibleProvider({ baseUrl: server.url, model: 'm', apiKey: key, retry: { ...quick, maxRetries: 1 } });
  const err = await rejection(provider.complete(request));
  assert.is(err.retryable, true);
  assert.match(err.message, /network error: fetch failed: .*ECONNREFUSED.*gave up after 2 attempts/);
  assert.not.ok(inspect(err, { depth: 10 }).includes(key));
});

test('a redirect is not followed: the API key (Anthropic\'s x-api-key, kept by fetch across origins) and the conversation never reach the host it names', async () => {
  const reached: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const elsewhere = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      reached.push({ url: req.url ?? '', headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ content: [{ type: 'text', text: 'stolen' }], stop_reason: 'end_turn', choices: [{ finish_reason: 'stop', message: { content: 'stolen' } }] }));
    });
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  const other = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
  const redirecting = await startScriptedServer([301, 302, 303, 307, 308].map((status) => ({ status, headers: { location: `${other}/collect?k=1` }, body: {} })));
  try {
    const secret: ModelRequest = { system: '', messages: [{ role: 'user', content: 'the workspace says aubergine' }], tools: [] };
    for (const provider of [
      new AnthropicProvider({ apiKey: 'sk-ant-secret-key', model: 'm', baseUrl: redirecting.url, retry: quick }),
      new OpenAICompatibleProvider({ apiKey: 'sk-secret-key', model: 'm', baseUrl: redirecting.url, retry: quick }),
      new AnthropicProvider({ apiKey: 'sk-ant-secret-key', model: 'm', baseUrl: redirecting.url, retry: quick }),
      new OpenAICompatibleProvider({ apiKey: 'sk-secret-key', model: 'm', baseUrl: redirecting.url, retry: quick }),
      new AnthropicProvider({ apiKey: 'sk-ant-secret-key', model: 'm', baseUrl: redirecting.url, retry: quick }),
    ]) {
      const err = await rejection(provider.complete(secret));
      assert.ok(err.status !== undefined && err.status >= 300 && err.status < 400, err.message);
      assert.is(err.retryable, false, 'a redirect is not retried');
      assert.match(err.message, /redirect to http:\/\/127\.0\.0\.1:\d+\/collect, which is not followed/);
      assert.not.match(err.message, /k=1|secret-key/);
    }
    assert.is(redirecting.requests.length, 5, 'each provider asked once');
    assert.equal(reached, [], 'nothing reached the host the redirect named');
  } finally {
    await redirecting.close();
    await new Promise((resolve) => elsewhere.close(resolve));
  }
});

test('credentials and a query string in the endpoint URL never appear in an error (fetch quotes the whole URL it refuses)', async () => {
  const server = await startScriptedServer([ok]);
  try {
    const baseUrl = `http://alice:pass%20word-42@127.0.0.1:${new URL(server.url).port}/v1?key=tok-9`;
    const err = await rejection(new OpenAICompatibleProvider({ model: 'm', baseUrl, retry: { ...quick, maxRetries: 0 } }).complete(request));
    assert.not.match(err.message, /pass%20word-42|pass word-42|tok-9|alice/, err.message);
    assert.match(err.message, /127\.0\.0\.1/, 'the endpoint is still named');
  } finally {
    await server.close();
  }
});

test('a 200 that is not JSON is a ModelError, not retried', async () => {
  const server = await startScriptedServer([{ body: '<html>proxy login</html>' }, ok]);
  try {
    const err = await rejection(postJson({ provider: 'p', url: server.url, headers: {}, body: {}, policy: quick }));
    assert.match(err.message, /^p: HTTP 200: response is not JSON: <html>proxy login<\/html>/);
    assert.is(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test('Retry-After forms: retry-after-ms, seconds, HTTP date, garbage', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.is(parseRetryAfter(new Headers({ 'retry-after-ms': '250' }), now), 250);
  assert.is(parseRetryAfter(new Headers({ 'retry-after': '3' }), now), 3000);
  assert.is(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now), 5000);
  assert.is(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now), undefined);
  assert.is(parseRetryAfter(new Headers(), now), undefined);
});

test('backoff: doubles with jitter between half and all, capped; Retry-After capped too', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, backoffBaseMs: 100, maxBackoffMs: 1_000 };
  assert.is(backoffMs(0, undefined, policy, () => 0), 50);
  assert.is(backoffMs(0, undefined, policy, () => 1), 100);
  assert.is(backoffMs(2, undefined, policy, () => 1), 400);
  assert.is(backoffMs(10, undefined, policy, () => 1), 1_000);
  assert.is(backoffMs(0, 3_600_000, policy), 1_000);
  assert.is(backoffMs(0, 200, policy), 200);
});

test('a bad retry policy field is named', () => {
  assert.throws(() => resolveRetryPolicy('p', { maxRetries: -1 }), /p: retry policy: maxRetries must be a non-negative integer, got -1/);
  assert.throws(() => resolveRetryPolicy('p', { timeoutMs: 0 }), /timeoutMs/);
  assert.equal(resolveRetryPolicy('p'), { ...DEFAULT_RETRY_POLICY });
});

test.run();
