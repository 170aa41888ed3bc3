// The SQLite driver seam: which driver this Node gets by default, and the same behaviour from each driver
// that loads here (node:sqlite on Node >= 22.13, better-sqlite3 where its addon is built for this Node).

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultSqliteDriver, openSqlite, SQLITE_DRIVERS, type SqliteDatabase, sqliteDriverAvailable, type SqliteDriverName } from '../../src/store/sqlite-driver.ts';
import { removeHome, tempHome } from './helpers.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const hasNodeSqlite = process.getBuiltinModule('node:sqlite') !== undefined;

test('the default is node:sqlite where this Node has it, else better-sqlite3', () => {
  assert.is(defaultSqliteDriver(), hasNodeSqlite ? 'node:sqlite' : 'better-sqlite3');
  assert.ok(sqliteDriverAvailable(defaultSqliteDriver()), 'the default driver opens databases here');
});

test('opening a store prints nothing on stdout and no ExperimentalWarning on stderr', () => {
  const child = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures', 'open-store-child.ts')], { encoding: 'utf8', timeout: 60_000 });
  assert.is(child.status, 0, child.stderr);
  assert.is(child.stdout, '');
  assert.not.match(child.stderr, /ExperimentalWarning/);
});

function withDatabase(driver: SqliteDriverName, body: (db: SqliteDatabase, file: string) => void): () => Promise<void> {
  return async () => {
    const home = await tempHome();
    const file = path.join(home, 'test.db');
    const db = openSqlite(file, { busyTimeoutMs: 0, driver });
    try {
      db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL) STRICT');
      body(db, file);
    } finally {
      db.close();
      await removeHome(home);
    }
  };
}

const values = (db: SqliteDatabase): string[] => db.prepare<[], { v: string }>('SELECT v FROM t ORDER BY k').all().map((r) => r.v);

for (const driver of SQLITE_DRIVERS.filter(sqliteDriverAvailable)) {
  test(`${driver}: run reports changes, get finds a row or undefined, all returns rows; named and positional parameters bind`, withDatabase(driver, (db) => {
    const insert = db.prepare<[{ k: number; v: string }]>('INSERT INTO t (k, v) VALUES (@k, @v)');
    assert.is(insert.run({ k: 1, v: 'a' }).changes, 1);
    insert.run({ k: 2, v: 'b' });
    assert.is(db.prepare<[string]>('UPDATE t SET v = v || ?').run('!').changes, 2);
    assert.equal({ ...db.prepare<[number], { v: string }>('SELECT v FROM t WHERE k = ?').get(2) }, { v: 'b!' });
    assert.is(db.prepare<[number], { v: string }>('SELECT v FROM t WHERE k = ?').get(3), undefined);
    assert.equal(values(db), ['a!', 'b!']);
  }));

  test(`${driver}: blobs go in as bytes and come back equal`, withDatabase(driver, (db) => {
    db.exec('CREATE TABLE b (x BLOB NOT NULL) STRICT');
    db.prepare<[Uint8Array]>('INSERT INTO b (x) VALUES (?)').run(new Uint8Array([0, 255, 7]));
    const row = db.prepare<[], { x: Uint8Array }>('SELECT x FROM b').get();
    assert.equal([...new Uint8Array(row?.x ?? [])], [0, 255, 7]);
  }));

  test(`${driver}: pragma gives the first column of its row, undefined when it sets; the file is not in memory`, withDatabase(driver, (db) => {
    assert.is(db.pragma('journal_mode = WAL'), 'wal');
    assert.is(db.pragma('user_version = 7'), undefined);
    assert.is(db.pragma('user_version'), 7);
    assert.is(db.memory, false);
    assert.is(db.driver, driver);
  }));

  test(`${driver}: ':memory:' is a private in-memory database`, () => {
    const db = openSqlite(':memory:', { busyTimeoutMs: 0, driver });
    assert.is(db.memory, true);
    db.close();
  });

  test(`${driver}: a transaction commits and returns its function's value; a throw rolls all of it back`, withDatabase(driver, (db) => {
    const insert = db.prepare<[number, string]>('INSERT INTO t (k, v) VALUES (?, ?)');
    const tx = db.transaction((k: number, fail: boolean): number => {
      insert.run(k, 'x');
      insert.run(k + 1, 'y');
      if (fail) throw new Error('boom');
      return k;
    });
    assert.is(tx.immediate(1, false), 1);
    assert.throws(() => tx.immediate(10, true), /boom/);
    assert.throws(() => tx.deferred(20, true), /boom/);
    assert.throws(() => tx(30, true), /boom/);
    assert.equal(values(db), ['x', 'y']);
    // The connection is usable again: no transaction was left open.
    assert.is(tx(40, false), 40);
    assert.equal(values(db), ['x', 'y', 'x', 'y']);
  }));

  test(`${driver}: a nested transaction that throws undoes only its own writes when the outer one catches`, withDatabase(driver, (db) => {
    const insert = db.prepare<[number, string]>('INSERT INTO t (k, v) VALUES (?, ?)');
    const inner = db.transaction((k: number) => {
      insert.run(k, 'inner');
      throw new Error('inner fails');
    });
    const outer = db.transaction(() => {
      insert.run(1, 'outer');
      assert.throws(() => inner(2), /inner fails/);
      insert.run(3, 'after');
    });
    outer.immediate();
    assert.equal(values(db), ['outer', 'after']);
  }));

  test(`${driver}: a failing statement inside a transaction rolls back its earlier writes`, withDatabase(driver, (db) => {
    const insert = db.prepare<[number, string]>('INSERT INTO t (k, v) VALUES (?, ?)');
    const tx = db.transaction(() => {
      insert.run(1, 'first');
      insert.run(1, 'duplicate key');
    });
    assert.throws(() => tx.immediate(), /UNIQUE constraint failed/);
    assert.equal(values(db), []);
  }));

  test(`${driver}: immediate takes the write lock at once, so another connection cannot write meanwhile`, withDatabase(driver, (db, file) => {
    db.pragma('journal_mode = WAL');
    const other = openSqlite(file, { busyTimeoutMs: 0, driver });
    try {
      const write = () => other.exec("INSERT INTO t (k, v) VALUES (99, 'other')");
      db.transaction(() => assert.throws(write, /locked|busy/i)).immediate();
      // A deferred transaction that has not written yet holds no write lock.
      db.transaction(write).deferred();
      assert.equal(values(db), ['other']);
    } finally {
      other.close();
    }
  }));
}

test.run();
