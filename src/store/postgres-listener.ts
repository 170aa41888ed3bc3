// One LISTEN connection per node (issue 14): outside the pool (a pooled connection is shared, and LISTEN
// belongs to a session), listening on the cluster's channels and handing each notification to its
// channel's handler. A lost connection is opened again, backing off up to LISTEN_RETRY_MAX_MS; a
// notification sent while it was down is lost, so every (re)connection calls `onConnected`, and the
// waiters it wakes read the store again — NOTIFY is a wake-up, never the data. A connection that only
// receives does not notice the network dropping it without a reset, so it asks the database something every
// LISTEN_HEARTBEAT_MS and counts it lost when no answer comes within as long.

import type { Client, ClientConfig, Notification } from 'pg';
import { guarded } from '../log/guarded.ts';
import { LISTEN_HEARTBEAT_MS, LISTEN_RETRY_MAX_MS } from '../limits.ts';

export interface ListenerOptions {
  /** The database (as the store connects to it). */
  readonly connection: string | ClientConfig;
  /** Channel name → what a notification on it does (with its payload). */
  readonly channels: ReadonlyMap<string, (payload: string) => void>;
  /** Listening (again): whatever waits should look at the store, as notifications may have been missed. */
  readonly onConnected: () => void;
  /** The connection failed or could not be opened (it is retried). */
  readonly onError: (error: Error) => void;
  /** How often the connection is checked, and how long its check may take. Default LISTEN_HEARTBEAT_MS. */
  readonly heartbeatMs?: number;
}

/** The first retry's wait; each next one doubles, up to LISTEN_RETRY_MAX_MS. */
const FIRST_RETRY_MS = 100;

export class PostgresListener {
  readonly #options: ListenerOptions;
  #client: Client | null = null;
  #closed = false;
  #retryMs = FIRST_RETRY_MS;
  #timer: NodeJS.Timeout | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  /** Resolves once listening the first time (or once closed): a node that starts is listening before it serves. */
  readonly ready: Promise<void>;
  #markReady!: () => void;

  constructor(options: ListenerOptions) {
    this.#options = options;
    this.ready = new Promise((r) => (this.#markReady = r));
    void this.#connect();
  }

  /** Is the connection up and listening now? */
  get listening(): boolean {
    return this.#client !== null;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#markReady();
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    const client = this.#client;
    this.#client = null;
    if (client === null) return;
    // Ending waits for the database to close its side: one that no longer answers is cut off after a
    // heartbeat's time instead, so a node's stop never waits on a silent database.
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.#options.heartbeatMs ?? LISTEN_HEARTBEAT_MS)));
    const ended = client.end().then(() => false, (err: unknown) => {
      this.#options.onError(err as Error);
      return false;
    });
    if (await Promise.race([ended, silent])) (client as unknown as { readonly connection?: { readonly stream?: { destroy(): void } } }).connection?.stream?.destroy();
    clearTimeout(timer);
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const { default: pg } = await import('pg');
    const connection = this.#options.connection;
    const heartbeatMs = this.#options.heartbeatMs ?? LISTEN_HEARTBEAT_MS;
    // Every statement on it (LISTEN, the heartbeat) fails unanswered after a heartbeat's time.
    const client = new pg.Client({ ...(typeof connection === 'string' ? { connectionString: connection } : connection), query_timeout: heartbeatMs });
    let lost = false;
    let beat: NodeJS.Timeout | null = null;
    const onLost = (error: Error) => {
      if (lost) return;
      lost = true;
      if (beat !== null) clearInterval(beat);
      if (this.#heartbeat === beat) this.#heartbeat = null;
      if (this.#client === client) this.#client = null;
      if (this.#closed) return;
      this.#options.onError(error);
      // Already failed and reported: ending it only frees the socket, whose own failure says nothing new.
      client.end().catch(() => undefined);
      this.#retry();
    };
    // A handler that fails is reported as the connection's failures are; the connection stays up.
    const report = { log: (_level: 'error', message: string, data: Record<string, unknown>) => this.#options.onError(new Error(`${message}: ${String(data.error)}`)) };
    client.on('error', guarded(report, 'LISTEN connection error', onLost));
    client.on('end', guarded(report, 'LISTEN connection end', () => onLost(new Error('the LISTEN connection ended'))));
    client.on('notification', guarded(report, 'LISTEN notification', (msg: Notification) => this.#options.channels.get(msg.channel)?.(msg.payload ?? '')));
    try {
      await client.connect();
      for (const channel of this.#options.channels.keys()) await client.query(`LISTEN ${quoteIdentifier(channel)}`);
    } catch (err) {
      onLost(err as Error);
      return;
    }
    if (this.#closed || lost) {
      // Closed meanwhile (or lost, and reported): nothing listens on it any more.
      if (!lost) await client.end().catch((err: unknown) => this.#options.onError(err as Error));
      return;
    }
    this.#client = client;
    let asking = false;
    const unanswered = (err: unknown) => onLost(new Error(`the LISTEN connection did not answer its heartbeat: ${(err as Error).message}`));
    beat = setInterval(() => {
      if (asking) return;
      asking = true;
      try {
        client.query('SELECT 1').then(() => (asking = false), unanswered);
      } catch (err) {
        unanswered(err);
      }
    }, heartbeatMs);
    beat.unref();
    this.#heartbeat = beat;
    this.#retryMs = FIRST_RETRY_MS;
    this.#markReady();
    this.#options.onConnected();
  }

  #retry(): void {
    const wait = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, LISTEN_RETRY_MAX_MS);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#connect();
    }, wait);
    this.#timer.unref();
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
