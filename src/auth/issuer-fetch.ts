// Reading an issuer's JSON documents (metadata, JWKS, introspection answers): bounded in time and bytes,
// no redirects followed, and every failure one error type, so a broken issuer is "unavailable", never "open".

import { OAUTH_FETCH_TIMEOUT_MS, OAUTH_MAX_DOCUMENT_BYTES } from '../limits.ts';

/** The issuer could not be asked (network, timeout, status, size, not JSON): requests wait (503), they are never let in. */
export class IssuerUnavailable extends Error {
  override readonly name = 'IssuerUnavailable';
}

/** One JSON document by GET (no body) or a form POST; resolves to the parsed value or rejects with IssuerUnavailable. */
export type FetchJson = (url: string, form?: Readonly<Record<string, string>>, headers?: Readonly<Record<string, string>>) => Promise<unknown>;

/** The global fetch, with OAUTH_FETCH_TIMEOUT_MS and OAUTH_MAX_DOCUMENT_BYTES. */
export const fetchJson: FetchJson = async (url, form, headers) => {
  let response: Response;
  try {
    response = await fetch(url, {
      method: form === undefined ? 'GET' : 'POST',
      headers: { accept: 'application/json', ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }), ...headers },
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() }),
      redirect: 'error',
      signal: AbortSignal.timeout(OAUTH_FETCH_TIMEOUT_MS),
    });
  } catch (err) {
    throw new IssuerUnavailable(`${url}: ${(err as Error).message}`, { cause: err });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new IssuerUnavailable(`${url}: HTTP ${response.status}`);
  }
  const text = await readCapped(response, url);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new IssuerUnavailable(`${url}: not JSON`, { cause: err });
  }
};

async function readCapped(response: Response, url: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > OAUTH_MAX_DOCUMENT_BYTES) {
    await response.body?.cancel();
    throw new IssuerUnavailable(`${url}: a document of ${declared} bytes, over ${OAUTH_MAX_DOCUMENT_BYTES}`);
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > OAUTH_MAX_DOCUMENT_BYTES) {
        await reader.cancel();
        throw new IssuerUnavailable(`${url}: a document over ${OAUTH_MAX_DOCUMENT_BYTES} bytes`);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof IssuerUnavailable) throw err;
    throw new IssuerUnavailable(`${url}: ${(err as Error).message}`, { cause: err });
  }
  return Buffer.concat(chunks).toString('utf8');
}
