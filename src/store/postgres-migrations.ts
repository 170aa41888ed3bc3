// The PostgreSQL schema as an ordered list of versioned migrations, applied when a store opens: under a
// session advisory lock, so that nodes starting together do not both migrate (the second waits, then
// finds the schema current), and in one transaction, so a failed migration leaves the version before it.
// The version lives in a one-row table; a database from a newer super-pi is refused, never downgraded.

import type { ClientBase } from 'pg';
import { StoreError } from './errors.ts';

export interface PostgresMigration {
  /** 1 for the first, then each next one is one more: the version the database has after `up`. */
  readonly version: number;
  /** What the migration changes, for people reading the history and for error messages. */
  readonly description: string;
  /** Runs inside the migration transaction; must not commit. */
  up(client: ClientBase): Promise<void>;
}

/**
 * The advisory lock key (two 32-bit halves, PostgreSQL's two-key form) that serializes migrations:
 * ASCII "spi" and "mig". Any other application sharing the database must not use this pair.
 */
export const MIGRATION_LOCK_KEY: readonly [number, number] = [0x737069, 0x6d6967];

/** The one-row table holding the schema version. */
export const VERSION_TABLE = 'superpi_schema_version';

// Mirrors the SQLite schema at its version 3 (migrations.ts) in one step: conversations with their own
// seq counter (`last_seq`) and owner, entries unique by (conversation_id, seq). Differences, and why:
// - `id` is COLLATE "C": lists page by (updated_at, id), and byte order is what SQLite uses and what
//   JavaScript sorts by; a linguistic collation could order two ids differently from both.
// - CHECK constraints on `status`, `type` and `seq > 0`: PostgreSQL can change a constraint without
//   rebuilding the table, so the database enforces what the store writes rather than trusting it.
// - `payload` is text, not jsonb: jsonb refuses the "\u0000" escape and re-orders keys, and the store
//   never queries inside a payload; text gives back exactly the JSON that was appended.
// - times are bigint milliseconds, as in SQLite, so `now` can be injected and compared across backends.
const v1: PostgresMigration = {
  version: 1,
  description: 'conversations (with their seq counter and owner) and their transcript entries',
  async up(client) {
    await client.query(`
      CREATE TABLE conversations (
        id          text COLLATE "C" PRIMARY KEY,
        principal   text   NOT NULL,
        session_id  text   NOT NULL,
        harness     text   NOT NULL,
        status      text   NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted')),
        title       text,
        created_at  bigint NOT NULL,
        updated_at  bigint NOT NULL,
        last_seq    bigint NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
        owner       text   NOT NULL
      );
      -- List pages: one principal's conversations, newest activity first, id as the tie-break.
      CREATE INDEX conversations_by_principal ON conversations (principal, updated_at, id);
      CREATE INDEX conversations_by_session ON conversations (principal, session_id, updated_at, id);
      CREATE INDEX conversations_running ON conversations (status) WHERE status = 'running';

      CREATE TABLE entries (
        conversation_id  text COLLATE "C" NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq              bigint NOT NULL CHECK (seq > 0),
        time             bigint NOT NULL,
        type             text   NOT NULL CHECK (type IN ('user', 'model', 'tool_call', 'tool_result', 'tool_interrupted', 'final', 'error', 'file_snapshot', 'undo', 'interrupted')),
        payload          text   NOT NULL,
        CONSTRAINT entries_seq_unique PRIMARY KEY (conversation_id, seq)
      );
    `);
  },
};

// Leases (task-lease.ts): `epoch` is compared by every fenced write in its own statement, `lease_expires`
// by a takeover; `task_setup` is what the claimer kept for a node continuing the task (JSON text, as
// payloads). Rows from before get epoch 0 and a lapsed lease: their nodes were stopped for the upgrade,
// so another node may take them over. Session checkpoints: one row per MCP session, fenced the same way.
const v2: PostgresMigration = {
  version: 2,
  description: 'task leases with a fencing epoch, and session checkpoints',
  async up(client) {
    await client.query(`
      ALTER TABLE conversations
        ADD COLUMN epoch         bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0),
        ADD COLUMN lease_expires bigint NOT NULL DEFAULT 0,
        ADD COLUMN task_setup    text;
      CREATE INDEX conversations_lease ON conversations (lease_expires) WHERE status = 'running';

      CREATE TABLE session_checkpoints (
        session_id  text COLLATE "C" PRIMARY KEY,
        principal   text   NOT NULL,
        owner       text   NOT NULL,
        epoch       bigint NOT NULL CHECK (epoch > 0),
        bytes       bytea  NOT NULL,
        updated_at  bigint NOT NULL
      );
    `);
  },
};

