import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultThreadCount } from '../../src/actors/thread-count.ts';
import { MAX_INPUT_BACKLOG_BYTES, MAX_NODE_OUTPUT_BACKLOG_BYTES, MAX_NODE_REQUEST_BODY_BYTES, MAX_OUTPUT_BACKLOG_BYTES, MIN_DEFAULT_THREADS } from '../../src/limits.ts';
import { HTTP_ONLY_FLAGS, OptionsError, parseOptions, usage } from '../../src/cli/options.ts';
import { DEFAULT_SESSION_IDLE_SECONDS } from '../../src/limits.ts';
import { resolveOptions } from '../../src/cli/serve.ts';
import { MAX_NODE_ID_LENGTH } from '../../src/store/node-ownership.ts';
import { DEFAULT_SESSION_IDLE_MS, SSE_KEEPALIVE_MS } from '../../src/limits.ts';
import { DEFAULT_MAX_TASKS_PER_PRINCIPAL, DEFAULT_MODEL_CALLS_PER_MINUTE, DEFAULT_TURNS_PER_MINUTE } from '../../src/limits.ts';
import { MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, MAX_TASK_TTL_MS } from '../../src/limits.ts';

const KEY = 'k'.repeat(32);
const serve = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const c = parseOptions(argv, env, '/cwd');
  if (c.kind !== 'serve') throw new Error('expected serve');
  return c.options;
};

test('defaults: the current directory and super-pi-code', () => {
  const o = serve([]);
  assert.equal(o.workspaces, ['/cwd']);
  assert.is(o.harness, 'super-pi-code');
  assert.is(o.logLevel, 'info');
});

test('the default idle time of an HTTP session is the HTTP transport\'s own (options.ts keeps a copy so as not to load the transport)', () => {
  assert.is(DEFAULT_SESSION_IDLE_SECONDS * 1000, DEFAULT_SESSION_IDLE_MS);
  assert.is(serve([]).sessionIdleMs, DEFAULT_SESSION_IDLE_MS);
});

test('both thread pools default to the one rule: one per core, at least MIN_DEFAULT_THREADS', () => {
  assert.ok(defaultThreadCount() >= MIN_DEFAULT_THREADS);
  assert.is(serve([]).threads, defaultThreadCount());
  assert.is(serve([]).toolThreads, defaultThreadCount());
  assert.match(usage, `--threads N              scheduler worker threads hosting the actors; 0 runs them on the main thread   default: --stdio 0 (with --chaos kill-worker or kill-task-worker: as HTTP), HTTP one per core, at least ${MIN_DEFAULT_THREADS}`);
  assert.match(usage, `--tool-threads N         tool-pool threads (grep, find, large reads)   default: one per core, at least ${MIN_DEFAULT_THREADS}`);
});

test('flags win over the environment, which wins over defaults', () => {
  const env = { SUPERPI_WORKSPACE: '/a:/b', SUPERPI_HARNESS: 'super-pi-planner', SUPERPI_LOG_LEVEL: 'debug' };
  assert.equal(serve([], env).workspaces, ['/a', '/b']);
  assert.is(serve([], env).harness, 'super-pi-planner');
  assert.is(serve([], env).logLevel, 'debug');
  const o = serve(['--workspace', '/x', '--harness', 'super-pi-librarian'], env);
  assert.equal(o.workspaces, ['/x']);
  assert.is(o.harness, 'super-pi-librarian');
});

test('refuses an unknown harness, an unknown flag and a bad number with a clear error', () => {
  assert.throws(() => parseOptions(['--harness', 'evil'], {}, '/'), (e: unknown) => e instanceof OptionsError && /unknown harness "evil"/.test((e as Error).message));
  assert.throws(() => parseOptions(['--frobnicate'], {}, '/'), (e: unknown) => e instanceof OptionsError);
  assert.throws(() => parseOptions(['--page-size', '0'], {}, '/'), (e: unknown) => e instanceof OptionsError && /--page-size/.test((e as Error).message));
});

