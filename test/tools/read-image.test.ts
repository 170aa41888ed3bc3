// `read` of images: type told by magic bytes, resize to 2000 px, byte budget, gif and webp, and the clear
// refusals of a decompression bomb, a truncated file, a file lying about its type and other binary files.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { readSmallFileSync, readTool } from '../../src/tools/read.ts';
import { renderImage, sniffImage } from '../../src/tools/read-image.ts';
import type { ToolOutcome } from '../../src/tools/contract.ts';
import { IMAGE_MAX_BYTES, IMAGE_MAX_EDGE_PX } from '../../src/limits.ts';
import { bombPng } from './fixtures/image-bombs.ts';
import { failure, sandboxPerTest } from './sandbox.ts';

const box = sandboxPerTest(test);

const solid = (width: number, height: number, background = '#336699') => sharp({ create: { width, height, channels: 3, background } });

/** The image block of an outcome, decoded back with sharp: what a host would show. */
async function sentImage(r: ToolOutcome): Promise<{ mimeType: string; bytes: Buffer; width: number; height: number; format: string; pages: number }> {
  assert.is(r.content?.length, 1);
  const block = r.content?.[0];
  if (!block) throw new Error('no image block');
  assert.is(block.type, 'image');
  const bytes = Buffer.from(block.data, 'base64');
  const meta = await sharp(bytes).metadata();
  return { mimeType: block.mimeType, bytes, width: meta.width, height: meta.pageHeight ?? meta.height, format: meta.format, pages: meta.pages ?? 1 };
}

test('sniffs png, jpeg, gif and webp by their magic bytes, and nothing else', async () => {
  assert.is(sniffImage(await solid(4, 4).png().toBuffer()), 'image/png');
  assert.is(sniffImage(await solid(4, 4).jpeg().toBuffer()), 'image/jpeg');
  assert.is(sniffImage(await solid(4, 4).gif().toBuffer()), 'image/gif');
  assert.is(sniffImage(await solid(4, 4).webp().toBuffer()), 'image/webp');
  assert.is(sniffImage(Buffer.from('RIFF\0\0\0\0WAVEfmt ')), undefined);
  assert.is(sniffImage(Buffer.from('just text')), undefined);
  assert.is(sniffImage(Buffer.alloc(0)), undefined);
});

test('resizes a 4000 × 3000 png to 2000 × 1500 png, with a note naming both sizes', async () => {
  await writeFile(path.join(box.ws, 'shot.png'), await solid(4000, 3000).png().toBuffer());
  const r = await readTool({ path: 'shot.png' }, box.ctx);
  const sent = await sentImage(r);
  assert.equal([sent.mimeType, sent.format, sent.width, sent.height], ['image/png', 'png', 2000, 1500]);
  assert.match(r.text, /^Read image file \[image\/png\] shot\.png: 4000 × 3000, [\d.]+KB; resized to 2000 × 1500, [\d.]+KB\.$/);
  assert.is(r.isError, undefined);
});

test('sends a small png and a small jpeg byte for byte as they are', async () => {
  const png = await solid(300, 200).png().toBuffer();
  const jpeg = await solid(300, 200).jpeg().toBuffer();
  await writeFile(path.join(box.ws, 'a.png'), png);
  await writeFile(path.join(box.ws, 'b.jpg'), jpeg);
  const a = await readTool({ path: 'a.png' }, box.ctx);
  const b = await readTool({ path: 'b.jpg' }, box.ctx);
  assert.ok((await sentImage(a)).bytes.equals(png));
  assert.ok((await sentImage(b)).bytes.equals(jpeg));
  assert.is((await sentImage(b)).mimeType, 'image/jpeg');
  assert.match(a.text, /300 × 200, .*; sent as it is\.$/);
});

test('re-encodes an image over the byte budget as JPEG until it fits', async () => {
  // Noise does not compress: a 1800 × 1800 PNG of it is about 9.7 MB, far over IMAGE_MAX_BYTES.
  const side = 1800;
  const noisy = await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
  assert.ok(noisy.length > IMAGE_MAX_BYTES);
  await writeFile(path.join(box.ws, 'noise.png'), noisy);
  const r = await readTool({ path: 'noise.png' }, box.ctx);
  const sent = await sentImage(r);
  assert.is(sent.mimeType, 'image/jpeg');
  assert.is(sent.format, 'jpeg');
  assert.ok(sent.bytes.length <= IMAGE_MAX_BYTES, `sent ${sent.bytes.length} bytes`);
  assert.ok(Math.max(sent.width, sent.height) <= IMAGE_MAX_EDGE_PX);
  assert.match(r.text, /re-encoded as image\/jpeg/);
});

test('sends the first frame of an animated gif as a png', async () => {
  const red = await solid(40, 30, '#ff0000').png().toBuffer();
  const blue = await solid(40, 30, '#0000ff').png().toBuffer();
  const gif = await sharp([red, blue], { join: { animated: true } }).gif().toBuffer();
  assert.is((await sharp(gif, { pages: -1 }).metadata()).pages, 2);
  await writeFile(path.join(box.ws, 'anim.gif'), gif);
  const r = await readTool({ path: 'anim.gif' }, box.ctx);
  const sent = await sentImage(r);
  assert.equal([sent.mimeType, sent.format, sent.width, sent.height, sent.pages], ['image/png', 'png', 40, 30, 1]);
  const { data } = await sharp(sent.bytes).raw().toBuffer({ resolveWithObject: true });
  assert.equal([data[0], data[1], data[2]], [255, 0, 0]);
  assert.match(r.text, /sent as image\/png \(first frame\)/);
});

