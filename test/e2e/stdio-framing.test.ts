// The stdio framing of a real `super-pi --stdio` process (the dist bundle), with a small --max-message-bytes:
// a seeded stream of lines — requests of both eras, a message of exactly the limit (LF and CRLF endings),
// one byte past it, lines many times the limit, bytes that are not UTF-8, NUL bytes, a BOM, CR inside a
// message, blank and CR-only lines, a refused batch nesting past any stack then its id alone — written cut at random bytes (inside a character, between CR and LF).
// Each request is answered exactly once under its id; each unreadable line gets exactly one error with id
// null (-32600 past the limit, -32700 otherwise), in order; nothing else is written to stdout; the process
// stays up, answers a last ping, and exits 0 when its input closes.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot } from './fixtures.ts';
import { binEntry, stopChild } from './fuzz.ts';
import { Rng } from './fuzz-random.ts';

const LIMIT = 32 * 1024;
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_208);
const UNITS = 400;
const REPLY_DEADLINE_MS = 30_000;
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'framing', version: '1' },
};

/** One line of the stream, and what it must bring: an answer to its id, an id-null error with a code, or nothing. */
type Unit = { bytes: Buffer; expect: ({ id: string } | { nullError: number })[] };

/** A request's JSON padded with spaces (inside the object) to exactly `size` bytes. */
function padded(id: string, size: number): string {
  const bare = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
  return `${bare.slice(0, -1)}${' '.repeat(size - bare.length)}}`;
}

function unitFor(rng: Rng, n: number): Unit {
  const id = `u${n}`;
  const eol = rng.chance(0.5) ? '\r\n' : '\n';
  const text = (s: string) => Buffer.from(`${s}${eol}`, 'utf8');
  switch (rng.int(13)) {
    case 0: return { bytes: text(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })), expect: [{ id }] };
    case 1: return { bytes: text(JSON.stringify({ jsonrpc: '2.0', id, method: 'server/discover', params: { _meta: MODERN_META } })), expect: [{ id }] };
    case 2: return { bytes: text(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: MODERN_META } })), expect: [{ id }] };
    // Exactly the limit, whichever ending: a message, not an oversized line.
    case 3: return { bytes: text(padded(id, LIMIT)), expect: [{ id }] };
    case 4: return { bytes: text(padded(id, LIMIT + 1)), expect: [{ nullError: -32600 }] };
    case 5: return { bytes: text(padded(id, LIMIT * (2 + rng.int(20)))), expect: [{ nullError: -32600 }] };
    case 6: {
      // Not UTF-8: a lone continuation byte, a truncated sequence, an encoded surrogate, an overlong slash.
      const bad = rng.pick([[0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff]]);
      const line = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { x: '#' } });
      const at = line.indexOf('#');
      return { bytes: Buffer.concat([Buffer.from(line.slice(0, at)), Buffer.from(bad), Buffer.from(`${line.slice(at + 1)}${eol}`)]), expect: [{ nullError: -32700 }] };
    }
    case 7: return { bytes: Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":"${id}",`), Buffer.from([0]), Buffer.from(`"method":"ping"}${eol}`)]), expect: [{ nullError: -32700 }] };
    // A BOM before a message is dropped by the decoder, as it is at the start of any UTF-8 text.
    case 8: return { bytes: text(`\uFEFF${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}`), expect: [{ id }] };
    // A CR inside the message is JSON whitespace.
    case 9: return { bytes: text(`{"jsonrpc":"2.0",\r"id":"${id}",\r\r"method":"ping"}`), expect: [{ id }] };
    // A batch (this session has none: refused whole, id null) whose element nests past any stack: its id is
    // free again at once, for the same request sent alone.
    case 11: {
      const deep = `${'['.repeat(12_000)}${']'.repeat(12_000)}`;
      const batch = Buffer.from(`[{"jsonrpc":"2.0","id":"${id}","method":"ping","params":{"x":${deep}}}]${eol}`);
      return { bytes: Buffer.concat([batch, text(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }))]), expect: [{ nullError: -32600 }, { id }] };
    }
    case 10: return { bytes: Buffer.from(rng.pick(['\n', '\r\n', ' \n', '\t\r\n'])), expect: [] };
    default: return { bytes: text(`{"jsonrpc":"2.0","id":"${id}","method":"ping"`), expect: [{ nullError: -32700 }] };
  }
}