test('a stdio server runs its actors on the main thread (threads 0) unless chaos kills workers; HTTP gets one thread per core', () => {
  assert.is(serve(['--stdio']).threads, 0);
  assert.is(serve([]).threads, defaultThreadCount());
  assert.is(serve(['--stdio', '--chaos', 'crash-actor=0.01']).threads, 0, 'crashing actors needs no worker');
  assert.is(serve(['--stdio', '--chaos', 'kill-worker=250']).threads, defaultThreadCount(), 'killing workers needs workers');
  assert.is(serve(['--stdio', '--chaos', 'kill-task-worker=250']).threads, defaultThreadCount());
  assert.is(serve(['--stdio', '--threads', '3']).threads, 3, 'an explicit --threads wins');
  assert.is(serve(['--threads', '0']).threads, 0, '--threads 0 is in-thread mode, also for HTTP');
  assert.throws(() => serve(['--threads', '-1']), (e: unknown) => e instanceof OptionsError && /--threads/.test((e as Error).message));
  assert.throws(() => serve(['--threads', '']), (e: unknown) => e instanceof OptionsError && /--threads/.test((e as Error).message));
});

test('the library takes the same thread defaults: runStdio in-thread, with worker-killing chaos on threads', () => {
  assert.is(resolveOptions({}, 'stdio').threads, 0);
  assert.is(resolveOptions({ chaos: { killWorkerEveryMs: 100 } }, 'stdio').threads, defaultThreadCount());
  assert.is(resolveOptions({ threads: 2 }, 'stdio').threads, 2);
  assert.is(resolveOptions({}, 'http').threads, defaultThreadCount());
});

test('--max-input-backlog-bytes and --max-output-backlog-bytes set the flow budgets (MAX_INPUT_BACKLOG_BYTES and MAX_OUTPUT_BACKLOG_BYTES by default); not a positive whole number is an options error', () => {
  assert.is(serve([]).maxInputBacklogBytes, MAX_INPUT_BACKLOG_BYTES);
  assert.is(serve([]).maxOutputBacklogBytes, MAX_OUTPUT_BACKLOG_BYTES);
  assert.is(serve(['--max-input-backlog-bytes', '1048576']).maxInputBacklogBytes, 1048576);
  assert.is(serve(['--max-output-backlog-bytes', '2097152']).maxOutputBacklogBytes, 2097152);
  assert.throws(() => serve(['--max-input-backlog-bytes', '0']), (e: unknown) => e instanceof OptionsError && e.message.includes('--max-input-backlog-bytes'));
  assert.throws(() => serve(['--max-output-backlog-bytes', 'lots']), (e: unknown) => e instanceof OptionsError && e.message.includes('--max-output-backlog-bytes'));
  assert.match(usage, `--max-input-backlog-bytes N`);
  assert.match(usage, `default: ${MAX_OUTPUT_BACKLOG_BYTES}`);
});

test('--max-node-output-backlog-bytes (or SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES) sets the node output budget, MAX_NODE_OUTPUT_BACKLOG_BYTES by default; the flag wins', () => {
  assert.is(serve([]).maxNodeOutputBacklogBytes, MAX_NODE_OUTPUT_BACKLOG_BYTES);
  assert.is(serve(['--max-node-output-backlog-bytes', '4194304']).maxNodeOutputBacklogBytes, 4194304);
  assert.is(serve([], { SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES: '8388608' }).maxNodeOutputBacklogBytes, 8388608);
  assert.is(serve(['--max-node-output-backlog-bytes', '4194304'], { SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES: '8388608' }).maxNodeOutputBacklogBytes, 4194304);
  assert.throws(() => serve(['--max-node-output-backlog-bytes', '0']), (e: unknown) => e instanceof OptionsError && e.message.includes('--max-node-output-backlog-bytes'));
  assert.throws(() => serve([], { SUPERPI_MAX_NODE_OUTPUT_BACKLOG_BYTES: 'lots' }), (e: unknown) => e instanceof OptionsError);
  assert.ok((HTTP_ONLY_FLAGS as readonly string[]).includes('max-node-output-backlog-bytes'), 'refused with --stdio, which has no such budget');
  assert.match(usage, `default: ${MAX_NODE_OUTPUT_BACKLOG_BYTES}`);
});

