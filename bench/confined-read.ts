// What the confinement costs one small `read`, in this process, with no protocol around it (issue 27's
// p50 one call at a time). The bare SDK peer's tool body is `readFileSync(path, 'utf8')`; super-pi's is
// `readSmallFileSync` (src/tools/read.ts): the same file-system steps its connection actor runs inline,
// through the one confined path (an lstat per component, open without following or blocking, fstat,
// the descriptor's real path from /proc/self/fd, the read, close) and the rendering of the window.
// Each system call is also timed alone, so the difference can be put down to the calls that make it.
// Usage: npx tsx bench/confined-read.ts   (ns per call, the minimum of 7 runs of 50,000)

import { closeSync, fstatSync, lstatSync, mkdtempSync, openSync, readFileSync, readlinkSync, readSync, realpathSync, rmSync, writeFileSync, constants } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { answerSync, type FsRequest, runSync } from '../src/tools/fs-steps.ts';
import { readSmallFileSync, readSteps } from '../src/tools/read.ts';
import { FILE, FILE_TEXT } from './http.ts';
import { fmt, table } from './lib/stats.ts';

const N = 50_000;
const RUNS = 7;
const ws = realpathSync(mkdtempSync(path.join(tmpdir(), 'superpi-confined-read-')));
const file = path.join(ws, FILE);
writeFileSync(file, FILE_TEXT);
const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const fd = openSync(file, flags);
const buffer = Buffer.allocUnsafe(FILE_TEXT.length + 512);
const INLINE_MAX = 64 * 1024;

// The system calls the confined read makes, counted once by a driver that forwards to the real one.
const made: string[] = [];
runSync(readSteps({ path: FILE }, ws, null, INLINE_MAX, false), (req: FsRequest) => {
  made.push(req.op);
  return answerSync(req);
});
const sdkCalls = ['open', 'fstat', 'read', 'close'];

/** The system calls alone, one binding call each, the text decoded: `confined` adds the confinement's two. */
function bare(confined: boolean): string {
  if (confined) lstatSync(file);
  const d = openSync(file, flags);
  try {
    const size = fstatSync(d).size;
    if (confined) readlinkSync(`/proc/self/fd/${d}`);
    const buf = Buffer.allocUnsafe(Math.max(512, size + 1));
    return buf.toString('utf8', 0, readSync(d, buf, 0, buf.length, null));
  } finally {
    closeSync(d);
  }
}

const variants: readonly (readonly [string, () => void])[] = [
  ["readFileSync(path, 'utf8'): the bare SDK peer's body", () => { for (let i = 0; i < N; i++) readFileSync(file, 'utf8'); }],
  ['readSmallFileSync: super-pi\'s inline read, confined, window rendered', () => { for (let i = 0; i < N; i++) readSmallFileSync({ path: FILE }, ws, INLINE_MAX); }],
  ['open, fstat, read, close, one binding call each', () => { for (let i = 0; i < N; i++) bare(false); }],
  ['the same with lstat before and readlink of /proc/self/fd after fstat', () => { for (let i = 0; i < N; i++) bare(true); }],
  ['lstat of the file', () => { for (let i = 0; i < N; i++) lstatSync(file); }],
  ['open (O_NOFOLLOW | O_NONBLOCK) + close', () => { for (let i = 0; i < N; i++) closeSync(openSync(file, flags)); }],
  ['fstat', () => { for (let i = 0; i < N; i++) fstatSync(fd); }],
  ['readlink of /proc/self/fd/N', () => { for (let i = 0; i < N; i++) readlinkSync(`/proc/self/fd/${fd}`); }],
  ['read of the whole file at offset 0', () => { for (let i = 0; i < N; i++) readSync(fd, buffer, 0, buffer.length, 0); }],
];

const best = new Map<string, number>();
try {
  for (let r = 0; r < RUNS; r++) {
    for (const [name, run] of variants) {
      const t0 = process.hrtime.bigint();
      run();
      best.set(name, Math.min(best.get(name) ?? Number.POSITIVE_INFINITY, Number(process.hrtime.bigint() - t0) / N));
    }
  }
} finally {
  closeSync(fd);
  rmSync(ws, { recursive: true, force: true });
}

const ns = (name: string) => best.get(name) ?? Number.NaN;
const [sdk, ours, oneByOne, withConfinement] = variants.map(([name]) => ns(name));
const extra = (ours as number) - (sdk as number);
const confinementCalls = (withConfinement as number) - (oneByOne as number);
const bindings = (oneByOne as number) - (sdk as number);
const js = (ours as number) - (withConfinement as number);
process.stdout.write(`Node ${process.version}; load average ${fmt(loadavg()[0] ?? 0, 1)}; a ${FILE_TEXT.length}-byte file\n`);
process.stdout.write(`${table(['one small read, in process', 'ns per call'], [...best].map(([name, v]) => [name, fmt(v, 0)]))}\n`);
process.stdout.write(`System calls per read: super-pi ${made.length} (${made.join(', ')}); readFileSync ${sdkCalls.length} (${sdkCalls.join(', ')}).\n`);
process.stdout.write(`super-pi's read − readFileSync: ${fmt(extra / 1000, 2)} µs per call, of which: the same four calls made one binding call at a time instead of in one native call ${fmt(bindings / 1000, 2)} µs; the confinement's lstat and /proc/self/fd readlink ${fmt(confinementCalls / 1000, 2)} µs; the rest (super-pi's JS: the steps, the window, the outcome) ${fmt(js / 1000, 2)} µs.\n`);
