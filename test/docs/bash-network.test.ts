// docs/bash-network.md lists the special-purpose ranges an allowed name may not resolve into: its two
// tables hold exactly the ranges src/tools/sandbox/special-addresses.ts checks, so a range added to or
// dropped from the code without the page (or the other way round) fails here.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IPV4_EMBEDDING_RANGES, SPECIAL_IPV4_RANGES, SPECIAL_IPV6_RANGES } from '../../src/tools/sandbox/special-addresses.ts';
import { repoRoot, tablesOf } from './markdown.ts';

const page = readFileSync(path.join(repoRoot, 'docs', 'bash-network.md'), 'utf8');

/** The first cells (`range`, in backticks) of the tables whose header starts with `range`. */
function documentedRanges(): string[] {
  return tablesOf(page)
    .filter((table) => table[0]?.[0] === 'range')
    .flatMap((table) => table.slice(1).map((row) => /^`([^`]+)`$/.exec(row[0] ?? '')?.[1] ?? `unreadable: ${row[0]}`));
}

test('the page\'s range tables name exactly the ranges the classifier checks', () => {
  const inCode = [...SPECIAL_IPV4_RANGES, ...SPECIAL_IPV6_RANGES, ...IPV4_EMBEDDING_RANGES].map((r) => r.cidr).sort();
  assert.equal(documentedRanges().sort(), inCode);
});

test.run();