test('--max-node-request-body-bytes (or SUPERPI_MAX_NODE_REQUEST_BODY_BYTES) sets the budget of POST bodies being read, MAX_NODE_REQUEST_BODY_BYTES by default; the flag wins', () => {
  assert.is(serve([]).maxNodeRequestBodyBytes, MAX_NODE_REQUEST_BODY_BYTES);
  assert.is(serve(['--max-node-request-body-bytes', '4194304']).maxNodeRequestBodyBytes, 4194304);
  assert.is(serve([], { SUPERPI_MAX_NODE_REQUEST_BODY_BYTES: '8388608' }).maxNodeRequestBodyBytes, 8388608);
  assert.is(serve(['--max-node-request-body-bytes', '4194304'], { SUPERPI_MAX_NODE_REQUEST_BODY_BYTES: '8388608' }).maxNodeRequestBodyBytes, 4194304);
  assert.throws(() => serve(['--max-node-request-body-bytes', '0']), (e: unknown) => e instanceof OptionsError && e.message.includes('--max-node-request-body-bytes'));
  assert.ok((HTTP_ONLY_FLAGS as readonly string[]).includes('max-node-request-body-bytes'), 'refused with --stdio, which reads no POST bodies');
  assert.match(usage, `default: ${MAX_NODE_REQUEST_BODY_BYTES}`);
});

test('--tool-timeout is in seconds', () => {
  assert.is(serve(['--tool-timeout', '3']).toolTimeoutMs, 3000);
});

test('--tool-share defaults to all tool threads but one (at least one) and takes a positive number', () => {
  assert.is(serve(['--tool-threads', '4']).toolShare, 3);
  assert.is(serve(['--tool-threads', '1']).toolShare, 1);
  assert.is(serve(['--tool-share', '2']).toolShare, 2);
  assert.throws(() => parseOptions(['--tool-share', '0'], {}, '/'), (e: unknown) => e instanceof OptionsError && /--tool-share/.test((e as Error).message));
});



test('--chaos is off by default and parses kill-worker and crash-actor', () => {
  assert.equal(serve([]).chaos, {});
  assert.equal(serve(['--chaos', 'kill-worker=500', '--chaos', 'crash-actor=0.01']).chaos, { killWorkerEveryMs: 500, crashActorProbability: 0.01 });
  assert.equal(serve(['--chaos', 'kill-task-worker=700']).chaos, { killTaskWorkerEveryMs: 700 });
  assert.throws(() => parseOptions(['--chaos', 'kill-task-worker=5'], {}, '/'), (e: unknown) => e instanceof OptionsError && /kill-task-worker takes a whole number of milliseconds, at least 10/.test((e as Error).message));
  assert.throws(() => parseOptions(['--chaos', 'melt-cpu=1'], {}, '/'), (e: unknown) => e instanceof OptionsError && /unknown --chaos mode "melt-cpu"/.test((e as Error).message));
  assert.throws(() => parseOptions(['--chaos', 'crash-actor=2'], {}, '/'), (e: unknown) => e instanceof OptionsError && /probability/.test((e as Error).message));
});

test('--observers lists token principals (none by default) and --no-metrics turns metrics off (on by default)', () => {
  const defaults = serve([]);
  assert.equal(defaults.observers, []);
  assert.is(defaults.metrics, true);
  const set = serve(['--observers', 'alice, bob,,', '--no-metrics']);
  assert.equal(set.observers, ['alice', 'bob']);
  assert.is(set.metrics, false);
});

