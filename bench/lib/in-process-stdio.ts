// A super-pi stdio server run in this process (a build's `runStdio`, in-thread actors, streams instead of
// pipes) for one era, driven with `tools/call read` of the bench file in blocks: the drive of
// bench/eras-profile.ts (its profile windows) and bench/stdio-builds.ts (two builds side by side).
// Every reply chunk is checked to carry the file's text and no error.

import { PassThrough, Writable } from 'node:stream';
import { FILE, FILE_TEXT } from '../http.ts';
import { modernMeta, readParams } from './mcp-http-client.ts';
import { nowUs } from './stats.ts';

export type Era = 'modern' | 'legacy';
export type RunStdio = (options: object) => Promise<unknown>;

export interface InProcessStdio {
  /** `calls` calls, `inFlight` at a time: the process's CPU µs and the wall µs the block took. */
  block(calls: number): Promise<{ cpuUs: number; wallUs: number }>;
  stop(): Promise<void>;
}

/** Starts the server for `era` in workspace `ws` (a legacy one is initialized first). */
export async function startInProcessStdio(runStdio: RunStdio, ws: string, era: Era, inFlight: number, clientName: string): Promise<InProcessStdio> {
  const input = new PassThrough();
  let onReplies: (count: number, text: string) => void = () => undefined;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString('utf8');
      let count = 0;
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
      onReplies(count, text);
      done();
    },
  });
  const ended = runStdio({ workspace: ws, input, output, logLevel: 'emergency' });
  const params = JSON.stringify(era === 'modern' ? { ...readParams(FILE), _meta: modernMeta } : readParams(FILE));
  let id = 0;
  const line = () => `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":${params}}`;
  const expected = JSON.stringify(FILE_TEXT).slice(1, -1);
  if (era === 'legacy') {
    await new Promise<void>((resolve) => {
      onReplies = () => resolve();
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: clientName, version: '1.0.0' } } })}\n`);
    });
    input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }
  const block = (calls: number) => new Promise<{ cpuUs: number; wallUs: number }>((resolve, reject) => {
    let sent = Math.min(inFlight, calls);
    let done = 0;
    const cpu0 = process.cpuUsage();
    const t0 = nowUs();
    onReplies = (count, text) => {
      if (!text.includes(expected) || text.includes('"error"') || text.includes('"isError":true')) {
        reject(new Error(`${era}: unexpected reply: ${text.slice(0, 300)}`));
        return;
      }
      done += count;
      if (done >= calls) {
        const cpu = process.cpuUsage(cpu0);
        resolve({ cpuUs: cpu.user + cpu.system, wallUs: nowUs() - t0 });
        return;
      }
      const more = Math.min(count, calls - sent);
      if (more > 0) {
        input.write(`${Array.from({ length: more }, line).join('\n')}\n`);
        sent += more;
      }
    };
    input.write(`${Array.from({ length: sent }, line).join('\n')}\n`);
  });
  return { block, stop: async () => { input.end(); await ended; } };
}
