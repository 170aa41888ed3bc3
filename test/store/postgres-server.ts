// A throwaway PostgreSQL server for the tests: found among the installed binaries, initialised in a
// temporary directory, listening on a free 127.0.0.1 port (and a socket in that directory only), run as
// the `postgres` user when the tests run as root (PostgreSQL refuses root), stopped and deleted by
// `stop()` — and stopped even when the test process dies without calling it, because a watchdog shell
// between this process and the server shuts the server down when its stdin (our pipe) closes.
// Not a *.test.ts file.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Test } from 'uvu';
import { guarded } from '../hang-guard.ts';
import { failInCi } from '../requirements.ts';

const run = promisify(execFile);

/** How long initdb and the server's start-up may take on a loaded machine: a hang guard, not a speed claim. */
export const POSTGRES_START_GUARD_MS = 120_000;
/** How long a fast shutdown may take before the server is sent SIGQUIT (immediate shutdown). */
export const POSTGRES_STOP_GUARD_MS = 30_000;

export type PostgresAvailability =
  | { readonly ok: true; readonly bin: string; readonly user: { readonly uid: number; readonly gid: number } | null }
  | { readonly ok: false; readonly reason: string };

/** Directories to search instead of the defaults (path-delimited): lets a test see how a machine without PostgreSQL is treated. */
export const BIN_DIRS_ENV = 'SUPERPI_TEST_POSTGRES_BIN_DIRS';

/** Where the server binaries are looked for: Debian's versioned directories (newest first), the source-build default, then PATH. */
export function postgresBinDirs(): string[] {
  const override = process.env[BIN_DIRS_ENV];
  if (override !== undefined) return override.split(path.delimiter).filter((d) => d !== '');
  const dirs: string[] = [];
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a));
    dirs.push(...versions.map((v) => path.join(debian, v, 'bin')));
  }
  dirs.push('/usr/local/pgsql/bin', ...(process.env.PATH ?? '').split(path.delimiter).filter((d) => d !== ''));
  return dirs;
}

/** The binaries to use and the user to run them as, or why the PostgreSQL tests cannot run here. */
/** Where the PostgreSQL binaries are; missing in CI (`CI=true`) is a failure naming why (test/requirements.ts). */
export function findPostgres(): PostgresAvailability {
  const found = locatePostgres();
  failInCi('a PostgreSQL server', found.ok, found.ok ? '' : found.reason);
  return found;
}

function locatePostgres(): PostgresAvailability {
  const bin = postgresBinDirs().find((d) => existsSync(path.join(d, 'initdb')) && existsSync(path.join(d, 'postgres')));
  if (bin === undefined) return { ok: false, reason: `no PostgreSQL server binaries (initdb and postgres) in ${postgresBinDirs().join(', ')}; install postgresql` };
  if (process.getuid?.() !== 0) return { ok: true, bin, user: null };
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) return { ok: false, reason: 'running as root, and there is no postgres user to run the server as (PostgreSQL refuses to run as root)' };
  return { ok: true, bin, user: { uid: Number(uid), gid: Number(gid) } };
}

export interface PostgresServer {
  readonly port: number;
  /** The URL of database `name` on this server, as the superuser `postgres` (trust authentication). */
  url(name: string): string;
  /** A new, empty database; resolves to its URL. */
  createDatabase(): Promise<string>;
  /** Runs one statement as the superuser on database `name` (for checks a store offers no call for). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(name: string, sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
  /** Stops the server (fast shutdown) and keeps its data and port, for `restart` (a database lost and back). */
  halt(): Promise<void>;
  /** Starts a halted server again, on the same port with the same data. */
  restart(): Promise<void>;
  /** Stops the server (fast shutdown) and deletes its directory; idempotent. */
  stop(): Promise<void>;
}

// Starts the server as a background job, waits for it, and shuts it down (SIGINT: fast shutdown) when
// the reader of fd 3 (our stdin pipe) sees end of file — which the kernel delivers when this process
// ends, however it ends. Background jobs of a non-interactive shell read /dev/null, hence fd 3.
const WATCHDOG = 'exec 3<&0; "$@" & pg=$!; (read -r _ <&3; kill -INT "$pg" 2>/dev/null) & wait "$pg"';

export interface PostgresStartOptions {
  /**
   * Flush commits to disk, as a production server does. Default false: the tests check semantics, not
   * durability across a power cut; a benchmark comparing commit latency with SQLite (which syncs) sets it.
   */
  readonly fsync?: boolean;
}