test('--store (or SUPERPI_STORE) names the conversation store, SQLite by default; --node-id (or SUPERPI_NODE_ID) names the node', () => {
  assert.equal(serve([]).store, { kind: 'sqlite' });
  assert.is(serve([]).nodeId, undefined);
  const url = 'postgres://app:pw@db:5432/superpi';
  assert.equal(serve(['--store', url], { SUPERPI_STATE_KEY: KEY }).store, { kind: 'postgres', url, label: 'postgres://db:5432/superpi' });
  assert.equal(serve([], { SUPERPI_STORE: url, SUPERPI_STATE_KEY: KEY }).store.kind, 'postgres');
  assert.equal(serve(['--store', 'sqlite'], { SUPERPI_STORE: url }).store, { kind: 'sqlite' }, 'the flag wins over the environment');
  assert.is(serve(['--node-id', 'node-a']).nodeId, 'node-a');
  assert.is(serve([], { SUPERPI_NODE_ID: 'node-b' }).nodeId, 'node-b');
});

test('a bad --store or --node-id is an options error (exit 2), and the message does not show the password', () => {
  assert.throws(() => parseOptions(['--store', 'mysql://u:hunter2@h/db'], {}, '/'), (e: unknown) => e instanceof OptionsError && /--store takes/.test((e as Error).message) && !(e as Error).message.includes('hunter2'));
  assert.throws(() => parseOptions(['--node-id', ''], {}, '/'), (e: unknown) => e instanceof OptionsError && /--node-id: a node id must not be empty/.test((e as Error).message));
  assert.throws(() => parseOptions(['--node-id', 'a\nb'], {}, '/'), (e: unknown) => e instanceof OptionsError && /control characters/.test((e as Error).message));
  assert.throws(() => parseOptions(['--node-id', 'n'.repeat(MAX_NODE_ID_LENGTH + 1)], {}, '/'), (e: unknown) => e instanceof OptionsError && /at most/.test((e as Error).message));
  assert.is(serve(['--node-id', 'n'.repeat(MAX_NODE_ID_LENGTH)]).nodeId?.length, MAX_NODE_ID_LENGTH);
});

test('--advertise-url (or SUPERPI_ADVERTISE_URL) says how other nodes reach this one; unset by default (the bound address is used)', () => {
  assert.is(serve([]).advertiseUrl, undefined);
  assert.is(serve(['--advertise-url', 'http://10.0.0.5:8080']).advertiseUrl, 'http://10.0.0.5:8080');
  assert.is(serve(['--advertise-url', 'https://node-a.internal/superpi/']).advertiseUrl, 'https://node-a.internal/superpi', 'a trailing slash is dropped');
  assert.is(serve([], { SUPERPI_ADVERTISE_URL: 'http://[fd00::5]:9000' }).advertiseUrl, 'http://[fd00::5]:9000');
  assert.is(serve(['--advertise-url', 'http://a:1'], { SUPERPI_ADVERTISE_URL: 'http://b:2' }).advertiseUrl, 'http://a:1', 'the flag wins over the environment');
});

test('--cluster-insecure-forwarding (or SUPERPI_CLUSTER_INSECURE_FORWARDING=1) allows bearer tokens to a plain http:// node; off by default', () => {
  assert.is(serve([]).clusterInsecureForwarding, false);
  assert.is(serve(['--cluster-insecure-forwarding']).clusterInsecureForwarding, true);
  assert.is(serve([], { SUPERPI_CLUSTER_INSECURE_FORWARDING: '1' }).clusterInsecureForwarding, true);
  assert.is(serve([], { SUPERPI_CLUSTER_INSECURE_FORWARDING: 'yes' }).clusterInsecureForwarding, false, 'only 1 turns it on');
  assert.match(usage, '--cluster-insecure-forwarding');
});

