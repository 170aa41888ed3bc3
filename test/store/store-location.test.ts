// `--store` as the operator writes it: the embedded SQLite store by default, a PostgreSQL database by
// URL, anything else refused with a message that says what --store takes — and that message, like the
// label logs use, never holds the password, whatever the value looks like.

import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseStoreLocation, StoreLocationError } from '../../src/store/store-location.ts';

/** The message `parseStoreLocation` throws for `value`, or null when it accepts it. */
function refusal(value: string): string | null {
  try {
    parseStoreLocation(value);
    return null;
  } catch (err) {
    if (!(err instanceof StoreLocationError)) throw err;
    return err.message;
  }
}

test('no value, an empty one and "sqlite" name the embedded SQLite store', () => {
  assert.equal(parseStoreLocation(undefined), { kind: 'sqlite' });
  assert.equal(parseStoreLocation(''), { kind: 'sqlite' });
  assert.equal(parseStoreLocation('sqlite'), { kind: 'sqlite' });
});

test('postgres:// and postgresql:// URLs name a PostgreSQL database, kept as given, labelled without user and password', () => {
  const url = 'postgres://app:s3cret@db.internal:5433/superpi?sslmode=require';
  assert.equal(parseStoreLocation(url), { kind: 'postgres', url, label: 'postgres://db.internal:5433/superpi' });
  assert.equal(parseStoreLocation('postgresql:///superpi'), { kind: 'postgres', url: 'postgresql:///superpi', label: 'postgresql:///superpi' });
});

test('another scheme, a value that is no URL and a URL without // are refused, saying what --store takes', () => {
  for (const value of ['mysql://u:p@h/db', 'not a url', 'postgres:u:p@h/db', './super-pi.db', 'postgres://h:99999/db']) {
    assert.match(refusal(value) ?? 'accepted', /^--store takes sqlite or a URL postgres:\/\/user:password@host:port\/database/, value);
  }
});

test('a refused URL is named by its scheme only', () => {
  assert.match(refusal('redis://u:hunter2@cache:6379/0?password=hunter3') ?? '', /not a redis: URL \(the rest is not shown, as it may hold a password\)$/);
  assert.match(refusal('postgres://u:1234/ter2@db/x') ?? '', /written %2F, %40 and %3A; the value given is not one/, 'a password with an unescaped slash');
});

test('property: no refusal message and no label holds the password, whatever else the value holds', () => {
  // Letters and digits, and the characters that end a URL's parts early when a password holds them unescaped.
  const password = fc.stringMatching(/^[A-Za-z0-9]{3}[A-Za-z0-9/@:?#]{3,17}$/).filter((p) => !/(sqlite|postgres|store|takes|database|password|shown|URL|written)/i.test(p));
  const scheme = fc.constantFrom('postgres', 'postgresql', 'mysql', 'http', 'redis', 'postgres:', '');
  const host = fc.constantFrom('db', '127.0.0.1', 'h:99999', '[::1]', 'a b', '');
  fc.assert(fc.property(password, scheme, host, fc.constantFrom('//', '', '///'), fc.boolean(), (pw, s, h, slashes, inQuery) => {
    const value = inQuery ? `${s}:${slashes}${h}/db?password=${pw}` : `${s}:${slashes}u:${pw}@${h}/db`;
    const message = refusal(value);
    if (message !== null) return !message.includes(pw) && !message.includes(encodeURIComponent(pw));
    const location = parseStoreLocation(value);
    return location.kind === 'postgres' && !location.label.includes(pw) && !location.label.includes(encodeURIComponent(pw));
  }), { numRuns: 500 });
});

test.run();
