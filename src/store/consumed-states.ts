// The single use of a person's confirmation over 2026-07-28 (docs/multi-round-trip.md#single-use): the
// accepted retry's sealed `requestState` is recorded by its digest in one conditional write, so of any
// number of retries carrying it — on one process, several processes on one SQLite file, or several nodes
// on one PostgreSQL — exactly one is told "first use". Each row keeps its state's expiry, and every
// consumption deletes a bounded batch of rows whose state expired more than a grace ago, in its own write.

import type { Pool } from 'pg';
import { StoreError } from './errors.ts';
import type { SqliteDatabase } from './sqlite-driver.ts';
import { CONSUMED_STATE_GRACE_MS, CONSUMED_STATE_SWEEP_BATCH, MAX_STATE_DIGEST_LENGTH } from '../limits.ts';

/** A digest as the core makes it (base64url SHA-256 of the state, 43 characters): anything else is refused unwritten. */
const DIGEST = /^[A-Za-z0-9_-]+$/;

function checkConsumption(digest: string, expiresAt: number): void {
  if (typeof digest !== 'string' || digest === '' || digest.length > MAX_STATE_DIGEST_LENGTH || !DIGEST.test(digest)) {
    throw new StoreError('invalid_argument', `a state digest is 1 to MAX_STATE_DIGEST_LENGTH (${MAX_STATE_DIGEST_LENGTH}) base64url characters`);
  }
  if (!Number.isSafeInteger(expiresAt)) throw new StoreError('invalid_argument', `a state's expiry is whole milliseconds since the epoch, not ${String(expiresAt)}`);
}

/**
 * The rows a consumption at `now` may sweep: those whose state expired at least CONSUMED_STATE_GRACE_MS
 * ago. The grace keeps a row while a node whose wall clock lags this one's could still open its state.
 */
const sweepBefore = (now: number): number => Math.trunc(now) - CONSUMED_STATE_GRACE_MS;

/** The SQLite half: one IMMEDIATE transaction per consumption (the sweep, then the conditional insert). */
export class SqliteConsumedStates {
  readonly #consume: (digest: string, expiresAt: number, before: number) => boolean;

  constructor(db: SqliteDatabase) {
    // Soonest expired first, through the expiry index; never the digest being consumed (its row decides the answer).
    const sweep = db.prepare<[{ before: number; digest: string; limit: number }]>(
      'DELETE FROM consumed_request_states WHERE digest IN (SELECT digest FROM consumed_request_states WHERE expires_at <= @before AND digest <> @digest ORDER BY expires_at LIMIT @limit)',
    );
    const insert = db.prepare<[{ digest: string; expires: number }]>(
      'INSERT INTO consumed_request_states (digest, expires_at) VALUES (@digest, @expires) ON CONFLICT (digest) DO NOTHING',
    );
    const tx = db.transaction((digest: string, expiresAt: number, before: number): boolean => {
      sweep.run({ before, digest, limit: CONSUMED_STATE_SWEEP_BATCH });
      return Number(insert.run({ digest, expires: expiresAt }).changes) === 1;
    });
    // IMMEDIATE: the write lock first, so another process consuming the same digest waits and then sees this row.
    this.#consume = (...args) => tx.immediate(...args);
  }

  consume(digest: string, expiresAt: number, now: number): boolean {
    checkConsumption(digest, expiresAt);
    return this.#consume(digest, expiresAt, sweepBefore(now));
  }
}

// One statement, so one transaction: the sweep skips rows another node's sweep holds, and the insert's
// ON CONFLICT makes a concurrent insert of the same digest wait for the first's commit, then do nothing.
const CONSUME_POSTGRES = `
  WITH swept AS (
    DELETE FROM consumed_request_states WHERE digest IN (
      SELECT digest FROM consumed_request_states WHERE expires_at <= $3 AND digest <> $1 ORDER BY expires_at LIMIT $4 FOR UPDATE SKIP LOCKED
    )
  )
  INSERT INTO consumed_request_states (digest, expires_at) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING RETURNING digest`;

/** The PostgreSQL half: true when this call recorded the digest (its first use), false when a row was there. */
export async function consumePostgres(pool: Pool, digest: string, expiresAt: number, now: number): Promise<boolean> {
  checkConsumption(digest, expiresAt);
  const { rowCount } = await pool.query(CONSUME_POSTGRES, [digest, expiresAt, sweepBefore(now), CONSUMED_STATE_SWEEP_BATCH]);
  return rowCount === 1;
}
