// Saves one HTTP session's connection-actor checkpoint in the shared store whenever it changes, so any
// node can rehydrate the session (cluster design: "a session has one home node at a time"). Saves are
// ordered with one in flight per session, and the latest wins: a checkpoint that arrives while one is
// being saved replaces any other still waiting, since each is the whole state, not a delta. A save
// refused as `fenced` means another node took the session over: the local copy must close (`onFenced`),
// and nothing more is saved from here.

import type { Logger } from '../log/logger.ts';
import type { AsyncConversationStore } from '../store/async-store.ts';
import { StoreError } from '../store/errors.ts';

export interface CheckpointSaverOptions {
  readonly store: AsyncConversationStore;
  readonly sessionId: string;
  /** The epoch this node holds the session at (its claim or takeover). */
  readonly epoch: number;
  /** Another node holds the session now: close the local copy. Called once. */
  readonly onFenced: () => void;
  readonly logger: Logger;
}

export class CheckpointSaver {
  readonly #options: CheckpointSaverOptions;
  #inFlight: Promise<void> | null = null;
  /** The newest checkpoint not yet sent (older ones it replaced are never sent). */
  #waiting: Uint8Array | null = null;
  #fenced = false;

  constructor(options: CheckpointSaverOptions) {
    this.#options = options;
  }

  get epoch(): number {
    return this.#options.epoch;
  }

  /** True once a save was refused as fenced: the session is another node's. */
  get fenced(): boolean {
    return this.#fenced;
  }

  /** The session's state changed: `bytes` will be stored (unless a newer checkpoint comes first). */
  save(bytes: Uint8Array): void {
    if (this.#fenced) return;
    this.#waiting = bytes;
    this.#inFlight ??= this.#drain();
  }

  /** Resolves once every checkpoint handed over so far is stored (or was refused). */
  async settled(): Promise<void> {
    while (this.#inFlight !== null) await this.#inFlight;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#waiting !== null && !this.#fenced) {
        const bytes = this.#waiting;
        this.#waiting = null;
        await this.#saveOne(bytes);
      }
    } finally {
      this.#inFlight = null;
    }
  }

  async #saveOne(bytes: Uint8Array): Promise<void> {
    const { store, sessionId, epoch, logger } = this.#options;
    try {
      await store.saveCheckpoint(sessionId, epoch, bytes);
    } catch (err) {
      if (err instanceof StoreError && (err.code === 'fenced' || err.code === 'not_found')) {
        this.#fenced = true;
        this.#waiting = null;
        logger.log('info', 'another node holds this session now; closing its copy here', { session: sessionId, epoch });
        this.#options.onFenced();
        return;
      }
      // The store could not be reached: the next change saves the whole state again; a takeover meanwhile
      // would resume from the checkpoint before this one.
      logger.log('warning', 'a session checkpoint could not be saved', { session: sessionId, error: (err as Error).message });
    }
  }
}
