// The one seam between the SQLite store and a SQLite driver: node:sqlite (built into Node >= 22.5, no
// native compile) where the running Node has it, better-sqlite3 (a native addon) where it does not.

import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { StoreError } from './errors.ts';

export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';
export const SQLITE_DRIVERS: readonly SqliteDriverName[] = ['node:sqlite', 'better-sqlite3'];

export interface SqliteRunResult {
  readonly changes: number;
}

/** A prepared statement: `P` the bind parameters (positional, or one object of named ones), `R` a row. */
export interface SqliteStatement<P extends unknown[] = unknown[], R = unknown> {
  run(...params: P): SqliteRunResult;
  get(...params: P): R | undefined;
  all(...params: P): R[];
}

/** `fn` in a transaction: called as is it is DEFERRED, or a SAVEPOINT when already inside one. */
export interface SqliteTransaction<A extends unknown[], T> {
  (...args: A): T;
  deferred(...args: A): T;
  /** Takes the write lock before running `fn`, waiting up to the busy timeout for another writer. */
  immediate(...args: A): T;
}

export interface SqliteDatabase {
  readonly driver: SqliteDriverName;
  /** A private in-memory database (no file, no WAL). */
  readonly memory: boolean;
  prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): SqliteStatement<P, R>;
  /** Runs one or more statements that bind nothing and return nothing. */
  exec(sql: string): void;
  /** `PRAGMA <source>`: the first column of its first row (undefined for a pragma that sets). */
  pragma(source: string): unknown;
  transaction<A extends unknown[], T>(fn: (...args: A) => T): SqliteTransaction<A, T>;
  close(): void;
}

export interface OpenSqliteOptions {
  /** How long a statement waits for another connection's lock before SQLITE_BUSY. */
  readonly busyTimeoutMs: number;
  /** Default `defaultSqliteDriver()`. */
  readonly driver?: SqliteDriverName;
}

/** The parts of node:sqlite used here (the project's @types/node is Node 20's, which has no node:sqlite). */
interface NodeSqliteStatement {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface NodeSqliteDatabase {
  prepare(sql: string): NodeSqliteStatement;
  exec(sql: string): void;
  close(): void;
  /** Node >= 22.16 and 24: whether a transaction is open (SQLite may have rolled one back by itself). */
  readonly isTransaction?: boolean;
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string) => NodeSqliteDatabase;
}

let nodeSqlite: NodeSqliteModule | null | undefined;
/** node:sqlite, or null where this Node has none (Node 20; Node 22.5–22.12 without --experimental-sqlite). */
function loadNodeSqlite(): NodeSqliteModule | null {
  if (nodeSqlite !== undefined) return nodeSqlite;
  // Loading node:sqlite prints "ExperimentalWarning: SQLite is an experimental feature" once per process.
  // It is dropped (that one warning only, during the load only): the operator cannot act on it, CI runs
  // the store's tests on every Node major that `engines` names, and stderr carries the server's log.
  const emitWarning = process.emitWarning;
  process.emitWarning = function filtered(this: NodeJS.Process, ...args: Parameters<typeof process.emitWarning>): void {
    if (isSqliteExperimentalWarning(args)) return;
    Reflect.apply(emitWarning, this, args);
  } as typeof process.emitWarning;
  try {
    const mod: unknown = process.getBuiltinModule('node:sqlite');
    nodeSqlite = isNodeSqliteModule(mod) ? mod : null;
  } finally {
    process.emitWarning = emitWarning;
  }
  return nodeSqlite;
}

function isSqliteExperimentalWarning(args: unknown[]): boolean {
  const [warning, second] = args;
  const type = typeof second === 'string' ? second : typeof second === 'object' && second !== null && 'type' in second ? second.type : undefined;
  const message = warning instanceof Error ? warning.message : String(warning);
  return (type === 'ExperimentalWarning' || (warning instanceof Error && warning.name === 'ExperimentalWarning')) && /\bSQLite\b/.test(message);
}

function isNodeSqliteModule(mod: unknown): mod is NodeSqliteModule {
  return typeof mod === 'object' && mod !== null && 'DatabaseSync' in mod && typeof mod.DatabaseSync === 'function';
}

let betterSqlite3: typeof BetterSqlite3 | null = null;
function loadBetterSqlite3(): typeof BetterSqlite3 {
  if (betterSqlite3 !== null) return betterSqlite3;
  try {
    const driver = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    // The native addon loads with the first database, so open one: an addon built for another Node's ABI
    // fails here, with the advice below, rather than as an obscure error on the store's first open.
    new driver(':memory:').close();
    betterSqlite3 = driver;
  } catch (cause) {
    throw new StoreError(
      'open_failed',
      `this Node (${process.version}) has no node:sqlite, and better-sqlite3 does not load (${String(cause)}); ` +
        'use Node >= 22.13, or install better-sqlite3 for this Node (npm rebuild better-sqlite3, which needs a C++ toolchain where no prebuilt binary can be fetched)',
      { cause },
    );
  }
  return betterSqlite3;
}

