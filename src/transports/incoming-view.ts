// What Streamable HTTP reads of a request (its method, headers and body), whichever server it came
// through: the node:http adapter passes an IncomingMessage as one, `webView` a web-standard Request.

/** What the server knows of the connection a request came on. */
export interface RequestContext {
  readonly remoteAddress?: string;
}

/**
 * A body not read to its end: dropped to keep the node's bodies in progress within their budget
 * (MAX_NODE_REQUEST_BODY_BYTES), or its connection closed first. The request is answered 503 with this
 * message and its connection closed (a client already gone reads nothing); it is no failure of the server.
 */
export class BodyDropped extends Error {
  override readonly name = 'BodyDropped';
}

/** What Streamable HTTP reads of a request: its method, its headers, its body. */
export interface IncomingView {
  readonly method: string;
  /** A header by its lower-case name (the first, if repeated). */
  header(name: string): string | undefined;
  /** The body as text, or null once it passes `limit` bytes: reading stops there. Rejects with BodyDropped when the node drops it. */
  body(limit: number): Promise<string | null>;
}

/** The request with its body already read (`body` gives it once more, within the same limit). */
export function withBody(request: IncomingView, body: string): IncomingView {
  return { method: request.method, header: (name) => request.header(name), body: async (limit) => (Buffer.byteLength(body) > limit ? null : body) };
}

/** A web-standard Request as Streamable HTTP reads it. */
export function webView(request: Request): IncomingView {
  return {
    method: request.method,
    header: (name) => request.headers.get(name) ?? undefined,
    body: (limit) => readBody(request, limit),
  };
}

/**
 * The body as text, or null once it passes `limit` bytes: reading stops there (the reader is cancelled),
 * so a body past the limit is never held.
 */
async function readBody(request: Request, limit: number): Promise<string | null> {
  const body = request.body;
  if (body === null) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? Buffer.from(chunks[0] as Uint8Array).toString('utf8') : Buffer.concat(chunks).toString('utf8');
}
