// The calls every outside client makes against super-pi, and what each answer must show: one list of
// checks, so that a row of docs/clients.md means the same thing for every client. A driver adapts its
// client's API to `{ listTools, call, close }`; anything the client does not hand its caller (content
// blocks, structuredContent, outputSchema) is reported as not exposed, never as passed.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import sharp from 'sharp';

/** The png the runner writes: read must send it resized to 2000 px on its longer side. */
export const PNG = { width: 2400, height: 1200, sentWidth: 2000, sentHeight: 1000 };
export const NOTES = 'alpha\nbeta needle\ngamma\ndelta needle\nepsilon\n';

/**
 * @typedef {{ type: string, text?: string, data?: string, mimeType?: string }} Block
 * @typedef {{ content?: Block[], structuredContent?: Record<string, unknown>, isError?: boolean, text?: string }} Answer
 *   What the client handed back: content blocks and structuredContent where it exposes them, else the
 *   text it gives (`text`).
 * @typedef {{ name: string, title?: string, annotations?: { title?: string }, outputSchema?: object }} Listed
 * @typedef {{ listTools(): Promise<Listed[]>, call(name: string, args: Record<string, unknown>): Promise<Answer>, close(): Promise<void>,
 *   modelView?(name: string, answer: Answer): Promise<Block[]> }} Adapter
 *   `modelView`, where the client has one, is what its agent loop hands the model for that answer
 *   (AI SDK and Mastra's toModelOutput, LangChain's ToolMessage content).
 */

/** The server's own tool list (taken by the runner with the SDK Client), for the schemas a client does not expose. */
async function referenceSchemas() {
  const file = process.env.SUPERPI_SCHEMAS;
  if (!file) throw new Error('SUPERPI_SCHEMAS is not set (run through scripts/outside-clients/run.mjs)');
  return new Map(JSON.parse(await readFile(file, 'utf8')).map((t) => [t.name, t.outputSchema]));
}

