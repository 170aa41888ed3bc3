// Image reads (issue 25): `read` of a 4000 × 3000 png over stdio (the SDK Client), p50, beside a text
// `read` of a file of the same byte size; and, on one HTTP server, session A's ping p99 while session B
// reads the png one call after another, against A's p99 alone (target: within 1.5×).
// Usage: npm run build && tsx bench/images.ts [--quick]

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { connectStdio, makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from '../test/e2e/fixtures.ts';
import { McpHttpSession, pingWhile } from './lib/mcp-http-client.ts';
import { type BenchOptions, type BenchSection, type BenchSectionRunner, isMain } from './lib/report.ts';
import { fmt, percentile } from './lib/stats.ts';

const WIDTH = 4000;
const HEIGHT = 3000;
const TARGET = 1.5;

interface Plan {
  readonly reads: number;
  readonly idleMs: number;
}
const FULL: Plan = { reads: 30, idleMs: 3000 };
const QUICK: Plan = { reads: 8, idleMs: 1000 };

/** A screenshot-like png: smooth gradients with a grid, so it compresses as real UI captures do, not as a flat colour. */
async function screenshotPng(): Promise<Buffer> {
  const raw = Buffer.alloc(WIDTH * HEIGHT * 3);
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      const at = (y * WIDTH + x) * 3;
      const grid = x % 100 === 0 || y % 100 === 0 ? 80 : 0;
      raw[at] = (x * 255) / WIDTH - grid;
      raw[at + 1] = (y * 255) / HEIGHT - grid;
      raw[at + 2] = ((x + y) % 256);
    }
  }
  return sharp(raw, { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).png().toBuffer();
}

/** Text of exactly `bytes` bytes, in 80-byte lines. */
function textOfSize(bytes: number): string {
  const line = `${'the quick brown fox jumps over the lazy dog, again and again and again'.padEnd(79, '.')}\n`;
  return line.repeat(Math.floor(bytes / line.length)) + 'x'.repeat(bytes % line.length);
}

async function stdioP50(ws: string, file: string, reads: number): Promise<{ p50: number; note: string }> {
  const c = await connectStdio(ws);
  try {
    const times: number[] = [];
    let note = '';
    for (let i = 0; i < reads + 2; i++) {
      const t0 = performance.now();
      const r = await c.client.callTool({ name: 'read', arguments: { path: file } });
      const ms = performance.now() - t0;
      if (r.isError) throw new Error(`read ${file} failed: ${JSON.stringify(r).slice(0, 300)}`);
      // The first two warm up (sharp's load, the JIT).
      if (i >= 2) times.push(ms);
      const first = (r.content as { type: string; text?: string }[])[0];
      note = first?.text?.slice(0, 140) ?? '';
    }
    return { p50: percentile(times, 50), note };
  } finally {
    await c.close();
  }
}

export const run: BenchSectionRunner = async (options: BenchOptions = {}): Promise<BenchSection> => {
  const plan = options.quick ? QUICK : FULL;
  const progress = options.progress ?? ((s: string) => process.stderr.write(`${s}\n`));
  let box: Sandbox | null = null;
  let server: RunningServer | null = null;
  const sessions: McpHttpSession[] = [];
  try {
    box = await makeSandbox();
    const png = await screenshotPng();
    await writeFile(path.join(box.ws, 'shot.png'), png);
    await writeFile(path.join(box.ws, 'same-size.txt'), textOfSize(png.length));
    progress(`images: png of ${png.length} bytes; stdio reads`);
    const image = await stdioP50(box.ws, 'shot.png', plan.reads);
    const text = await stdioP50(box.ws, 'same-size.txt', plan.reads);

    progress('images: ping from a second session during image reads');
    server = await startHttpServerProcess(box.ws, []);
    const a = await McpHttpSession.open(server.url);
    const b = await McpHttpSession.open(server.url);
    sessions.push(a, b);
    // Warm-up pings first (the JIT, the session's thread), so the idle figure is the steady state.
    await pingWhile(a, () => false, 500);
    const idle = await pingWhile(a, () => false, plan.idleMs);
    let reading = true;
    let imageReads = 0;
    const reader = (async () => {
      try {
        for (let i = 0; i < plan.reads; i++) {
          const reply = await b.call('read', { path: 'shot.png' });
          if (reply.error || (reply.result as { isError?: boolean } | undefined)?.isError) throw new Error(`image read failed: ${JSON.stringify(reply).slice(0, 300)}`);
          imageReads++;
        }
      } finally {
        reading = false;
      }
    })();
    const loaded = await pingWhile(a, () => reading, 0);
    await reader;

    const idleP99 = percentile(idle, 99);
    const loadedP99 = percentile(loaded, 99);
    const ratio = loadedP99 / idleP99;
    const ms = (n: number) => `${fmt(n)} ms`;
    return {
      title: 'Image reads (issue 25)',
      command: 'npm run bench -- --only images',
      method: `read of a ${WIDTH} × ${HEIGHT} png (${fmt(png.length / 1024 / 1024, 2)} MB, resized to 2000 × 1500) over stdio with the SDK Client, ${plan.reads} calls after 2 warm-up ones, beside a text read of a file of the same byte size (its 50 KB window). Then one HTTP server, two sessions: A pings one at a time, alone for ${plan.idleMs / 1000} s, then while B reads the png ${plan.reads} times in a row.`,
      rows: [
        { measure: `stdio read of the ${WIDTH} × ${HEIGHT} png: p50`, ours: ms(image.p50), peer: ms(text.p50), peerName: 'text read, same bytes', ratio: image.p50 / text.p50, target: '', met: null },
        { measure: 'ping p99 (second session) during image reads, vs idle', ours: ms(loadedP99), peer: ms(idleP99), peerName: 'idle', ratio, target: `≤ ${TARGET}×`, met: ratio <= TARGET },
      ],
      notes: [
        `Image answer: "${image.note}". ${loaded.length} pings during ${imageReads} image reads, ${idle.length} idle.`,
      ],
    };
  } finally {
    for (const s of sessions) await s.close().catch((err: unknown) => progress(`images: closing a session: ${String(err)}`));
    if (server) await server.stop();
    if (box) await box.cleanup();
  }
};

if (isMain(import.meta.url)) {
  const { printSection } = await import('./run.ts');
  printSection(await run({ quick: process.argv.includes('--quick') }));
}
