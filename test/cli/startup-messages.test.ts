// What the HTTP command line tells its operator (src/cli/startup-messages.ts): one line naming the flag
// for each error of listening — among them permission denied (EACCES), which a test running as root cannot
// provoke with a real port, so the error is made here as node:net makes it — and the banner's account of
// where everything is served, whether tokens are configured and what anonymous callers may do.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenTable } from '../../src/auth/tokens.ts';
import { parseOptions, type ServerOptions } from '../../src/cli/options.ts';
import { httpBanner, listenProblem } from '../../src/cli/startup-messages.ts';

/** A listen error as node:net rejects with it (`listen EACCES: permission denied 127.0.0.1:1`). */
function listenError(code: string, host: string, port: number): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}: ${host}:${port}`), { code, errno: -13, syscall: 'listen', address: host, port });
}

function serve(argv: string[]): ServerOptions {
  const c = parseOptions(argv, {}, '/cwd');
  if (c.kind !== 'serve') throw new Error('expected serve');
  return c.options;
}

/** One line (no newline), naming the flag first. */
function oneLine(problem: string | null, flag: RegExp): string {
  assert.type(problem, 'string');
  assert.not.match(problem as string, '\n');
  assert.match(problem as string, flag);
  return problem as string;
}

test('permission denied on a port (EACCES, EPERM): one line naming --port, the address and what to do', () => {
  for (const code of ['EACCES', 'EPERM']) {
    const line = oneLine(listenProblem(listenError(code, '127.0.0.1', 1), { host: '127.0.0.1', port: 1 }), /^--port 1: permission denied to listen on 127\.0\.0\.1:1 /);
    assert.match(line, 'give a --port of 1024 or more (0 picks a free one)');
  }
});

test('a port in use: one line naming --port and that another super-pi may hold it', () => {
  const line = oneLine(listenProblem(listenError('EADDRINUSE', '127.0.0.1', 7777), { host: '127.0.0.1', port: 7777 }), /^--port 7777: 127\.0\.0\.1:7777 is already in use \(another super-pi may hold it\)/);
  assert.match(line, 'give another --port');
});

test('a host that does not resolve, or is not this machine\'s: one line naming --host; an IPv6 address is shown in brackets', () => {
  for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']) {
    oneLine(listenProblem(Object.assign(new Error(`getaddrinfo ${code} nowhere.invalid`), { code }), { host: 'nowhere.invalid', port: 7777 }), new RegExp(`^--host nowhere\\.invalid: the name does not resolve \\(${code}\\)`));
  }
  oneLine(listenProblem(listenError('EADDRNOTAVAIL', '10.9.9.9', 7777), { host: '10.9.9.9', port: 7777 }), /^--host 10\.9\.9\.9: not an address of this machine/);
  oneLine(listenProblem(listenError('EADDRINUSE', '::1', 7777), { host: '::1', port: 7777 }), /^--port 7777: \[::1\]:7777 is already in use/);
});

test('an error that is not the operator\'s configuration is not turned into a line (it is thrown on)', () => {
  assert.is(listenProblem(listenError('EMFILE', '127.0.0.1', 7777), { host: '127.0.0.1', port: 7777 }), null);
  assert.is(listenProblem(new Error('no code'), { host: '127.0.0.1', port: 7777 }), null);
  assert.is(listenProblem(null, { host: '127.0.0.1', port: 7777 }), null);
});

const url = 'http://127.0.0.1:7777/mcp';

test('the banner names the endpoints, /observer and /metrics; without tokens: none configured, anonymous callers read only, how to add one', () => {
  const banner = httpBanner({ options: serve([]), workspace: '/ws', tokens: new TokenTable() }, url, '9.9.9');
  assert.match(banner, 'super-pi 9.9.9 serving /ws (harness super-pi-code, 0 token(s))');
  assert.match(banner, '  Streamable HTTP  http://127.0.0.1:7777/mcp\n');
  assert.match(banner, '  WebSocket        ws://127.0.0.1:7777/mcp  (subprotocol "mcp")');
  assert.match(banner, '  Observer         http://127.0.0.1:7777/observer  (data: open (loopback server without tokens))');
  assert.match(banner, '  Metrics          http://127.0.0.1:7777/metrics\n');
  assert.match(banner, 'Tokens: none configured. Anonymous callers: read-only tools (--allow-anonymous-writes for write, edit, bash); no harness tasks (--allow-anonymous-tasks).');
  assert.match(banner, 'Add a token: a line "TOKEN PRINCIPAL" in a file given with --tokens FILE, or SUPERPI_TOKENS="TOKEN=PRINCIPAL"');
  assert.equal(JSON.parse(banner.slice(banner.indexOf('{'))), { mcpServers: { 'super-pi': { type: 'http', url } } });
});

test('the banner with tokens: how many are configured; the observer data is for the principals named with --observers, or nobody yet', () => {
  const tokens = new TokenTable();
  tokens.add('alice-token-123', 'alice');
  tokens.add('bob-token-4567', 'bob');
  const named = httpBanner({ options: serve(['--observers', 'alice']), workspace: '/ws', tokens }, url, '9.9.9');
  assert.match(named, '2 token(s))');
  assert.match(named, 'Tokens: 2 configured. Anonymous callers: read-only tools');
  assert.match(named, '(data: token principals alice (--observers))');
  const nobody = httpBanner({ options: serve([]), workspace: '/ws', tokens }, url, '9.9.9');
  assert.match(nobody, '(data: nobody yet: name token principals with --observers)');
});

test('the banner says what the operator\'s opt-ins change: --require-auth refuses anonymous callers; writes and tasks when allowed; --no-metrics', () => {
  const tokens = new TokenTable();
  tokens.add('alice-token-123', 'alice');
  assert.match(httpBanner({ options: serve(['--require-auth']), workspace: '/ws', tokens }, url, '1'), 'Anonymous callers: refused (--require-auth).');
  const open = httpBanner({ options: serve(['--allow-anonymous-writes', '--allow-anonymous-tasks', '--no-metrics']), workspace: '/ws', tokens: new TokenTable() }, url, '1');
  assert.match(open, 'Anonymous callers: every tool, writes included (--allow-anonymous-writes); harness tasks allowed (--allow-anonymous-tasks).');
  assert.match(open, '  Metrics          off (--no-metrics)');
});

test.run();
