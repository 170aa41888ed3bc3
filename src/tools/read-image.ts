// `read` of an image (png, jpeg, gif, webp, told by magic bytes): decodes bytes already read through the
// confined path, resizes to fit IMAGE_MAX_EDGE_PX and IMAGE_MAX_BYTES, and returns a text note plus the image.
//
// Library: sharp (libvips). Against jimp or other pure-JS decoders: libvips decodes and resizes in a
// streaming pipeline on libuv's threads (several times faster, a fraction of the memory for a large input,
// and the JS thread stays free), and it refuses a declared size past limitInputPixels before allocating.
// A pure-JS decoder holds the whole RGBA image on the V8 heap of the thread that runs it.
//
// Where it runs: not on the tool pool by a rule of its own. A read of a file past LARGE_READ_BYTES (by the
// descriptor the calling thread opened, or as it grows while read there) goes to the pool like any large
// read (sharp loads in a pool thread too); a smaller one runs in the owner's thread,
// where sharp's work is asynchronous on libuv's threads and never blocks the event loop. A pool thread would
// add nothing: libvips's memory is native, which a worker's resourceLimits do not count, and terminating a
// worker cannot stop a libvips operation. What bounds a decode is the input: file bytes
// (IMAGE_MAX_FILE_BYTES), declared pixels (IMAGE_MAX_INPUT_PIXELS, checked before any pixel is decoded)
// and IMAGE_MAX_CONCURRENT_DECODES, which keeps libuv threads free for everyone's file I/O. The call's
// deadline answers the caller when it passes; a decode still running then finishes, bounded, unobserved.

import { createRequire } from 'node:module';
import type * as SharpModule from 'sharp';
import { ToolError, type ToolOutcome } from './contract.ts';
import { formatSize } from './truncate.ts';
import {
  IMAGE_MAX_BYTES, IMAGE_MAX_CONCURRENT_DECODES, IMAGE_MAX_EDGE_PX, IMAGE_MAX_INPUT_PIXELS, IMAGE_MAX_WAITING_DECODES,
} from '../limits.ts';

