// The SQLite schema as an ordered list of versioned migrations, applied on open in one transaction and
// tracked in `PRAGMA user_version`; a database from a newer super-pi is refused, never downgraded.

import type Database from 'better-sqlite3';
import { StoreError } from './errors.ts';

export interface Migration {
  /** 1 for the first, then each next one is one more: the version the database has after `up`. */
  readonly version: number;
  /** What the migration changes, for people reading the history and for error messages. */
  readonly description: string;
  /** Runs inside the migration transaction; must not commit or change the journal mode. */
  up(db: Database.Database): void;
}

// No CHECK constraints on `status` and `type`: SQLite can change one only by rebuilding the table, and
// the store validates both before every write (it is the only writer). STRICT makes the column types real.
const v1: Migration = {
  version: 1,
  description: 'conversations and their transcript entries',
  up(db) {
    db.exec(`
      CREATE TABLE conversations (
        id          TEXT    PRIMARY KEY,
        principal   TEXT    NOT NULL,
        session_id  TEXT    NOT NULL,
        harness     TEXT    NOT NULL,
        status      TEXT    NOT NULL,
        title       TEXT,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
      ) STRICT;
      -- List pages: one principal's conversations, newest activity first, id as the tie-break.
      CREATE INDEX conversations_by_principal ON conversations (principal, updated_at, id);
      CREATE INDEX conversations_by_session ON conversations (principal, session_id, updated_at, id);

      -- AUTOINCREMENT, not a plain rowid: a seq is never reused, even after the newest entries are deleted.
      CREATE TABLE entries (
        seq              INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id  TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        time             INTEGER NOT NULL,
        type             TEXT    NOT NULL,
        payload          TEXT    NOT NULL
      ) STRICT;
      CREATE INDEX entries_by_conversation ON entries (conversation_id, seq);
    `);
  },
};

/** Every migration, oldest first. Append only: a released migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [v1];

/** The first problem with a migration list (versions must run 1, 2, 3… with a description each), or null. */
export function migrationsProblem(migrations: readonly Migration[]): string | null {
  for (const [i, m] of migrations.entries()) {
    if (m.version !== i + 1) return `migration #${i + 1} ("${m.description}") has version ${m.version}; versions must run 1, 2, 3… in order`;
    if (m.description.trim() === '') return `migration ${m.version} has no description`;
  }
  return null;
}

/** The newest version in the list: what a database has after `migrate`. */
export function latestVersion(migrations: readonly Migration[] = MIGRATIONS): number {
  return migrations.length;
}

export function schemaVersion(db: Database.Database): number {
  const v = db.pragma('user_version', { simple: true });
  if (typeof v !== 'number') throw new StoreError('open_failed', `PRAGMA user_version returned ${String(v)}, not a number`);
  return v;
}

export interface MigrationOutcome {
  readonly from: number;
  readonly to: number;
}

/**
 * Brings the database to the newest version. Already there: returns without taking a write lock. Pending
 * migrations run in one IMMEDIATE transaction (so two processes opening a fresh file do not both migrate:
 * the second waits, then sees the new version), each followed by its `user_version`; if one throws,
 * everything rolls back and `migration_failed` names it. `label` names the database in messages.
 */
export function migrate(db: Database.Database, label: string, migrations: readonly Migration[] = MIGRATIONS): MigrationOutcome {
  const problem = migrationsProblem(migrations);
  if (problem !== null) throw new StoreError('invalid_migrations', problem);
  const latest = latestVersion(migrations);
  const from = schemaVersion(db);
  refuseNewer(from, latest, label);
  if (from === latest) return { from, to: from };

  const apply = db.transaction((): MigrationOutcome => {
    const current = schemaVersion(db);
    refuseNewer(current, latest, label);
    for (const m of migrations.slice(current)) {
      try {
        m.up(db);
      } catch (cause) {
        // Rethrown inside the transaction, so better-sqlite3 rolls every pending migration back.
        throw new StoreError('migration_failed', `${label}: migration ${m.version} ("${m.description}") failed; the database stays at version ${current}: ${String(cause)}`, { cause });
      }
      db.pragma(`user_version = ${m.version}`);
    }
    return { from: current, to: latest };
  });
  return apply.immediate();
}

function refuseNewer(version: number, latest: number, label: string): void {
  if (version <= latest) return;
  throw new StoreError(
    'schema_too_new',
    `${label}: the database has schema version ${version}, but this super-pi knows versions up to ${latest}; ` +
      'it was written by a newer super-pi. Use that version, or point SUPERPI_HOME at another directory.',
  );
}
