// Where the durable store lives: $SUPERPI_HOME, else ~/.super-pi, file super-pi.db; the directory is
// created on first use, readable by its owner only (transcripts hold code and prompts).

import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StoreError } from './errors.ts';
import { SqliteConversationStore, type SqliteStoreOptions } from './sqlite-store.ts';

export const HOME_ENV = 'SUPERPI_HOME';
export const DEFAULT_HOME_DIR = '.super-pi';
export const DATABASE_FILE_NAME = 'super-pi.db';
/** Pass as `home` for a private in-memory database that vanishes on close (tests). */
export const IN_MEMORY = ':memory:';
/** Mode of a store directory this module creates: owner only. An existing directory is left as it is. */
export const HOME_DIR_MODE = 0o700;

export interface OpenStoreOptions extends SqliteStoreOptions {
  /** The store directory, or `IN_MEMORY`. Default: `storeHome()`. */
  readonly home?: string;
  /** Read for `SUPERPI_HOME` when `home` is not given. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

/** `$SUPERPI_HOME` (resolved against the current directory when relative) when set and not empty, else `~/.super-pi`. */
export function storeHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[HOME_ENV];
  return fromEnv !== undefined && fromEnv !== '' ? path.resolve(fromEnv) : path.join(os.homedir(), DEFAULT_HOME_DIR);
}

/** The database file inside a store directory. */
export function databasePath(home: string): string {
  return path.join(home, DATABASE_FILE_NAME);
}

/**
 * The store when its database exists, else null without creating anything: what a read needs (a
 * transcript cannot be in a database that was never made, and a read must not make one).
 */
export function openExistingStore(options: OpenStoreOptions = {}): SqliteConversationStore | null {
  const home = options.home ?? storeHome(options.env);
  if (home !== IN_MEMORY && !existsSync(databasePath(path.resolve(home)))) return null;
  return openStore(options);
}

/** Opens the conversation store: creates the directory (mkdir -p) on first use, then the database in it. */
export function openStore(options: OpenStoreOptions = {}): SqliteConversationStore {
  const { home = storeHome(options.env), env: _env, ...sqlite } = options;
  if (home === IN_MEMORY) return SqliteConversationStore.open(IN_MEMORY, sqlite);
  const dir = path.resolve(home);
  try {
    mkdirSync(dir, { recursive: true, mode: HOME_DIR_MODE });
  } catch (cause) {
    throw new StoreError('open_failed', `cannot create the store directory ${dir} (set ${HOME_ENV} to choose another): ${String(cause)}`, { cause });
  }
  return SqliteConversationStore.open(databasePath(dir), sqlite);
}