/**
 * One server for a suite: started in its `before`, stopped in its `after`. The getter returns it, and
 * throws when it did not start (a test then fails saying so rather than on a null).
 */
export function postgresForSuite(suite: Test, found: PostgresAvailability & { ok: true }, options: PostgresStartOptions = {}): () => PostgresServer {
  let server: PostgresServer | null = null;
  suite.before(async () => {
    server = await startPostgres(found, options);
  });
  suite.after(async () => {
    await server?.stop();
  });
  return () => {
    if (server === null) throw new Error('the PostgreSQL server did not start');
    return server;
  };
}

/** Initialises and starts a server; `stop()` it in an `after` hook (and in `finally` of a failed start). */
export async function startPostgres(found: PostgresAvailability & { ok: true }, options: PostgresStartOptions = {}): Promise<PostgresServer> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'superpi-pg-'));
  const data = path.join(root, 'data');
  const sockets = path.join(root, 'sockets');
  const owner = found.user;
  let child: ChildProcess | null = null;
  let admin: pg.Pool | null = null;
  let stopped: Promise<void> | null = null;
  /** Halted on purpose: the admin pool's connections failing is expected, not worth a line. */
  let halted = false;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await admin?.end();
      if (child !== null) await stopServer(child, data);
      await rm(root, { recursive: true, force: true });
    })();
    return stopped;
  };
  try {
    await mkdir(data, { mode: 0o700 });
    await mkdir(sockets, { mode: 0o700 });
    if (owner !== null) for (const dir of [root, data, sockets]) await chown(dir, owner.uid, owner.gid);
    const asOwner = owner === null ? {} : { uid: owner.uid, gid: owner.gid };
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' };
    await guarded(
      run(path.join(found.bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], { ...asOwner, env }),
      'initdb',
      POSTGRES_START_GUARD_MS,
    );
    const port = await freePort();
    const args = [
      path.join(found.bin, 'postgres'), '-D', data, '-p', String(port), '-k', sockets,
      '-c', 'listen_addresses=127.0.0.1',
      // No test here cuts the server's power; what they check (commit before resolve, seq allocation,
      // isolation) does not depend on the server's fsync, which only slows a shared machine down.
      '-c', `fsync=${options.fsync === true ? 'on' : 'off'}`, '-c', 'shared_buffers=16MB', '-c', 'max_connections=100',
    ];
    const launch = async () => {
      const started = spawn('/bin/sh', ['-c', WATCHDOG, 'sh', ...args], { ...asOwner, env, stdio: ['pipe', 'ignore', 'pipe'] });
      child = started;
      await guarded(ready(started), 'the PostgreSQL server start', POSTGRES_START_GUARD_MS);
    };
    await launch();
    const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 2 });
    // Once stopping, the shutdown itself ends idle connections: that is no failure worth a line.
    pool.on('error', (error) => stopped === null && !halted && process.stderr.write(`test PostgreSQL admin connection failed: ${error.message}\n`));
    admin = pool;
    let databases = 0;
    const url = (name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`;
    return {
      port,
      url,
      async createDatabase() {
        const name = `store_test_${++databases}`;
        await pool.query(`CREATE DATABASE ${name}`);
        return url(name);
      },
      async query<R extends pg.QueryResultRow>(name: string, sql: string, params: unknown[] = []) {
        const client = new pg.Client({ connectionString: url(name) });
        await client.connect();
        try {
          return await client.query<R>(sql, params);
        } finally {
          await client.end();
        }
      },
      async halt() {
        if (child === null || halted) return;
        halted = true;
        await stopServer(child, data);
        child = null;
      },
      async restart() {
        if (!halted) return;
        await launch();
        halted = false;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Resolves when the server logs that it accepts connections; rejects, with its log, if it exits first. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      log += chunk;
      if (log.includes('database system is ready to accept connections')) resolve();
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => reject(new Error(`the PostgreSQL server exited during start-up (code ${code}, signal ${signal}):\n${log}`)));
  });
}

/** Ends the watchdog's stdin (it shuts the server down) and waits; SIGQUIT (immediate shutdown) if that hangs. */
async function stopServer(child: ChildProcess, data: string): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.end();
  try {
    await guarded(exited, 'the PostgreSQL server shutdown', POSTGRES_STOP_GUARD_MS);
  } catch (error) {
    const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.stderr.write(`${(error as Error).message}; sending SIGQUIT to ${pid}\n`);
    if (Number.isSafeInteger(pid) && pid > 0) process.kill(pid, 'SIGQUIT');
    await exited;
  }
}

/** A port nothing listens on right now (the kernel's pick), on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