test('a bad --advertise-url is an options error (exit 2): not a URL, not http(s), with credentials (never echoed), with a query', () => {
  const refused = (raw: string, why: RegExp) => assert.throws(() => parseOptions(['--advertise-url', raw], {}, '/'), (e: unknown) => e instanceof OptionsError && /^--advertise-url: /.test((e as Error).message) && why.test((e as Error).message) && !(e as Error).message.includes('hunter2'));
  refused('node-a:8080', /http:\/\/ or https:\/\//);
  refused('not a url', /is not a URL/);
  refused('ftp://node-a/', /http:\/\/ or https:\/\//);
  refused('http://admin:hunter2@node-a:8080', /must not carry credentials/);
  refused('http://node-a:8080/?x=1', /no query or fragment/);
  assert.throws(() => parseOptions([], { SUPERPI_ADVERTISE_URL: 'gopher://x' }, '/'), (e: unknown) => e instanceof OptionsError);
});

test('--task-lease (or SUPERPI_TASK_LEASE) sets the lease term in seconds, 10 by default; not a positive whole number is an options error', () => {
  assert.is(serve([]).taskLeaseMs, 10_000);
  assert.is(serve(['--task-lease', '3']).taskLeaseMs, 3000);
  assert.is(serve([], { SUPERPI_TASK_LEASE: '4' }).taskLeaseMs, 4000);
  assert.is(serve(['--task-lease', '5'], { SUPERPI_TASK_LEASE: '4' }).taskLeaseMs, 5000, 'the flag wins over the environment');
  for (const bad of ['0', '-1', '1.5', 'soon']) {
    assert.throws(() => parseOptions([`--task-lease=${bad}`], {}, '/'), (e: unknown) => e instanceof OptionsError && /--task-lease takes a positive whole number/.test((e as Error).message), bad);
  }
  assert.match(usage, '--task-lease SECONDS');
});

test('--task-ttl (or SUPERPI_TASK_TTL) sets the retention of 2026-07-28 tasks in seconds, none by default; not a positive whole number, or past a year, is an options error', () => {
  assert.is(serve([]).taskTtlMs, undefined, 'no retention unless asked: nothing is ever deleted');
  assert.is(serve(['--task-ttl', '3600']).taskTtlMs, 3_600_000);
  assert.is(serve([], { SUPERPI_TASK_TTL: '60' }).taskTtlMs, 60_000);
  assert.is(serve([], { SUPERPI_TASK_TTL: '' }).taskTtlMs, undefined, 'an empty variable is unset');
  assert.is(serve(['--task-ttl', '5'], { SUPERPI_TASK_TTL: '4' }).taskTtlMs, 5000, 'the flag wins over the environment');
  for (const bad of ['0', '-1', '1.5', 'soon', String(MAX_TASK_TTL_MS / 1000 + 1)]) {
    assert.throws(() => parseOptions([`--task-ttl=${bad}`], {}, '/'), (e: unknown) => e instanceof OptionsError && /--task-ttl/.test((e as Error).message), bad);
  }
  assert.match(usage, '--task-ttl SECONDS');
});

test('anonymous tasks are refused by default; --allow-anonymous-tasks or SUPERPI_ALLOW_ANONYMOUS_TASKS=1 allows them; a bad value is an options error', () => {
  assert.is(serve([]).allowAnonymousTasks, false);
  assert.is(serve(['--allow-anonymous-tasks']).allowAnonymousTasks, true);
  assert.is(serve([], { SUPERPI_ALLOW_ANONYMOUS_TASKS: '1' }).allowAnonymousTasks, true);
  assert.is(serve([], { SUPERPI_ALLOW_ANONYMOUS_TASKS: 'no' }).allowAnonymousTasks, false);
  assert.throws(() => serve([], { SUPERPI_ALLOW_ANONYMOUS_TASKS: 'maybe' }), /SUPERPI_ALLOW_ANONYMOUS_TASKS takes 1, true or yes/);
});

test('the task budget flags default to the named limits and take positive whole numbers', () => {
  const o = serve([]);
  assert.equal([o.maxTasksPerPrincipal, o.turnsPerMinute, o.modelCallsPerMinute], [DEFAULT_MAX_TASKS_PER_PRINCIPAL, DEFAULT_TURNS_PER_MINUTE, DEFAULT_MODEL_CALLS_PER_MINUTE]);
  const set = serve(['--max-tasks-per-principal', '2', '--turns-per-minute', '10', '--model-calls-per-minute', '20']);
  assert.equal([set.maxTasksPerPrincipal, set.turnsPerMinute, set.modelCallsPerMinute], [2, 10, 20]);
  for (const flag of ['--max-tasks-per-principal', '--turns-per-minute', '--model-calls-per-minute']) {
    assert.throws(() => serve([flag, '0']), new RegExp(`${flag} takes a positive whole number`));
    assert.match(usage, flag);
  }
});

test('--allowed-origins (or SUPERPI_ALLOWED_ORIGINS) lists origins as scheme://host[:port], none by default; anything but an http(s) origin is an options error', () => {
  assert.equal(serve([]).allowedOrigins, []);
  assert.equal(serve(['--allowed-origins', 'http://localhost:3000/, https://App.example.com:443']).allowedOrigins, ['http://localhost:3000', 'https://app.example.com']);
  assert.equal(serve([], { SUPERPI_ALLOWED_ORIGINS: 'http://localhost:5173' }).allowedOrigins, ['http://localhost:5173']);
  assert.equal(serve(['--allowed-origins', 'http://a:1'], { SUPERPI_ALLOWED_ORIGINS: 'http://b:2' }).allowedOrigins, ['http://a:1'], 'the flag wins over the environment');
  for (const bad of ['localhost:3000', 'null', 'file:///x', 'ws://localhost:1']) assert.throws(() => parseOptions(['--allowed-origins', bad], {}, '/'), (e: unknown) => e instanceof OptionsError && /--allowed-origins/.test((e as Error).message), bad);
  assert.match(usage, '--allowed-origins');
});

test('the bash sandbox flags become the policy: network, paths against the working directory, variable names; the unsafe opt-in is off by default', () => {
  const parsed = parseOptions(['--bash-network', 'allow=registry.npmjs.org', '--bash-hide', 'secrets', '--bash-hide', '/srv/keys', '--bash-writable', '/var/cache/build', '--bash-reveal', '/root/.npmrc', '--bash-env', 'NPM_TOKEN', '--unsafe-bash-without-sandbox'], {}, '/cwd');
  if (parsed.kind !== 'serve') throw new Error('expected serve');
  assert.equal(parsed.options.bashPolicy, {
    network: { kind: 'allow', hosts: ['registry.npmjs.org'] }, hide: ['/cwd/secrets', '/srv/keys'], writable: ['/var/cache/build'], reveal: ['/root/.npmrc'], env: ['NPM_TOKEN'], serverState: [],
  });
  assert.is(parsed.options.unsafeBashWithoutSandbox, true);
  const plain = parseOptions([], {}, '/cwd');
  if (plain.kind !== 'serve') throw new Error('expected serve');
  assert.equal(plain.options.bashPolicy.network, { kind: 'none' });
  assert.is(plain.options.unsafeBashWithoutSandbox, false);
  assert.throws(() => parseOptions(['--bash-network', 'sometimes'], {}, '/'), (e: unknown) => e instanceof OptionsError && /--bash-network takes off, on or allow=/.test((e as Error).message));
  assert.throws(() => parseOptions(['--bash-writable', '/'], {}, '/'), (e: unknown) => e instanceof OptionsError && /root directory/.test((e as Error).message));
});

test('--bash-max-processes and --bash-max-memory (or their variables) become the command bounds; unset ones keep the defaults; the flag wins', () => {
  assert.equal(serve([]).bashLimits, {});
  assert.equal(serve(['--bash-max-processes', '64', '--bash-max-memory', '1073741824']).bashLimits, { maxProcesses: 64, maxMemoryBytes: 1073741824 });
  assert.equal(serve([], { SUPERPI_BASH_MAX_PROCESSES: '100', SUPERPI_BASH_MAX_MEMORY_BYTES: '2048' }).bashLimits, { maxProcesses: 100, maxMemoryBytes: 2048 });
  assert.equal(serve(['--bash-max-processes', '7'], { SUPERPI_BASH_MAX_PROCESSES: '100' }).bashLimits, { maxProcesses: 7 });
  for (const bad of ['0', '-1', '1.5', 'lots']) assert.throws(() => parseOptions(['--bash-max-processes', bad], {}, '/'), (e: unknown) => e instanceof OptionsError && /--bash-max-processes/.test((e as Error).message), bad);
  assert.throws(() => parseOptions(['--bash-max-memory', '4G'], {}, '/'), (e: unknown) => e instanceof OptionsError && /--bash-max-memory/.test((e as Error).message));
  assert.match(usage, '--bash-max-memory');
});

test('--sse-keepalive: seconds, fractions allowed, as milliseconds; default SSE_KEEPALIVE_MS; anything else refused naming the flag', () => {
  assert.is(serve([]).sseKeepAliveMs, SSE_KEEPALIVE_MS);
  assert.is(serve(['--sse-keepalive', '30']).sseKeepAliveMs, 30_000);
  assert.is(serve(['--sse-keepalive', '0.2']).sseKeepAliveMs, 200);
  assert.ok(usage.includes('--sse-keepalive SECONDS'));
  for (const bad of ['0', '-1', '', 'soon', '0.0001', '3000000', 'Infinity']) {
    assert.throws(() => serve([`--sse-keepalive=${bad}`]), (e: unknown) => e instanceof OptionsError && (e as Error).message.startsWith('--sse-keepalive takes a number of seconds'), bad);
  }
});

test('--max-connections and --max-connections-per-address: positive whole numbers; defaults MAX_CONNECTIONS and MAX_CONNECTIONS_PER_ADDRESS; both HTTP-only', () => {
  assert.is(serve([]).maxConnections, MAX_CONNECTIONS);
  assert.is(serve([]).maxConnectionsPerAddress, MAX_CONNECTIONS_PER_ADDRESS);
  const given = serve(['--max-connections', '64', '--max-connections-per-address', '8']);
  assert.equal([given.maxConnections, given.maxConnectionsPerAddress], [64, 8]);
  for (const flag of ['max-connections', 'max-connections-per-address'] as const) {
    assert.ok(usage.includes(`--${flag} N`), flag);
    assert.ok((HTTP_ONLY_FLAGS as readonly string[]).includes(flag), flag);
    for (const bad of ['0', '-1', '1.5', 'many']) {
      assert.throws(() => serve([`--${flag}=${bad}`]), (e: unknown) => e instanceof OptionsError && (e as Error).message.startsWith(`--${flag} takes a positive whole number`), `${flag}=${bad}`);
    }
  }
});

test('--trusted-proxy: IP addresses, comma-separated and repeatable, in the form the gate compares; default none; names, ranges, ports refused naming the flag; HTTP-only', () => {
  assert.equal([...serve([]).trustedProxies], []);
  assert.equal([...serve(['--trusted-proxy', '127.0.0.1, [::1]', '--trusted-proxy', '0:0:0:0:0:0:0:1,::FFFF:10.0.0.7,FE80:0:0:0:0:0:0:9']).trustedProxies], ['127.0.0.1', '::1', '10.0.0.7', 'fe80::9']);
  assert.ok(usage.includes('--trusted-proxy LIST'));
  assert.ok((HTTP_ONLY_FLAGS as readonly string[]).includes('trusted-proxy'));
  for (const bad of ['localhost', '10.0.0.0/8', '127.0.0.1:8080', '127.1', 'fe80::1%eth0', ' , ']) {
    assert.throws(() => serve(['--trusted-proxy', bad]), (e: unknown) => e instanceof OptionsError && (e as Error).message.startsWith('--trusted-proxy takes IP addresses'), bad);
  }
});

test('each HTTP-only flag with --stdio (or on the stdio entry) is an OptionsError naming it, never ignored', () => {
  const booleans = new Set(['require-auth', 'cluster-insecure-forwarding', 'oauth-require-at-jwt']);
  const valueOf = (flag: string): string[] => booleans.has(flag) ? [] : [flag === 'advertise-url' ? 'http://127.0.0.1:1' : flag === 'allowed-origins' ? 'http://localhost:3000' : flag === 'trusted-proxy' ? '127.0.0.1' : '1'];
  for (const flag of HTTP_ONLY_FLAGS) {
    const args = [`--${flag}`, ...valueOf(flag)];
    assert.throws(() => parseOptions(['--stdio', ...args], {}, '/tmp'), (err: unknown) => err instanceof OptionsError && err.message.startsWith(`--${flag} is for the HTTP server`), flag);
    assert.throws(() => parseOptions(args, {}, '/tmp', 'stdio'), (err: unknown) => err instanceof OptionsError, `${flag} on the stdio entry`);
    // Without --stdio the flag is the HTTP server's: accepted, or refused only for a companion it needs
    // (an introspection client id needs its secret and an issuer), never as HTTP-only.
    try {
      assert.is(parseOptions(args, {}, '/tmp').kind, 'serve', `${flag} without --stdio is accepted`);
    } catch (err) {
      assert.ok(err instanceof OptionsError && !err.message.includes('is for the HTTP server') && (flag.startsWith('oauth-introspection-') || err.message.includes('needs --oauth-issuer')), `${flag} without --stdio: ${String(err)}`);
    }
  }
});

test('the workspace counts as given (roots never asked) with --workspace or SUPERPI_WORKSPACE, not by default', () => {
  assert.is(serve([]).workspaceGiven, false);
  assert.is(serve(['--workspace', '/p']).workspaceGiven, true);
  assert.is(serve([], { SUPERPI_WORKSPACE: '/p' }).workspaceGiven, true);
  assert.is(resolveOptions({}, 'stdio').workspaceGiven, false);
  assert.is(resolveOptions({ workspace: '/p' }, 'stdio').workspaceGiven, true);
});

test("a flag shaping how an issuer's tokens are checked, without an issuer, is an OptionsError naming both; with one it is taken", () => {
  const issuer = ['--oauth-issuer', 'https://issuer.example'];
  for (const args of [['--oauth-require-at-jwt'], ['--oauth-scope-read', 'r'], ['--oauth-scope-write', 'w'], ['--oauth-scope-exec', 'x'], ['--oauth-scope-observe', 'o'], ['--oauth-clock-skew', '5'], ['--oauth-jwks-refetch', '60']]) {
    assert.throws(() => parseOptions(args, {}, '/tmp'), (e: unknown) => e instanceof OptionsError && e.message.startsWith(`${args[0]} shapes how`) && e.message.includes('needs --oauth-issuer'), args[0]);
    assert.is(parseOptions([...args, ...issuer], {}, '/tmp').kind, 'serve', `${args[0]} with an issuer`);
    assert.is(parseOptions(args, { SUPERPI_OAUTH_ISSUERS: 'https://issuer.example' }, '/tmp').kind, 'serve', `${args[0]} with SUPERPI_OAUTH_ISSUERS`);
  }
  assert.throws(() => parseOptions([], { SUPERPI_OAUTH_REQUIRE_AT_JWT: '1' }, '/tmp'), (e: unknown) => e instanceof OptionsError && e.message.includes('needs --oauth-issuer'));
  assert.is(serve([], { SUPERPI_OAUTH_REQUIRE_AT_JWT: '0' }).oauthRequireAtJwt, false);
});

test.run();