/** node:sqlite where this Node has it (no native addon to build or load), else better-sqlite3. */
export function defaultSqliteDriver(): SqliteDriverName {
  return loadNodeSqlite() === null ? 'better-sqlite3' : 'node:sqlite';
}

/** Whether `driver` can open a database in this process (node:sqlite: this Node has it; better-sqlite3: its addon loads). */
export function sqliteDriverAvailable(driver: SqliteDriverName): boolean {
  if (driver === 'node:sqlite') return loadNodeSqlite() !== null;
  try {
    loadBetterSqlite3();
    return true;
  } catch (error) {
    if (error instanceof StoreError) return false;
    throw error;
  }
}

/** Opens (creating if needed) `filename`, or `':memory:'`, with the busy timeout set. Throws what the driver throws. */
export function openSqlite(filename: string, options: OpenSqliteOptions): SqliteDatabase {
  const driver = options.driver ?? defaultSqliteDriver();
  if (driver === 'better-sqlite3') {
    // `timeout` is SQLite's busy timeout: a locked database is retried for this long before SQLITE_BUSY.
    return fromBetterSqlite3(new (loadBetterSqlite3())(filename, { timeout: options.busyTimeoutMs }));
  }
  const mod = loadNodeSqlite();
  if (mod === null) throw new StoreError('open_failed', `this Node (${process.version}) has no node:sqlite; it needs Node >= 22.13 (or 22.5 with --experimental-sqlite)`);
  const db = new mod.DatabaseSync(filename);
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs)}`);
  } catch (error) {
    db.close();
    throw error;
  }
  return fromNodeSqlite(db, filename === ':memory:' || filename === '');
}

/** A better-sqlite3 connection behind the seam (openSqlite uses it; the driver bench passes one built for another Node). */
export function fromBetterSqlite3(db: BetterSqlite3.Database): SqliteDatabase {
  return {
    driver: 'better-sqlite3',
    memory: db.memory,
    prepare<P extends unknown[], R>(sql: string): SqliteStatement<P, R> {
      const statement = db.prepare<unknown[], R>(sql);
      return {
        run: (...params) => ({ changes: statement.run(...params).changes }),
        get: (...params) => statement.get(...params),
        all: (...params) => statement.all(...params),
      };
    },
    exec: (sql) => void db.exec(sql),
    pragma: (source) => db.pragma(source, { simple: true }),
    transaction<A extends unknown[], T>(fn: (...args: A) => T): SqliteTransaction<A, T> {
      const tx = db.transaction(fn);
      return Object.assign((...args: A) => tx(...args), { deferred: (...args: A) => tx.deferred(...args), immediate: (...args: A) => tx.immediate(...args) });
    },
    close: () => void db.close(),
  };
}

function fromNodeSqlite(db: NodeSqliteDatabase, memory: boolean): SqliteDatabase {
  /** Open transactions on this connection: the outermost is BEGIN … COMMIT, inner ones are savepoints. */
  let depth = 0;
  const within = <A extends unknown[], T>(fn: (...args: A) => T, begin: 'BEGIN DEFERRED' | 'BEGIN IMMEDIATE', args: A): T => {
    const savepoint = depth > 0 ? `superpi_tx_${depth}` : null;
    db.exec(savepoint === null ? begin : `SAVEPOINT ${savepoint}`);
    depth += 1;
    let result: T;
    try {
      result = fn(...args);
    } catch (error) {
      depth -= 1;
      rollback(savepoint);
      throw error;
    }
    depth -= 1;
    try {
      db.exec(savepoint === null ? 'COMMIT' : `RELEASE ${savepoint}`);
    } catch (error) {
      rollback(savepoint);
      throw error;
    }
    return result;
  };
  const rollback = (savepoint: string | null): void => {
    // Some errors (SQLITE_FULL, an I/O error) make SQLite roll the whole transaction back itself; then
    // there is nothing left to roll back, and ROLLBACK would fail with an error hiding the real one.
    if (db.isTransaction === false) return;
    if (savepoint === null) db.exec('ROLLBACK');
    else db.exec(`ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
  };
  return {
    driver: 'node:sqlite',
    memory,
    prepare<P extends unknown[], R>(sql: string): SqliteStatement<P, R> {
      const statement = db.prepare(sql);
      return {
        run: (...params) => ({ changes: Number(statement.run(...params).changes) }),
        // Rows come back as plain objects of the selected columns: the caller's R describes them.
        get: (...params) => statement.get(...params) as R | undefined,
        all: (...params) => statement.all(...params) as R[],
      };
    },
    exec: (sql) => db.exec(sql),
    pragma(source) {
      const row = db.prepare(`PRAGMA ${source}`).get();
      if (typeof row !== 'object' || row === null) return undefined;
      return Object.values(row)[0];
    },
    transaction<A extends unknown[], T>(fn: (...args: A) => T): SqliteTransaction<A, T> {
      return Object.assign((...args: A) => within(fn, 'BEGIN DEFERRED', args), {
        deferred: (...args: A) => within(fn, 'BEGIN DEFERRED', args),
        immediate: (...args: A) => within(fn, 'BEGIN IMMEDIATE', args),
      });
    },
    close: () => db.close(),
  };
}