test('resizes a large webp and keeps it webp', async () => {
  await writeFile(path.join(box.ws, 'wide.webp'), await solid(3000, 1000).webp().toBuffer());
  const sent = await sentImage(await readTool({ path: 'wide.webp' }, box.ctx));
  assert.equal([sent.mimeType, sent.format, sent.width, sent.height], ['image/webp', 'webp', 2000, 667]);
});

test('refuses a decompression bomb (a tiny png declaring 100,000 × 100,000) from its header', async () => {
  const bomb = bombPng(100_000, 100_000);
  assert.ok(bomb.length < 100);
  await writeFile(path.join(box.ws, 'bomb.png'), bomb);
  const err = await failure(readTool({ path: 'bomb.png' }, box.ctx));
  assert.is(err.message, 'bomb.png declares more pixels than the 50,000,000 an image read decodes (a decompression bomb, or too large an image); not shown.');
});

test('refuses a truncated png with a clear error', async () => {
  const png = await sharp(randomBytes(200 * 200 * 3), { raw: { width: 200, height: 200, channels: 3 } }).png().toBuffer();
  await writeFile(path.join(box.ws, 'cut.png'), png.subarray(0, Math.floor(png.length / 2)));
  const err = await failure(readTool({ path: 'cut.png' }, box.ctx));
  assert.match(err.message, /^cut\.png is not a readable png image \([\d.]+KB\): /);
});

test('handles a file by its bytes, not its name: jpeg bytes in a .png, text in a .png', async () => {
  await writeFile(path.join(box.ws, 'photo.png'), await solid(50, 40).jpeg().toBuffer());
  await writeFile(path.join(box.ws, 'notes.png'), 'not an image at all\n');
  const sent = await sentImage(await readTool({ path: 'photo.png' }, box.ctx));
  assert.equal([sent.mimeType, sent.width, sent.height], ['image/jpeg', 50, 40]);
  assert.is((await readTool({ path: 'notes.png' }, box.ctx)).text, 'not an image at all\n');
});

test('refuses a file whose magic bytes say png but whose body is not one', async () => {
  const liar = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(4096)]);
  await writeFile(path.join(box.ws, 'liar.txt'), liar);
  const err = await failure(readTool({ path: 'liar.txt' }, box.ctx));
  assert.match(err.message, /^liar\.txt is not a readable png image \(4\.0KB\): /);
});

test('still refuses a binary file that is none of the four image types, whatever its name', async () => {
  await writeFile(path.join(box.ws, 'blob.png'), Buffer.from([0x41, 0x00, 0x42, 0x43]));
  const err = await failure(readTool({ path: 'blob.png' }, box.ctx));
  assert.is(err.message, 'blob.png is a binary file (4B); not shown. read returns text files only, and png, jpeg, gif and webp images.');
});

test('the synchronous inline read declines an image (null), so its decode runs asynchronously', async () => {
  await writeFile(path.join(box.ws, 'a.png'), await solid(10, 10).png().toBuffer());
  await writeFile(path.join(box.ws, 'a.txt'), 'text\n');
  assert.is(readSmallFileSync({ path: 'a.png' }, box.ws, 1024 * 1024), null);
  assert.is(readSmallFileSync({ path: 'a.txt' }, box.ws, 1024 * 1024)?.text, 'text\n');
});

test('a decode leaves the event loop turning: macrotasks run while it is in flight', async () => {
  const png = await sharp(randomBytes(3000 * 2000 * 3), { raw: { width: 3000, height: 2000, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
  let turns = 0;
  let done = false;
  const spin = (): void => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  // Straight from memory: no file I/O of its own to yield on, so only an off-thread decode lets `spin` run.
  await renderImage(png, 'image/png', 'big.png', null);
  done = true;
  assert.ok(turns > 1, `the loop turned ${turns} times during the decode`);
});

test('a cancel or deadline during a decode answers at once, and a read waiting behind it still runs', async () => {
  const png = await sharp(randomBytes(3000 * 2000 * 3), { raw: { width: 3000, height: 2000, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
  const order: string[] = [];
  const controllers = [new AbortController(), new AbortController()];
  // Both slots taken by decodes that are then abandoned.
  const abandoned = controllers.map((c, i) => renderImage(png, 'image/png', `big${i}.png`, c.signal).catch((err: Error) => { order.push(`big${i}: ${err.message}`); }));
  const third = renderImage(await solid(10, 10).png().toBuffer(), 'image/png', 'small.png', null).then(() => order.push('small done'));
  setImmediate(() => {
    for (const c of controllers) c.abort(new Error('deadline'));
  });
  await Promise.all(abandoned);
  assert.equal(order, ['big0: cancelled', 'big1: cancelled'], 'answered before the small read behind them ran');
  await third;
  assert.equal(order, ['big0: cancelled', 'big1: cancelled', 'small done']);
});

test('an already cancelled signal is answered without a decode', async () => {
  const controller = new AbortController();
  controller.abort(new Error('deadline'));
  const err = await failure(renderImage(await solid(10, 10).png().toBuffer(), 'image/png', 'a.png', controller.signal));
  assert.is(err.message, 'cancelled');
});

test.run();