test(`stdio framing: ${UNITS} lines at and past --max-message-bytes ${LIMIT}, not UTF-8, NUL, BOM, CR, cut at random bytes; each answered once, in order (seed ${SEED})`, async () => {
  const box = await makeSandbox();
  const home = await mkdtemp(path.join(os.tmpdir(), 'superpi-framing-home-'));
  const child = spawn(process.execPath, [binEntry, '--stdio', '--workspace', box.ws, '--log-level', 'error', '--max-message-bytes', String(LIMIT)], {
    cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, SUPERPI_HOME: home },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  const answers = new Map<string, number>();
  const nullErrors: number[] = [];
  const notProtocol: string[] = [];
  let wanted: { id: string; resolve: () => void } | null = null;
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (rest + d.toString('utf8')).split('\n');
    rest = lines.pop() as string;
    for (const line of lines) {
      let m: { jsonrpc?: unknown; id?: unknown; method?: unknown; error?: { code: number } };
      try {
        m = JSON.parse(line) as typeof m;
      } catch {
        notProtocol.push(line.slice(0, 200));
        continue;
      }
      if (m.jsonrpc !== '2.0') notProtocol.push(line.slice(0, 200));
      else if (m.method !== undefined) continue;
      else if (m.id === null) nullErrors.push(m.error?.code ?? 0);
      else if (typeof m.id === 'string') {
        answers.set(m.id, (answers.get(m.id) ?? 0) + 1);
        if (wanted?.id === m.id) wanted.resolve();
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const write = async (chunk: Buffer) => {
    if (!child.stdin.write(chunk)) await once(child.stdin, 'drain');
  };
  try {
    const rng = new Rng(SEED);
    const units = Array.from({ length: UNITS }, (_, n) => unitFor(rng, n));
    const stream = Buffer.concat(units.map((u) => u.bytes));
    // Cut anywhere: inside a character, between a CR and its LF, inside a line past the limit.
    for (let at = 0; at < stream.length;) {
      const size = 1 + rng.int(rng.chance(0.3) ? 8 : 3 * LIMIT);
      await write(stream.subarray(at, at + size));
      at += size;
      if (rng.chance(0.1)) await new Promise((r) => setImmediate(r));
    }
    // Lines are handled in order: once the last ping is answered, everything before it has been.
    const last = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to the last ping within ${REPLY_DEADLINE_MS} ms; stderr: ${stderr.slice(-2000)}`)), REPLY_DEADLINE_MS);
      wanted = { id: 'last', resolve: () => { clearTimeout(timer); resolve(); } };
      void exited.then((code) => reject(new Error(`the server exited with ${code}; stderr: ${stderr.slice(-2000)}`)));
    });
    await write(Buffer.from('{"jsonrpc":"2.0","id":"last","method":"ping"}\n'));
    await last;
    assert.equal(notProtocol.slice(0, 3), [], `${notProtocol.length} stdout lines were not JSON-RPC`);
    const ids = units.flatMap((u) => u.expect.flatMap((e) => ('id' in e ? [e.id] : [])));
    const wrong = ids.filter((id) => answers.get(id) !== 1).map((id) => `${id}: ${answers.get(id) ?? 0}`);
    assert.equal(wrong.slice(0, 5), [], `${wrong.length} requests not answered exactly once`);
    assert.is(answers.size, ids.length + 1, 'no answer to an id that was not sent');
    const codes = units.flatMap((u) => u.expect.flatMap((e) => ('nullError' in e ? [e.nullError] : [])));
    assert.equal(nullErrors, codes, 'one error with id null per unreadable line, in order');
    child.stdin.end();
    assert.is(await exited, 0, `exit code after input closed; stderr: ${stderr.slice(-2000)}`);
    // Nothing was left in flight to be aborted at the end: each request had its one answer already.
    const twice = [...answers].filter(([, n]) => n !== 1).map(([id, n]) => `${id}: ${n}`);
    assert.equal(twice.slice(0, 5), [], `${twice.length} requests answered more than once by the end`);
  } finally {
    await stopChild(child);
    await box.cleanup();
    await rm(home, { recursive: true, force: true });
  }
});

test.run();
