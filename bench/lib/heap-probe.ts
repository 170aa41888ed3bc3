// Heap used after a full GC, in this thread and in worker threads, through the in-process inspector:
// a worker cannot be asked to collect garbage over its own message port (the scheduler worker has no
// such message), but the inspector's NodeWorker domain reaches every worker thread of the process.

import { Session } from 'node:inspector/promises';

interface WorkerTarget {
  readonly sessionId: string;
  readonly url: string;
}

interface ProtocolReply {
  readonly id: number;
  readonly result?: { readonly result?: { readonly value?: unknown } };
  readonly error?: { readonly message: string };
}

export class HeapProbe {
  readonly #session = new Session();
  readonly #targets = new Map<string, WorkerTarget>();
  readonly #waiting = new Map<number, (reply: ProtocolReply) => void>();
  #nextId = 1;

  constructor() {
    this.#session.connect();
    this.#session.on('NodeWorker.attachedToWorker', ({ params }) => {
      this.#targets.set(params.sessionId, { sessionId: params.sessionId, url: params.workerInfo.url });
    });
    this.#session.on('NodeWorker.detachedFromWorker', ({ params }) => {
      this.#targets.delete(params.sessionId);
    });
    this.#session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
      const reply = JSON.parse(params.message) as ProtocolReply;
      this.#waiting.get(reply.id)?.(reply);
      this.#waiting.delete(reply.id);
    });
  }

  /** This thread's heap used after a full GC, in bytes. */
  async mainHeapUsed(): Promise<number> {
    await this.#session.post('HeapProfiler.collectGarbage');
    await this.#session.post('HeapProfiler.collectGarbage');
    return process.memoryUsage().heapUsed;
  }

  /**
   * Heap used after a full GC in every worker thread whose entry URL passes `accept`, in bytes, one
   * entry per worker. Attaches for the measurement only, so the workers run unobserved otherwise.
   */
  async workerHeapsUsed(accept: (url: string) => boolean): Promise<number[]> {
    await this.#session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    // Attach notifications arrive with (or just after) the reply to enable.
    await new Promise((resolve) => setTimeout(resolve, 50));
    try {
      const targets = [...this.#targets.values()].filter((t) => accept(t.url));
      return await Promise.all(targets.map(async (t) => {
        await this.#send(t, 'HeapProfiler.collectGarbage');
        await this.#send(t, 'HeapProfiler.collectGarbage');
        const reply = await this.#send(t, 'Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true });
        const value = reply.result?.result?.value;
        if (typeof value !== 'number') throw new Error(`worker ${t.url}: no heapUsed (${reply.error?.message ?? 'no value'})`);
        return value;
      }));
    } finally {
      await this.#session.post('NodeWorker.disable');
      this.#targets.clear();
    }
  }

  close(): void {
    this.#session.disconnect();
  }

  #send(target: WorkerTarget, method: string, params: Record<string, unknown> = {}): Promise<ProtocolReply> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, (reply) => (reply.error ? reject(new Error(`${method}: ${reply.error.message}`)) : resolve(reply)));
      this.#session.post('NodeWorker.sendMessageToWorker', { sessionId: target.sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
    });
  }
}
