// The SQLite schema as an ordered list of versioned migrations, applied on open in one transaction and
// tracked in `PRAGMA user_version`; a database from a newer super-pi is refused, never downgraded.

import type { SqliteDatabase } from './sqlite-driver.ts';
import { StoreError } from './errors.ts';

export interface Migration {
  /** 1 for the first, then each next one is one more: the version the database has after `up`. */
  readonly version: number;
  /** What the migration changes, for people reading the history and for error messages. */
  readonly description: string;
  /** Runs inside the migration transaction; must not commit or change the journal mode. */
  up(db: SqliteDatabase): void;
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

// Seqs were one global counter, so a principal could read how busy everyone else was from the gaps in
// its own transcript. Now each conversation counts 1, 2, 3…: the counter is `last_seq` on the
// conversation row (bumped in the append transaction, so never reused), and (conversation_id, seq) is
// unique. Existing entries are renumbered in their old order; `undo` entries name the file snapshots
// they reverted by seq, so those numbers are translated too. The table is rebuilt because SQLite cannot
// drop AUTOINCREMENT or add a NOT NULL column without a default; the old global seq stays as the
// internal rowid (never shown).
const v2: Migration = {
  version: 2,
  description: 'transcript seqs numbered per conversation',
  up(db) {
    db.exec(`
      ALTER TABLE conversations ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE entries_v2 (
        id               INTEGER PRIMARY KEY,
        conversation_id  TEXT    NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq              INTEGER NOT NULL,
        time             INTEGER NOT NULL,
        type             TEXT    NOT NULL,
        payload          TEXT    NOT NULL
      ) STRICT;
      INSERT INTO entries_v2 (id, conversation_id, seq, time, type, payload)
        SELECT seq, conversation_id, ROW_NUMBER() OVER (PARTITION BY conversation_id ORDER BY seq), time, type, payload FROM entries;
    `);
    const undos = db.prepare<[], { id: number; conversation_id: string; payload: string }>("SELECT id, conversation_id, payload FROM entries_v2 WHERE type = 'undo'").all();
    const renumbered = db.prepare<[number, string], { seq: number }>('SELECT seq FROM entries_v2 WHERE id = ? AND conversation_id = ?');
    const rewrite = db.prepare<[string, number]>('UPDATE entries_v2 SET payload = ? WHERE id = ?');
    for (const undo of undos) {
      const payload: unknown = JSON.parse(undo.payload);
      if (typeof payload !== 'object' || payload === null || !('reverted' in payload) || !Array.isArray(payload.reverted)) continue;
      // A number that names no entry of this conversation named nothing before either: dropped, so it
      // cannot come to mean one of the new small seqs.
      const reverted = payload.reverted.flatMap((old: unknown) => {
        if (typeof old !== 'number') return [];
        const row = renumbered.get(old, undo.conversation_id);
        return row === undefined ? [] : [row.seq];
      });
      rewrite.run(JSON.stringify({ ...payload, reverted }), undo.id);
    }
    db.exec(`
      DROP TABLE entries;
      ALTER TABLE entries_v2 RENAME TO entries;
      CREATE UNIQUE INDEX entries_by_conversation ON entries (conversation_id, seq);
      UPDATE conversations SET last_seq = coalesce((SELECT max(seq) FROM entries WHERE conversation_id = conversations.id), 0);
    `);
  },
};

// Which process runs a `running` conversation (ownership.ts), so that one left `running` by a process
// that died can be found and marked `interrupted`. Rows from before have no owner (''), which counts as
// gone: the super-pi that wrote them was stopped to be upgraded.
const v3: Migration = {
  version: 3,
  description: 'the owner of a running conversation',
  up(db) {
    db.exec(`
      ALTER TABLE conversations ADD COLUMN owner TEXT NOT NULL DEFAULT '';
      CREATE INDEX conversations_running ON conversations (status) WHERE status = 'running';
    `);
  },
};

// Leases (task-lease.ts): the fencing epoch every fenced write compares, the lease expiry a takeover
// compares, and what the claimer kept for a node continuing the task; and the sessions' checkpoints.
// Rows from before get epoch 0 and a lapsed lease, which only matters to a PostgreSQL cluster's takeover.
const v4: Migration = {
  version: 4,
  description: 'task leases with a fencing epoch, and session checkpoints',
  up(db) {
    db.exec(`
      ALTER TABLE conversations ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE conversations ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE conversations ADD COLUMN task_setup TEXT;
      CREATE TABLE session_checkpoints (
        session_id  TEXT    PRIMARY KEY,
        principal   TEXT    NOT NULL,
        owner       TEXT    NOT NULL,
        epoch       INTEGER NOT NULL,
        bytes       BLOB    NOT NULL,
        updated_at  INTEGER NOT NULL
      ) STRICT;
    `);
  },
};

// The node registry (cluster-nodes.ts), as the PostgreSQL store has it; one SQLite file is one node, so
// its lease is on the store's clock (milliseconds), and the table holds at most that node's own row.
const v5: Migration = {
  version: 5,
  description: 'the node registry',
  up(db) {
    db.exec(`
      CREATE TABLE cluster_nodes (
        owner          TEXT    PRIMARY KEY,
        node_id        TEXT    NOT NULL,
        advertise_url  TEXT    NOT NULL,
        lease_expires  INTEGER NOT NULL
      ) STRICT;
    `);
  },
};

// What a task's last run finished with (task-result.ts), written with its status: `tasks/get` of a finished
// task reads this row instead of replaying the transcript. Rows from before have none; their result is
// rebuilt from the end of the transcript (task/task-result-tail.ts).
const v6: Migration = {
  version: 6,
  description: 'the result a task\'s last run finished with',
  up(db) {
    db.exec('ALTER TABLE conversations ADD COLUMN task_result TEXT;');
  },
};

// The retention of a Tasks-extension task created under `--task-ttl` (retention.ts); null for every other
// conversation, so rows from before are kept until deleted. The partial index holds only conversations
// with a retention, ordered by when they may expire: the sweep walks it and nothing else.
const v7: Migration = {
  version: 7,
  description: 'the retention of a Tasks-extension task',
  up(db) {
    db.exec(`
      ALTER TABLE conversations ADD COLUMN ttl_ms INTEGER;
      CREATE INDEX conversations_expiry ON conversations ((updated_at + ttl_ms)) WHERE ttl_ms IS NOT NULL;
    `);
  },
};

// A person's confirmation over 2026-07-28 runs its call once (consumed-states.ts): the accepted retry's
// `requestState` is recorded by digest, with the state's expiry so that the row can be swept once it is of
// no use. WITHOUT ROWID: the digest is the key, and the table is read by it alone (and swept by expiry).
const v8: Migration = {
  version: 8,
  description: 'spent 2026-07-28 confirmations (single-use requestState)',
  up(db) {
    db.exec(`
      CREATE TABLE consumed_request_states (
        digest      TEXT    PRIMARY KEY,
        expires_at  INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX consumed_request_states_expiry ON consumed_request_states (expires_at);
    `);
  },
};

// Each entry's payload size in bytes (its JSON text as UTF-8), so a read bounded by bytes (`EntriesOptions.maxBytes`)
// finds where to cut a page from the sizes alone. The column is added last, after `payload`, so a row's size
// sits behind its payload's overflow pages; the index (conversation_id, seq, payload_size) covers the cut's
// query, which then reads no payload page at all. Existing rows are measured once here: SQLite keeps text in
// the database's encoding, and CAST … AS BLOB gives those bytes, which are UTF-8 in every file super-pi makes
// (it never sets `PRAGMA encoding`; another encoding is refused rather than measured wrong).
const v9: Migration = {
  version: 9,
  description: 'the payload size of each transcript entry',
  up(db) {
    const encoding = db.pragma('encoding');
    if (encoding !== 'UTF-8') throw new Error(`the database's text encoding is ${String(encoding)}; super-pi measures payloads as UTF-8 and writes only UTF-8 databases`);
    db.exec(`
      ALTER TABLE entries ADD COLUMN payload_size INTEGER NOT NULL DEFAULT 0;
      UPDATE entries SET payload_size = length(CAST(payload AS BLOB));
      CREATE INDEX entries_sizes ON entries (conversation_id, seq, payload_size);
    `);
  },
};

// Reads of some entry types only (`EntriesOptions.types`: undo's snapshots, a task's snapshots since its last
// model turn) walk this index, one range per type, merged by seq (sqlite-typed-reads.ts): a filtered page of
// a long conversation costs the entries it returns, not every row after `afterSeq`. `payload_size` is in it
// so the cut of a page bounded by bytes reads the index alone, as entries_sizes serves the unfiltered one.
const v10: Migration = {
  version: 10,
  description: 'transcript entries indexed by type',
  up(db) {
    db.exec('CREATE INDEX entries_by_type ON entries (conversation_id, type, seq, payload_size);');
  },
};

/** Every migration, oldest first. Append only: a released migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [v1, v2, v3, v4, v5, v6, v7, v8, v9, v10];

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

export function schemaVersion(db: SqliteDatabase): number {
  const v = db.pragma('user_version');
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
export function migrate(db: SqliteDatabase, label: string, migrations: readonly Migration[] = MIGRATIONS): MigrationOutcome {
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
        // Rethrown inside the transaction, so the driver rolls every pending migration back.
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
