// End to end: MCP image content over 2026-07-28 too. The SDK v2 client pinned to 2026-07-28 reads a png
// over stdio (a real child process) and Streamable HTTP (a real socket): the image block decodes (sharp)
// to the resized size, and the structuredContent validates against the outputSchema `read` lists.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSandbox, repoRoot, type RunningServer, type Sandbox, startHttpServerProcess, stdioEntry } from './fixtures.ts';
import { stdioServerEnv } from '../test-home.ts';

type Block = { type: string; text?: string; data?: string; mimeType?: string };
type ToolResult = { content?: Block[]; structuredContent?: Record<string, unknown>; isError?: boolean };

const e2e = suite('read of a png over 2026-07-28 with the SDK v2 client (stdio and Streamable HTTP)');
let box: Sandbox;
let server: RunningServer;
let pngBytes = 0;

e2e.before(async () => {
  box = await makeSandbox();
  const png = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#336699' } }).png().toBuffer();
  pngBytes = png.length;
  await writeFile(path.join(box.ws, 'diagram.png'), png);
  server = await startHttpServerProcess(box.ws);
});
e2e.after(async () => {
  await server?.stop();
  await box?.cleanup();
});

function transportFor(kind: 'stdio' | 'http'): StdioClientTransport | StreamableHTTPClientTransport {
  if (kind === 'http') return new StreamableHTTPClientTransport(new URL(server.url));
  return new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, env: stdioServerEnv(), stderr: 'pipe' });
}

for (const kind of ['stdio', 'http'] as const) {
  e2e(`${kind}: negotiates 2026-07-28, the image decodes to 2000 × 1500 png, structuredContent matches read's outputSchema`, async () => {
    const client = new Client({ name: 'read-image-modern', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transportFor(kind));
    try {
      assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
      // Listed first, as a host does: the client then checks the result against read's outputSchema itself.
      const { tools } = await client.listTools();
      const outputSchema = tools.find((t) => t.name === 'read')?.outputSchema;
      assert.ok(outputSchema, 'read lists an outputSchema');

      const r = await client.callTool({ name: 'read', arguments: { path: 'diagram.png' } }) as ToolResult;
      assert.not.ok(r.isError, JSON.stringify(r).slice(0, 300));
      const content = r.content ?? [];
      assert.equal(content.map((b) => b.type), ['text', 'image']);
      assert.match(content[0]?.text ?? '', /^Read image file \[image\/png\] diagram\.png: 4000 × 3000, .*resized to 2000 × 1500/);
      const image = content[1]!;
      assert.is(image.mimeType, 'image/png');
      const sent = Buffer.from(image.data ?? '', 'base64');
      const meta = await sharp(sent).metadata();
      assert.equal([meta.format, meta.width, meta.height], ['png', 2000, 1500]);

      const validate = new Ajv2020({ strict: false, allErrors: true }).compile(outputSchema);
      assert.ok(validate(r.structuredContent), JSON.stringify(validate.errors));
      assert.equal((r.structuredContent as { image?: unknown }).image, {
        mimeType: 'image/png', width: 2000, height: 1500, bytes: sent.length,
        sourceMimeType: 'image/png', sourceWidth: 4000, sourceHeight: 3000, sourceBytes: pngBytes,
      });
    } finally {
      await client.close();
    }
  });
}

e2e.run();
