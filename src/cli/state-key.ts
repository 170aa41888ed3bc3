// Where a node's key for 2026-07-28 `requestState` seals comes from: the operator's configuration
// (`SUPERPI_STATE_KEY` or `--state-key-file`), required on a shared PostgreSQL store so that a state
// sealed on one node opens on every other; a single node may go without (a random key per process).

import { readSecretFile } from '../auth/secret-files.ts';
import type { StoreLocation } from '../store/store-location.ts';
import { MIN_STATE_KEY_BYTES } from '../limits.ts';

export class StateKeyError extends Error {
  override readonly name = 'StateKeyError';
}

export interface StateKeySource {
  /** `--state-key-file`: a file holding the key (one line; a trailing newline is not part of it). */
  readonly file?: string | undefined;
  /** `SUPERPI_STATE_KEY`. */
  readonly env?: string | undefined;
}

const HOW = `the same secret of at least ${MIN_STATE_KEY_BYTES} bytes on every node, e.g. from \`openssl rand -base64 48\``;

/**
 * The key's bytes (the UTF-8 of the text given), or undefined: none given on a single node, which then
 * seals with a random key of its own (application.ts). A key too short, or none on a PostgreSQL store
 * (a cluster), stops the start: never a state sealed with a weak key, never one only its node can open.
 */
export function stateKeyFrom(source: StateKeySource, store: StoreLocation, read: (path: string) => string = readSecretFile): Uint8Array | undefined {
  let text: string | undefined;
  let origin = 'SUPERPI_STATE_KEY';
  if (source.file !== undefined) {
    origin = `--state-key-file ${source.file}`;
    try {
      text = read(source.file).replace(/\r?\n$/, '');
    } catch (err) {
      throw new StateKeyError(`${origin}: cannot read it (${(err as Error).message})`, { cause: err });
    }
  } else if (source.env !== undefined && source.env !== '') {
    text = source.env;
  }
  if (text === undefined) {
    if (store.kind !== 'postgres') return undefined;
    throw new StateKeyError(`a node on a shared PostgreSQL store needs SUPERPI_STATE_KEY (or --state-key-file): ${HOW}, so that a requestState sealed on one node opens on another`);
  }
  const bytes = new TextEncoder().encode(text);
  if (bytes.length < MIN_STATE_KEY_BYTES) {
    throw new StateKeyError(`${origin} is ${bytes.length} bytes; it must be at least MIN_STATE_KEY_BYTES (${MIN_STATE_KEY_BYTES}): ${HOW}`);
  }
  return bytes;
}
