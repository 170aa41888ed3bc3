// Every relative link of the documentation (README.md and docs/*.md) leads somewhere: its file exists,
// and its #anchor is a heading of the page it names. A page moved or a heading renamed fails here, with
// the broken link named, instead of in a reader's browser.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { anchorsOf, brokenLinks, documentationPages, linksOf, type Page, repoRoot, slugOf } from './markdown.ts';

const pages = documentationPages();
const exists = (file: string): boolean => existsSync(path.join(repoRoot, file));
const read = (file: string): string => readFileSync(path.join(repoRoot, file), 'utf8');

test('the pages are read: README.md and docs/, with their links (a reader that found none would pass)', () => {
  const files = pages.map((p) => p.file);
  for (const f of ['README.md', 'docs/configuration.md', 'docs/security.md', 'docs/protocol.md']) assert.ok(files.includes(f), f);
  const relative = pages.flatMap((p) => linksOf(p.text)).filter((l) => !/^[a-z]+:/i.test(l.target));
  assert.ok(relative.length > 30, `only ${relative.length} relative links found`);
  assert.ok(relative.some((l) => l.target.includes('#')), 'anchors are among them');
});

test('every relative link and #anchor in README.md and docs/*.md resolves', () => {
  assert.equal(brokenLinks(pages, exists, read), []);
});

test('README.md links every page of docs/ (its Documentation table: a reader finds each page by name)', () => {
  const readme = pages.find((p) => p.file === 'README.md');
  assert.ok(readme !== undefined);
  const linked = new Set(linksOf(readme.text).map((l) => path.posix.normalize(l.target.split('#')[0] as string)));
  assert.equal(pages.map((p) => p.file).filter((f) => f !== 'README.md' && !linked.has(f)), [], 'pages of docs/ the README does not link');
});

test('anchors are made as GitHub makes them: lower case, punctuation dropped, spaces as hyphens, repeats numbered', () => {
  assert.is(slugOf('Which directory a session works in'), 'which-directory-a-session-works-in');
  assert.is(slugOf('What an HTTP caller may do, and adding a token'), 'what-an-http-caller-may-do-and-adding-a-token');
  assert.is(slugOf('Cold start: the code cache'), 'cold-start-the-code-cache');
  assert.is(slugOf('Figures (`npm run bench:actors`, `bench/results/actors.md`)'), 'figures-npm-run-benchactors-benchresultsactorsmd');
  assert.is(slugOf('bash isolation'), 'bash-isolation');
  assert.is(slugOf('MAX_WALK_ENTRIES and [the walk](x.md)'), 'max_walk_entries-and-the-walk');
  assert.equal([...anchorsOf('# A\n\n## Notes\n\n```sh\n# not a heading\n```\n\n## Notes\n')], ['a', 'notes', 'notes-1']);
});

test('the check names each broken link: a missing file, a missing heading, a link out of the repository; code is not read as links', () => {
  const fake: Page[] = [
    { file: 'README.md', text: '# Top\n\nSee [setup](docs/setup.md#install), [gone](docs/gone.md), [self](#top), [nope](#nowhere).\n' },
    { file: 'docs/setup.md', text: '# Setup\n\n## Install\n\n[up](../README.md#top) [out](../../etc/passwd) [web](https://example.com/x#y)\n\n```md\n[in code](missing.md)\n```\n`[inline](missing.md)`\n' },
  ];
  const files = new Set(fake.map((p) => p.file));
  const byFile = new Map(fake.map((p) => [p.file, p.text]));
  assert.equal(brokenLinks(fake, (f) => files.has(f), (f) => byFile.get(f) ?? ''), [
    'README.md:3: (docs/gone.md): docs/gone.md does not exist',
    'README.md:3: (#nowhere): README.md has no heading whose anchor is #nowhere',
    'docs/setup.md:5: (../../etc/passwd) points outside the repository',
  ]);
});

test.run();