export type ImageMime = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** The four image types `read` returns, told by their magic bytes (never by the file's name). */
export function sniffImage(head: Buffer): ImageMime | undefined {
  const starts = (bytes: number[], at = 0): boolean => bytes.every((b, i) => head[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts([0x47, 0x49, 0x46, 0x38])) return 'image/gif';
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return undefined;
}

/** What libvips names each loader, to check it decoded the type the magic bytes promised. */
const VIPS_FORMAT: Record<ImageMime, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

/** JPEG qualities tried, in order, when the image at its size is still over IMAGE_MAX_BYTES. */
const JPEG_QUALITIES = [85, 70, 55, 40] as const;
/** Each further try shrinks the edges by this much once every quality was too large. */
const SHRINK_STEP = 0.75;
const MAX_SHRINKS = 8;

let loaded: typeof SharpModule.default | null = null;

/**
 * sharp, loaded on the first image read, so a start never pays for it. With require, not import(): the
 * command's CommonJS bundle runs from a V8 code cache, where a dynamic import() of a package fails (as
 * for piscina, src/tools/tool-pool.ts); sharp stays external to the bundle, being a native addon.
 */
function sharpModule(): typeof SharpModule.default {
  loaded ??= createRequire(import.meta.url)('sharp') as typeof SharpModule.default;
  return loaded;
}

/** Decodes in flight, and the calls waiting for one of the slots, oldest first. */
let decoding = 0;
const waiting: Array<() => void> = [];

async function acquireDecodeSlot(signal: AbortSignal | null): Promise<() => void> {
  if (decoding >= IMAGE_MAX_CONCURRENT_DECODES) {
    if (waiting.length >= IMAGE_MAX_WAITING_DECODES) {
      throw new ToolError(`Too many image reads are waiting (${IMAGE_MAX_WAITING_DECODES}); try again shortly.`);
    }
    await new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const at = waiting.indexOf(wake);
        if (at !== -1) waiting.splice(at, 1);
        reject(new ToolError('cancelled'));
      };
      waiting.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
  decoding++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    decoding--;
    waiting.shift()?.();
  };
}

/** Settles with `work`, or rejects with 'cancelled' as soon as `signal` aborts (the work runs on, bounded, unobserved). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | null): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(new ToolError('cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new ToolError('cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The `image` of an image read's structuredContent (readDefinition.outputSchema): what was sent, and from what. */
export interface ImageFacts {
  readonly mimeType: ImageMime;
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
  readonly sourceMimeType: ImageMime;
  readonly sourceWidth: number;
  readonly sourceHeight: number;
  readonly sourceBytes: number;
}

interface Encoded {
  readonly data: Buffer;
  readonly mime: ImageMime;
  readonly width: number;
  readonly height: number;
}

/**
 * The image in `bytes` (sniffed as `mime`) as a text note and an image block, within IMAGE_MAX_EDGE_PX and
 * IMAGE_MAX_BYTES. A bomb, a truncated file or bytes that are not the image they claim are ToolErrors.
 */
export async function renderImage(bytes: Buffer, mime: ImageMime, shown: string, signal: AbortSignal | null): Promise<ToolOutcome> {
  const release = await acquireDecodeSlot(signal);
  const work = encodeImage(bytes, mime, shown);
  // The slot is held until libvips is done, not until the caller is answered: a decode abandoned at its
  // deadline still occupies a libuv thread, and the next one must wait for it.
  work.then(release, release);
  return untilAborted(work, signal);
}

async function encodeImage(bytes: Buffer, mime: ImageMime, shown: string): Promise<ToolOutcome> {
  const sharp = sharpModule();
  const input = { limitInputPixels: IMAGE_MAX_INPUT_PIXELS, sequentialRead: true, failOn: 'warning', pages: 1 } as const;
  const bad = (err: unknown): ToolError => new ToolError(`${shown} is not a readable ${VIPS_FORMAT[mime]} image (${formatSize(bytes.length)}): ${reason(err)}`, { cause: err });

  let meta: SharpModule.Metadata;
  try {
    meta = await sharp(bytes, input).metadata();
  } catch (err) {
    // libvips checks limitInputPixels against the header, before any pixel is decoded.
    if (reason(err).includes('exceeds pixel limit')) throw tooManyPixels(shown);
    throw bad(err);
  }
  const width = meta.width;
  const height = meta.pageHeight ?? meta.height;
  if (meta.format !== VIPS_FORMAT[mime]) throw bad(new Error(`its bytes start as ${VIPS_FORMAT[mime]} but decode as ${meta.format}`));
  if (width * height > IMAGE_MAX_INPUT_PIXELS) throw tooManyPixels(shown);

  let sent: Encoded;
  try {
    sent = await fit(sharp, bytes, input, mime, width, height);
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw bad(err);
  }
  const changes: string[] = [];
  if (sent.width !== width || sent.height !== height) changes.push(`resized to ${sent.width} × ${sent.height}`);
  if (sent.mime !== mime) changes.push(mime === 'image/gif' ? `sent as ${sent.mime} (first frame)` : `re-encoded as ${sent.mime}`);
  const note = `Read image file [${mime}] ${shown}: ${width} × ${height}, ${formatSize(bytes.length)}` +
    (changes.length > 0 ? `; ${changes.join(', ')}, ${formatSize(sent.data.length)}.` : '; sent as it is.');
  const image: ImageFacts = {
    mimeType: sent.mime, width: sent.width, height: sent.height, bytes: sent.data.length,
    sourceMimeType: mime, sourceWidth: width, sourceHeight: height, sourceBytes: bytes.length,
  };
  return {
    text: note,
    content: [{ type: 'image', data: sent.data.toString('base64'), mimeType: sent.mime }],
    structured: { path: shown, image, notices: [] },
  };
}

/** The smallest change that fits: the file as it is, else resized in its own format (gif → png), else JPEG at falling quality and size. */
async function fit(sharp: typeof SharpModule.default, bytes: Buffer, input: SharpModule.SharpOptions, mime: ImageMime, width: number, height: number): Promise<Encoded> {
  const scale = Math.min(1, IMAGE_MAX_EDGE_PX / Math.max(width, height));
  if (scale === 1 && mime !== 'image/gif' && bytes.length <= IMAGE_MAX_BYTES) {
    // Decoded once anyway, so a file whose header is fine but whose pixels are not is refused, not sent.
    await sharp(bytes, input).raw().toBuffer();
    return { data: bytes, mime, width, height };
  }
  // Decoded and resized once to raw pixels (at most IMAGE_MAX_EDGE_PX², 4 bytes each); every encoding tried starts from them.
  const { data: pixels, info } = await sharp(bytes, input)
    .resize({ width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)), fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: info.width, height: info.height, channels: info.channels } } as const;
  const own = mime === 'image/gif' || mime === 'image/png' ? 'image/png' : mime;
  const first = own === 'image/png' ? await sharp(pixels, raw).png({ compressionLevel: 6 }).toBuffer()
    : own === 'image/webp' ? await sharp(pixels, raw).webp({ quality: 85 }).toBuffer()
      : await sharp(pixels, raw).jpeg({ quality: 85 }).toBuffer();
  if (first.length <= IMAGE_MAX_BYTES) return { data: first, mime: own, width: info.width, height: info.height };

  let w = info.width;
  let h = info.height;
  for (let shrink = 0; shrink <= MAX_SHRINKS; shrink++) {
    const base = shrink === 0 ? sharp(pixels, raw) : sharp(pixels, raw).resize({ width: w, height: h, fit: 'fill' });
    for (const quality of JPEG_QUALITIES) {
      // JPEG has no alpha: transparent pixels become white, as most viewers show them.
      const data = await base.clone().flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer();
      if (data.length <= IMAGE_MAX_BYTES) return { data, mime: 'image/jpeg', width: w, height: h };
    }
    w = Math.max(1, Math.round(w * SHRINK_STEP));
    h = Math.max(1, Math.round(h * SHRINK_STEP));
  }
  throw new ToolError(`no encoding of the image fits in ${formatSize(IMAGE_MAX_BYTES)}`);
}

function tooManyPixels(shown: string): ToolError {
  return new ToolError(`${shown} declares more pixels than the ${IMAGE_MAX_INPUT_PIXELS.toLocaleString('en-US')} an image read decodes (a decompression bomb, or too large an image); not shown.`);
}

function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // libvips reports several lines; the first says what failed.
  return message.split('\n')[0]?.trim() ?? message;
}
