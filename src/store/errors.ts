// The durable store's errors: one class with stable codes, keeping the underlying `cause`.

/**
 * - `schema_too_new`: the database was migrated by a newer super-pi; this one refuses to touch it.
 * - `invalid_migrations`: the migration list itself is malformed (a bug, caught at open).
 * - `migration_failed`: a migration threw; the database is left at the version before it.
 * - `open_failed`: the database could not be opened as the store needs it (e.g. WAL unavailable).
 * - `not_found`: a write named a conversation that does not exist.
 * - `invalid_argument`: a bad status, entry type, limit or seq (the message names it).
 * - `invalid_cursor`: a cursor that no list returned.
 * - `payload_too_large`: an entry's JSON is over the store's `maxPayloadBytes`.
 * - `corrupt`: a row holds a value no super-pi writes (the database was changed by hand).
 * - `closed`: the store was closed.
 * - `fenced`: a write named a lease epoch that is no longer current: another claim (another node's
 *   takeover, or a newer run of the task) superseded the writer, which must stop, not retry.
 */
export type StoreErrorCode =
  | 'schema_too_new'
  | 'invalid_migrations'
  | 'migration_failed'
  | 'open_failed'
  | 'not_found'
  | 'invalid_argument'
  | 'invalid_cursor'
  | 'payload_too_large'
  | 'corrupt'
  | 'closed'
  | 'fenced';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
