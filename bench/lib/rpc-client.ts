// A minimal JSON-RPC client over a line transport, the same for both sides compared: requests get
// fresh numeric ids, replies are matched by id, and the drivers measure one call at a time or a window.

import { nowUs } from './stats.ts';

export interface RpcReply {
  readonly id?: number | string | null;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

export class RpcClient {
  #deliver: ((line: string) => void) | null = null;
  #nextId = 1;
  readonly #waiting = new Map<number, (reply: RpcReply) => void>();

  /** Where request lines go (set once the transport exists: the transport needs `receive` first). */
  attach(deliver: (line: string) => void): void {
    this.#deliver = deliver;
  }

  /** The transport's send: one reply line. */
  readonly receive = (line: string): void => {
    const reply = JSON.parse(line) as RpcReply;
    if (typeof reply.id !== 'number') return;
    const waiter = this.#waiting.get(reply.id);
    if (!waiter) return;
    this.#waiting.delete(reply.id);
    waiter(reply);
  };

  request(method: string, params?: Record<string, unknown>, timeoutMs = 10_000): Promise<RpcReply> {
    const deliver = this.#deliver;
    if (!deliver) throw new Error('the client is not attached to a transport');
    const id = this.#nextId++;
    const line = JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        reject(new Error(`no reply to ${method} #${id} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      deliver(line);
    });
  }
}

/** One request of a workload; throws unless the reply is a success. */
export type Call = (client: RpcClient) => Promise<void>;

/** Latency of `count` calls made one at a time, in microseconds each. */
export async function sequential(client: RpcClient, call: Call, count: number): Promise<Float64Array> {
  const latencies = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const started = nowUs();
    await call(client);
    latencies[i] = nowUs() - started;
  }
  return latencies;
}

/** Wall time in microseconds of `total` calls with `window` in flight at all times. */
export async function windowed(client: RpcClient, call: Call, total: number, window: number): Promise<number> {
  let issued = 0;
  const started = nowUs();
  await Promise.all(Array.from({ length: window }, async () => {
    while (issued < total) {
      issued++;
      await call(client);
    }
  }));
  return nowUs() - started;
}