// The node registry (cluster-nodes.ts): one row per running node (owner key = node id + incarnation),
// where other nodes reach it, and its lease on the DATABASE clock (timestamptz compared with now()), so
// the nodes' own clocks never decide whose lease lapsed.
const v3: PostgresMigration = {
  version: 3,
  description: 'the node registry: advertise URLs and node leases on the database clock',
  async up(client) {
    await client.query(`
      CREATE TABLE cluster_nodes (
        owner          text COLLATE "C" PRIMARY KEY,
        node_id        text        NOT NULL,
        advertise_url  text        NOT NULL,
        lease_expires  timestamptz NOT NULL
      );
    `);
  },
};

// The session event log (SSE events on a PostgreSQL store, session-events.ts): one head row per session
// holds its principal (checked by every read, so a resumption on any node is the principal's only) and
// its seq counter, bumped in the same statement that inserts the event — the row lock makes appenders
// on every node take turns, so a session's seqs are unique and, in commit order, without gaps; the
// primary key (session_id, seq) refuses a duplicate if anything ever got past it. `stream` names the
// SSE stream (a POST's first request key, or the standalone GET stream); `ends` marks the event after
// which that stream has nothing more (the last answer of a POST). Retention: SESSION_EVENTS_KEPT per
// session (pruned by each append) and SESSION_EVENTS_MAX_AGE_MS (pruned by each node's sweep).
const v4: PostgresMigration = {
  version: 4,
  description: 'session event log: SSE events by session and seq, for Last-Event-ID on any node',
  async up(client) {
    await client.query(`
      CREATE TABLE session_event_heads (
        session_id  text COLLATE "C" PRIMARY KEY,
        principal   text   NOT NULL,
        last_seq    bigint NOT NULL CHECK (last_seq > 0),
        updated_at  bigint NOT NULL
      );
      CREATE TABLE session_events (
        session_id  text COLLATE "C" NOT NULL,
        seq         bigint  NOT NULL CHECK (seq > 0),
        stream      text    NOT NULL,
        data        text    NOT NULL,
        ends        boolean NOT NULL DEFAULT false,
        created_at  bigint  NOT NULL,
        CONSTRAINT session_events_seq_unique PRIMARY KEY (session_id, seq)
      );
      CREATE INDEX session_events_age ON session_events (created_at);
      CREATE INDEX session_event_heads_age ON session_event_heads (updated_at);
    `);
  },
};

// What a task's last run finished with (task-result.ts, JSON text as payloads), written with its status:
// `tasks/get` of a finished task reads this row instead of replaying the transcript. Rows from before have
// none; their result is rebuilt from the end of the transcript (task/task-result-tail.ts).
const v5: PostgresMigration = {
  version: 5,
  description: 'the result a task\'s last run finished with',
  async up(client) {
    await client.query('ALTER TABLE conversations ADD COLUMN task_result text');
  },
};

// A Tasks-extension task parked at a question to its person (`input_required`, task-input.ts) is neither
// running (no lease: no node takes it over) nor interrupted (which means its run died): a status of its own.
const v6: PostgresMigration = {
  version: 6,
  description: "conversation status 'input_required': a task parked for its person's answer",
  async up(client) {
    await client.query(`
      ALTER TABLE conversations DROP CONSTRAINT conversations_status_check;
      ALTER TABLE conversations ADD CONSTRAINT conversations_status_check
        CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted', 'input_required'));
    `);
  },
};

// A parked task's questions may be answered one at a time: each answer but the last is an entry of its own
// (`person_answer`, recordParkedAnswer), so that any node sees which are answered.
const v7: PostgresMigration = {
  version: 7,
  description: "entry type 'person_answer': one answer of several a parked task waits for",
  async up(client) {
    await client.query(`
      ALTER TABLE entries DROP CONSTRAINT entries_type_check;
      ALTER TABLE entries ADD CONSTRAINT entries_type_check
        CHECK (type IN ('user', 'model', 'tool_call', 'tool_result', 'tool_interrupted', 'final', 'error', 'file_snapshot', 'undo', 'interrupted', 'person_answer'));
    `);
  },
};

// The retention of a Tasks-extension task created under `--task-ttl` (retention.ts); null for every other
// conversation, so rows from before are kept until deleted. The partial index holds only conversations with
// a retention, ordered by when they may expire: the sweep walks it and nothing else.
const v8: PostgresMigration = {
  version: 8,
  description: 'the retention of a Tasks-extension task',
  async up(client) {
    await client.query(`
      ALTER TABLE conversations ADD COLUMN ttl_ms bigint CHECK (ttl_ms IS NULL OR ttl_ms > 0);
      CREATE INDEX conversations_expiry ON conversations ((updated_at + ttl_ms)) WHERE ttl_ms IS NOT NULL;
    `);
  },
};

