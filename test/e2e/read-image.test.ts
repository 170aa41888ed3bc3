// End to end: the official SDK Client reads images from `examples/stdio.ts` over stdio, and decodes what
// comes back; a ping sent behind image reads is answered, and so is every read.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import sharp from 'sharp';
import { bombPng } from '../tools/fixtures/image-bombs.ts';
import { type Connected, connectStdio, makeSandbox, type Sandbox, textOf } from './fixtures.ts';

const e2e = suite('read of images over stdio with the SDK client');
let box: Sandbox;
let c: Connected;
let screenshotBytes = 0;

e2e.before(async () => {
  box = await makeSandbox();
  const screenshot = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#204060' } }).png().toBuffer();
  screenshotBytes = screenshot.length;
  await writeFile(path.join(box.ws, 'screenshot.png'), screenshot);
  const noise = await sharp(randomBytes(1000 * 700 * 3), { raw: { width: 1000, height: 700, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
  await writeFile(path.join(box.ws, 'noise.png'), noise);
  c = await connectStdio(box.ws);
  // As hosts do: with the tools listed, the SDK Client checks every read's structuredContent against
  // read's outputSchema, and refuses a result that declares a schema but carries none.
  await c.client.listTools();
});
e2e.after(async () => {
  await c?.close();
  await box?.cleanup();
});

/** The one image block of a result, decoded with sharp. */
async function decoded(result: unknown): Promise<{ mimeType: string; width: number; height: number; format: string }> {
  const content = (result as { content: { type: string; data?: string; mimeType?: string }[] }).content;
  assert.is(content.length, 2);
  const image = content[1];
  assert.is(image?.type, 'image');
  const meta = await sharp(Buffer.from(image?.data ?? '', 'base64')).metadata();
  return { mimeType: image?.mimeType ?? '', width: meta.width, height: meta.height, format: meta.format };
}

e2e('read of a 4000 × 3000 png returns a note and the image resized to 2000 × 1500', async () => {
  const r = await c.client.callTool({ name: 'read', arguments: { path: 'screenshot.png' } });
  assert.not.ok(r.isError, JSON.stringify(r).slice(0, 300));
  assert.match(textOf(r), /^Read image file \[image\/png\] screenshot\.png: 4000 × 3000, .*resized to 2000 × 1500/);
  assert.equal(await decoded(r), { mimeType: 'image/png', width: 2000, height: 1500, format: 'png' });
});

e2e('an image read carries structuredContent (validated by the SDK Client) with the sizes sent and the source\'s', async () => {
  const r = await c.client.callTool({ name: 'read', arguments: { path: 'screenshot.png' } });
  const image = (r.structuredContent as { image?: Record<string, unknown> } | undefined)?.image;
  const sent = Buffer.from((r.content as { data?: string }[])[1]?.data ?? '', 'base64');
  assert.equal(image, { mimeType: 'image/png', width: 2000, height: 1500, bytes: sent.length, sourceMimeType: 'image/png', sourceWidth: 4000, sourceHeight: 3000, sourceBytes: screenshotBytes });
});

e2e('read of a png over 1 MiB (run on the tool pool) returns the image too', async () => {
  const r = await c.client.callTool({ name: 'read', arguments: { path: 'noise.png' } });
  assert.not.ok(r.isError, JSON.stringify(r).slice(0, 300));
  assert.equal(await decoded(r), { mimeType: 'image/png', width: 1000, height: 700, format: 'png' });
});

e2e('a decompression bomb is an isError result, and the server goes on answering', async () => {
  await writeFile(path.join(box.ws, 'bomb.png'), bombPng(100_000, 100_000));
  const r = await c.client.callTool({ name: 'read', arguments: { path: 'bomb.png' } });
  assert.is(r.isError, true);
  assert.match(textOf(r), /declares more pixels than/, textOf(r));
  assert.equal(await c.client.ping(), {});
});

e2e('a truncated png and a file whose bytes lie about their type are isError results naming the file, and the server goes on answering', async () => {
  const png = await sharp(randomBytes(200 * 200 * 3), { raw: { width: 200, height: 200, channels: 3 } }).png().toBuffer();
  await writeFile(path.join(box.ws, 'cut.png'), png.subarray(0, Math.floor(png.length / 2)));
  await writeFile(path.join(box.ws, 'liar.jpg'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(4096)]));
  const cut = await c.client.callTool({ name: 'read', arguments: { path: 'cut.png' } });
  assert.is(cut.isError, true);
  assert.match(textOf(cut), /^cut\.png is not a readable png image \([\d.]+KB\): /, textOf(cut));
  const liar = await c.client.callTool({ name: 'read', arguments: { path: 'liar.jpg' } });
  assert.is(liar.isError, true);
  assert.match(textOf(liar), /^liar\.jpg is not a readable png image \(4\.0KB\): /, textOf(liar));
  assert.equal(await c.client.ping(), {});
});

// JSON-RPC promises each request one reply, matched by id, and nothing about the order of replies to
// requests in flight together. So this asserts that a ping sent behind four image reads is answered, once,
// with an empty result, and that each read is answered once with its image; not that the ping's reply comes
// first. It usually does (it is answered on the loop while libvips decodes on libuv's threads), but on a
// loaded machine the client can be descheduled between its writes of the reads and of the ping for longer
// than the decodes take, and the reads then finish first: asserting that order made the test flaky.
e2e('a ping sent while image reads are in flight is answered, and so is every read, each once', async () => {
  const answered = new Map<string, number>();
  const deliver = c.transport.onmessage;
  assert.ok(deliver, 'the client listens to its transport');
  c.transport.onmessage = (message) => {
    if ('id' in message && ('result' in message || 'error' in message)) answered.set(String(message.id), (answered.get(String(message.id)) ?? 0) + 1);
    deliver(message);
  };
  try {
    const reads = Array.from({ length: 4 }, () => c.client.callTool({ name: 'read', arguments: { path: 'screenshot.png' } }));
    const ping = c.client.ping();
    assert.equal(await ping, {});
    for (const r of await Promise.all(reads)) {
      assert.not.ok(r.isError, JSON.stringify(r).slice(0, 300));
      assert.equal(await decoded(r), { mimeType: 'image/png', width: 2000, height: 1500, format: 'png' });
    }
    assert.is(answered.size, 5, `ids answered: ${[...answered.keys()].join(', ')}`);
    assert.ok([...answered.values()].every((n) => n === 1), `each id answered once: ${JSON.stringify([...answered])}`);
  } finally {
    c.transport.onmessage = deliver;
  }
});

e2e.run();
