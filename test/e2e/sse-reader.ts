// Reads a Server-Sent Events body as the tests need it: event by event (id and data), as they arrive,
// and whether the server ended the stream. Not a *.test.ts file.

export interface SseEvent {
  readonly id: string | null;
  readonly data: string;
}

export interface SseReader {
  /** The next event; null once the stream ended. */
  next(): Promise<SseEvent | null>;
  /** Every event until the stream ends. */
  rest(): Promise<SseEvent[]>;
  cancel(): Promise<void>;
}

export function sseReader(body: ReadableStream<Uint8Array>): SseReader {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const next = async (): Promise<SseEvent | null> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split('\n');
        // A comment (keep-alive) is no event.
        if (lines.every((l) => l.startsWith(':'))) continue;
        const id = lines.find((l) => l.startsWith('id: '))?.slice(4) ?? null;
        const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
        return { id, data };
      }
      const { done, value } = await reader.read();
      if (done) return null;
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return {
    next,
    async rest() {
      const all: SseEvent[] = [];
      for (let e = await next(); e !== null; e = await next()) all.push(e);
      return all;
    },
    cancel: () => reader.cancel(),
  };
}