function textIn(answer) {
  if (typeof answer.text === 'string') return answer.text;
  return (answer.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
}

/**
 * Runs every check through `adapter` and prints one JSON line: the client, its version, the transport
 * and each check as { check, ok: true | false | null (not exposed by this client), detail }.
 * @param {Adapter} adapter
 * @param {{ client: string, version: string, transport: string, notes?: string[] }} meta
 */
export async function exercise(adapter, meta) {
  const rows = [];
  const row = (check, ok, detail = '') => rows.push({ check, ok, detail: String(detail).slice(0, 300) });
  const attempt = async (check, fn) => {
    try {
      await fn();
    } catch (err) {
      row(check, false, err instanceof Error ? err.message : String(err));
    }
  };
  const reference = await referenceSchemas();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  let listed = [];

  await attempt('tools/list', async () => {
    listed = await adapter.listTools();
    const names = listed.map((t) => t.name);
    const missing = ['read', 'ls', 'grep', 'find'].filter((n) => !names.includes(n));
    row('tools/list', missing.length === 0, missing.length ? `missing ${missing.join(', ')}; got ${names.join(', ')}` : `${names.length} tools`);
    const withSchema = listed.filter((t) => t.outputSchema !== undefined);
    row('outputSchema listed', withSchema.length === 0 ? null : withSchema.length === listed.length, `${withSchema.length} of ${listed.length} tools show one`);
    const titled = listed.filter((t) => t.annotations?.title !== undefined || t.title !== undefined);
    row('titles listed', titled.length === 0 ? null : titled.length === listed.length, `${titled.length} of ${listed.length}`);
  });

  /** structuredContent against the declared outputSchema, and the notices it must carry. */
  const structured = (check, name, answer, wantNotice) => {
    if (answer.structuredContent === undefined) {
      row(`${check}: structured`, null, 'not exposed by this client');
      return;
    }
    const schema = listed.find((t) => t.name === name)?.outputSchema ?? reference.get(name);
    const validate = ajv.compile(schema);
    const valid = validate(answer.structuredContent);
    const notices = /** @type {string[]} */ (answer.structuredContent.notices ?? []);
    const noticeOk = wantNotice === undefined || notices.some((n) => wantNotice.test(n));
    row(`${check}: structured`, valid && noticeOk, valid ? (noticeOk ? `valid; notices ${JSON.stringify(notices)}` : `no notice matching ${wantNotice} in ${JSON.stringify(notices)}`) : JSON.stringify(validate.errors));
  };

  await attempt('read text', async () => {
    const a = await adapter.call('read', { path: 'notes.txt' });
    row('read text', !a.isError && textIn(a).includes('beta needle'), textIn(a).slice(0, 60));
    structured('read text', 'read', a);
  });

  await attempt('read png', async () => {
    const a = await adapter.call('read', { path: 'shot.png' });
    const note = textIn(a);
    const image = (a.content ?? []).find((b) => b.type === 'image');
    if (a.content === undefined) {
      row('read png: note', !a.isError && /Read image file \[image\/png\]/.test(note), note.slice(0, 120));
      row('read png: image', null, 'content blocks not exposed by this client');
    } else if (!image) {
      row('read png: image', false, `no image block; got ${JSON.stringify(a).slice(0, 200)}`);
    } else {
      const meta = await sharp(Buffer.from(image.data ?? '', 'base64')).metadata();
      const ok = image.mimeType === 'image/png' && meta.width === PNG.sentWidth && meta.height === PNG.sentHeight;
      row('read png: image', ok, `${image.mimeType} ${meta.width} × ${meta.height}; note: ${note.slice(0, 100)}`);
    }
    structured('read png', 'read', a);
    if (adapter.modelView) {
      const seen = await adapter.modelView('read', a);
      const kinds = seen.map((b) => b.type).join(' + ');
      row('read png: model gets the image', seen.some((b) => b.type === 'image'), `the model gets ${kinds}: ${JSON.stringify(seen.map((b) => b.text ?? `${b.mimeType} image`)).slice(0, 160)}`);
    }
  });

  await attempt('ls', async () => {
    const a = await adapter.call('ls', { path: 'docs', limit: 2 });
    row('ls', !a.isError && /a\.txt/.test(textIn(a)) && /limit reached/.test(textIn(a)), textIn(a).replace(/\n/g, ' ').slice(0, 120));
    structured('ls', 'ls', a, /entries limit reached/);
    if (adapter.modelView) {
      const seen = JSON.stringify(await adapter.modelView('ls', a));
      row('ls: model gets the notice', /entries limit reached/.test(seen), seen.slice(0, 160));
    }
  });

  await attempt('grep', async () => {
    const a = await adapter.call('grep', { pattern: 'needle', path: 'notes.txt', context: 1, limit: 1 });
    row('grep', !a.isError && /beta needle/.test(textIn(a)), textIn(a).replace(/\n/g, ' ').slice(0, 120));
    structured('grep', 'grep', a, /matches limit reached/);
    const context = /** @type {{ context?: unknown }[] | undefined} */ (a.structuredContent?.matches)?.[0]?.context;
    if (a.structuredContent !== undefined) row('grep: structured context', JSON.stringify(context) === JSON.stringify({ before: [{ line: 1, text: 'alpha' }], after: [{ line: 3, text: 'gamma' }] }), JSON.stringify(context));
  });

  await attempt('find', async () => {
    const a = await adapter.call('find', { pattern: '*.txt', limit: 1 });
    row('find', !a.isError && /\.txt/.test(textIn(a)), textIn(a).replace(/\n/g, ' ').slice(0, 120));
    structured('find', 'find', a, /results limit reached/);
  });

  await adapter.close().catch((err) => row('close', false, err));
  process.stdout.write(`SUPERPI-RESULT ${JSON.stringify({ ...meta, rows })}\n`);
}

/**
 * What the runner hands a driver through the environment.
 * @returns {{ transport: 'stdio' | 'http', stdio: { command: string, args: string[], cwd: string }, http: string }}
 */
export function driverEnv() {
  const need = (name) => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set (run through scripts/outside-clients/run.mjs)`);
    return value;
  };
  return { transport: /** @type {'stdio' | 'http'} */ (need('SUPERPI_TRANSPORT')), stdio: JSON.parse(need('SUPERPI_STDIO')), http: need('SUPERPI_HTTP') };
}

/** The version of package `name` as installed for the driver (its temporary prefix, or the project for the SDKs). */
export async function packageVersion(name) {
  for (let dir = process.env.SUPERPI_DRIVER_DIR ?? process.cwd(); ; dir = path.dirname(dir)) {
    try {
      return JSON.parse(await readFile(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch (err) {
      if (err?.code !== 'ENOENT') throw err;
    }
    if (path.dirname(dir) === dir) return 'not found';
  }
}
