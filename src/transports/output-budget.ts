// The node's budget for output held for clients that do not read (MAX_NODE_OUTPUT_BACKLOG_BYTES): every
// connection that queues bytes in this process (a WebSocket, an HTTP connection with its SSE streams and
// POST replies) holds one `Backlog`, noted after each write and each drain and closed with the connection.
// Each backlog counts what its connection measures now (`bufferedAmount`, `writableLength`), never a sum
// of deltas, so the total is the sum of the last measures and cannot drift. When a write takes the total
// past the budget, every backlog is measured again and the largest are evicted (their connections
// destroyed, the bytes dropped) until the total fits: the client that left the most unread pays, not the
// newest or a small one.

/** What an evicted backlog's connection is told and what the log says of it. */
export interface Eviction {
  /** Bytes the evicted connection held unread. */
  readonly bytes: number;
  /** The node's total just before the eviction. */
  readonly total: number;
  /** The budget. */
  readonly limit: number;
}

/** One connection's part of the budget. */
export interface BacklogSource {
  /** The bytes the connection holds for its client now (queued and not yet taken by the system). */
  measure(): number;
  /** Drops the connection and its bytes (it left the most unread on a node over budget). Must not throw. */
  evict(eviction: Eviction): void;
}

export class Backlog {
  readonly #budget: OutputBudget;
  readonly source: BacklogSource;
  /** The bytes counted for this connection: its last measure. */
  bytes = 0;
  open = true;

  constructor(budget: OutputBudget, source: BacklogSource) {
    this.#budget = budget;
    this.source = source;
  }

  /** After a write (a charge) or a drain (a credit): counts what the connection measures now. */
  note(): void {
    this.#budget.note(this);
  }

  /** The connection closed: nothing of it counts any more. Idempotent. */
  close(): void {
    this.#budget.close(this);
  }
}

export class OutputBudget {
  readonly maxBytes: number;
  readonly #backlogs = new Set<Backlog>();
  /** The backlog of each connection that writers reach through what they write to (a reply's socket). */
  readonly #byConnection = new WeakMap<object, Backlog>();
  #total = 0;
  #evicting = false;

  constructor(maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError(`the node's output backlog budget must be a whole number of bytes, at least 1, not ${maxBytes}`);
    this.maxBytes = maxBytes;
  }

  /** Bytes counted for every open backlog together. */
  get total(): number {
    return this.#total;
  }

  /** Open backlogs (one per connection that may queue output). */
  get size(): number {
    return this.#backlogs.size;
  }

  /** A connection that may queue output: it counts from its first `note`. */
  open(source: BacklogSource): Backlog {
    const backlog = new Backlog(this, source);
    this.#backlogs.add(backlog);
    return backlog;
  }

  /** `open`, for a connection that writers know only by itself (`noteConnection`); closed with it. */
  openConnection(connection: object, source: BacklogSource): Backlog {
    const backlog = this.open(source);
    this.#byConnection.set(connection, backlog);
    return backlog;
  }

  /** After a write to a reply on `connection` (a ServerResponse's socket): its backlog, if it has one, is noted. */
  noteConnection(connection: object | null | undefined): void {
    if (connection === null || connection === undefined) return;
    const backlog = this.#byConnection.get(connection);
    if (backlog !== undefined) this.note(backlog);
  }

  /** The connection is no longer written as HTTP (upgraded to a WebSocket, which opens its own backlog). */
  closeConnection(connection: object): void {
    const backlog = this.#byConnection.get(connection);
    if (backlog === undefined) return;
    this.#byConnection.delete(connection);
    this.close(backlog);
  }

  note(backlog: Backlog): void {
    if (!backlog.open) return;
    this.#set(backlog, backlog.source.measure());
    if (this.#total > this.maxBytes) this.#enforce();
  }

  close(backlog: Backlog): void {
    if (!backlog.open) return;
    this.#set(backlog, 0);
    backlog.open = false;
    this.#backlogs.delete(backlog);
  }

  #set(backlog: Backlog, bytes: number): void {
    // A measure is a byte count: anything else (a connection already torn down) counts as nothing.
    const now = Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
    this.#total += now - backlog.bytes;
    backlog.bytes = now;
  }

  /**
   * Over budget: the last measures of other connections may be stale (a drain not yet noted), so all are
   * measured again; then the largest are evicted until the total fits. An eviction that writes (a close
   * frame) re-enters `note`, which only measures while this runs.
   */
  #enforce(): void {
    if (this.#evicting) return;
    this.#evicting = true;
    try {
      for (const b of this.#backlogs) this.#set(b, b.source.measure());
      while (this.#total > this.maxBytes) {
        let largest: Backlog | null = null;
        for (const b of this.#backlogs) if (largest === null || b.bytes > largest.bytes) largest = b;
        if (largest === null) break;
        const eviction: Eviction = { bytes: largest.bytes, total: this.#total, limit: this.maxBytes };
        // Counted out before the connection is told: its bytes are dropped with it.
        this.close(largest);
        largest.source.evict(eviction);
      }
    } finally {
      this.#evicting = false;
    }
  }
}