// A person's confirmation over 2026-07-28 runs its call once, on whichever node (consumed-states.ts): the
// accepted retry's `requestState` is recorded by digest, with the state's expiry so that the row can be swept.
const v9: PostgresMigration = {
  version: 9,
  description: 'spent 2026-07-28 confirmations (single-use requestState)',
  async up(client) {
    await client.query(`
      CREATE TABLE consumed_request_states (
        digest      text   PRIMARY KEY,
        expires_at  bigint NOT NULL
      );
      CREATE INDEX consumed_request_states_expiry ON consumed_request_states (expires_at);
    `);
  },
};

// Each entry's payload size in bytes (its JSON text as UTF-8), so a read bounded by bytes (`EntriesOptions.maxBytes`)
// finds where to cut a page from the sizes alone, without reading a payload (large ones live out of line, in
// TOAST). Existing rows are measured once here, as UTF-8 whatever the server's encoding; then the column is
// NOT NULL without a default, so an insert that does not measure its payload fails rather than records 0.
const v10: PostgresMigration = {
  version: 10,
  description: 'the payload size of each transcript entry',
  async up(client) {
    await client.query(`
      ALTER TABLE entries ADD COLUMN payload_size bigint CHECK (payload_size >= 0);
      UPDATE entries SET payload_size = octet_length(convert_to(payload, 'UTF8'));
      ALTER TABLE entries ALTER COLUMN payload_size SET NOT NULL;
    `);
  },
};

// Reads of some entry types only (`EntriesOptions.types`: undo's snapshots, a task's snapshots since its last
// model turn) find their rows through this index instead of walking every entry of the conversation after
// `afterSeq`; `payload_size` is carried in it so a page's cut by bytes can be an index-only scan.
const v11: PostgresMigration = {
  version: 11,
  description: 'transcript entries indexed by type',
  async up(client) {
    await client.query('CREATE INDEX entries_by_type ON entries (conversation_id, type, seq) INCLUDE (payload_size)');
  },
};

/** Every migration, oldest first. Append only: a released migration is never edited. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11];

/** The first problem with a migration list (versions must run 1, 2, 3… with a description each), or null. */
export function postgresMigrationsProblem(migrations: readonly PostgresMigration[]): string | null {
  for (const [i, m] of migrations.entries()) {
    if (m.version !== i + 1) return `migration #${i + 1} ("${m.description}") has version ${m.version}; versions must run 1, 2, 3… in order`;
    if (m.description.trim() === '') return `migration ${m.version} has no description`;
  }
  return null;
}

/** The schema version of the database `client` is connected to: 0 when it was never migrated. */
export async function postgresSchemaVersion(client: ClientBase): Promise<number> {
  const table = await client.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [VERSION_TABLE]);
  if (table.rows[0]?.found == null) return 0;
  const row = await client.query<{ version: number }>(`SELECT version FROM ${VERSION_TABLE}`);
  const version = row.rows[0]?.version;
  if (row.rows.length !== 1 || typeof version !== 'number') throw new StoreError('corrupt', `${VERSION_TABLE} must hold exactly one version row; it holds ${row.rows.length}`);
  return version;
}

export interface PostgresMigrationOutcome {
  readonly from: number;
  readonly to: number;
}

/**
 * Brings the database to the newest version. Takes the migration advisory lock first and reads the
 * version under it, so of several stores opening at once exactly one runs the pending migrations; the
 * others wait for it and find nothing to do. All pending migrations run in one transaction (DDL is
 * transactional in PostgreSQL), followed by the new version; a throw rolls all of them back and
 * `migration_failed` names the one that failed. `label` names the database in messages (no password).
 */
export async function migratePostgres(client: ClientBase, label: string, migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS): Promise<PostgresMigrationOutcome> {
  const problem = postgresMigrationsProblem(migrations);
  if (problem !== null) throw new StoreError('invalid_migrations', problem);
  const latest = migrations.length;
  await client.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATION_LOCK_KEY]);
  try {
    const current = await postgresSchemaVersion(client);
    refuseNewer(current, latest, label);
    if (current === latest) return { from: current, to: current };
    await client.query('BEGIN');
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)`);
      for (const m of migrations.slice(current)) {
        try {
          await m.up(client);
        } catch (cause) {
          throw new StoreError('migration_failed', `${label}: migration ${m.version} ("${m.description}") failed; the database stays at version ${current}: ${String(cause)}`, { cause });
        }
      }
      await client.query(`INSERT INTO ${VERSION_TABLE} (version) VALUES ($1) ON CONFLICT (one) DO UPDATE SET version = excluded.version`, [latest]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
    return { from: current, to: latest };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, $2)', [...MIGRATION_LOCK_KEY]);
  }
}

function refuseNewer(version: number, latest: number, label: string): void {
  if (version <= latest) return;
  throw new StoreError(
    'schema_too_new',
    `${label}: the database has schema version ${version}, but this super-pi knows versions up to ${latest}; ` +
      'it was written by a newer super-pi. Use that version, or point the store at another database.',
  );
}
