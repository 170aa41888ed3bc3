// Threat model rule: every file the server reads (or lists, or writes) on a caller's behalf goes through
// one confined path — resolved inside the workspace root and checked again on the open descriptor — so a
// symbolic link that leads outside never returns (or changes) outside content. The table below lists every
// such path in the code; each gets a workspace whose link leads to a secret outside. A guard test scans
// src/ for direct file-reading calls outside an allow-list, so a new unconfined read fails here.
// (Prompts render harness data and read no files, so they have no row.)
// Caller classes: the local user (stdio), token principals, anonymous remote callers (the workspace resource,
// completion), and workspace content (the link itself comes from a cloned repository).

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { completePath } from '../../src/connection/path-completion.ts';
import { gatherWorkspaceContext } from '../../src/connection/workspace-context.ts';
import { currentContent } from '../../src/task/undo.ts';
import type { ToolContext, ToolOutcome } from '../../src/tools/contract.ts';
import { editTool } from '../../src/tools/edit.ts';
import { findTool } from '../../src/tools/find.ts';
import { grepTool } from '../../src/tools/grep.ts';
import { lsTool } from '../../src/tools/ls.ts';
import { readSmallFileSync, readTool } from '../../src/tools/read.ts';
import { writeTool } from '../../src/tools/write.ts';

const SECRET = 'SECRET-OUTSIDE-7f3a';

interface Scene {
  readonly ws: string;
  readonly outside: string;
  readonly ctx: ToolContext;
}

/**
 * A workspace with `link.txt` → outside/secret.txt, `linkdir` → outside/, `README.md` → outside/secret.txt
 * and a `.git` whose HEAD links outside; and the outside directory holding the secret.
 */
async function scene(body: (s: Scene) => Promise<void>): Promise<void> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'super-pi-confined-')));
  const ws = path.join(root, 'ws');
  const outside = path.join(root, 'outside');
  await mkdir(ws);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), `${SECRET}\n`);
  await writeFile(path.join(outside, 'HEAD'), `ref: refs/heads/${SECRET}\n`);
  await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'link.txt'));
  await symlink(outside, path.join(ws, 'linkdir'));
  await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'README.md'));
  await mkdir(path.join(ws, '.git', 'refs', 'heads'), { recursive: true });
  await mkdir(path.join(ws, '.git', 'objects'));
  await symlink(path.join(outside, 'HEAD'), path.join(ws, '.git', 'HEAD'));
  try {
    await body({ ws, outside, ctx: { workspace: ws, signal: new AbortController().signal } });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** Whatever a read path gave back, as text: a result, a refusal's message, or a thrown error's. */
async function said(work: () => Promise<unknown> | unknown): Promise<string> {
  try {
    return JSON.stringify(await work());
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const text = (o: ToolOutcome): string => `${o.text}\n${JSON.stringify(o.structured ?? null)}`;

/** Every caller-facing path that reads workspace content: name → what it returns for the scene. */
const READ_PATHS = new Map<string, (s: Scene) => Promise<string>>([
  ['read tool (asynchronous)', (s) => said(async () => text(await readTool({ path: 'link.txt' }, s.ctx)))],
  ['read tool through a linked directory', (s) => said(async () => text(await readTool({ path: 'linkdir/secret.txt' }, s.ctx)))],
  ['read tool inline (connection actor, synchronous)', (s) => said(() => readSmallFileSync({ path: 'link.txt' }, s.ws, 1024))],
  ['edit (reads the file whole)', (s) => said(async () => text(await editTool({ path: 'link.txt', oldText: SECRET, newText: 'x' }, s.ctx)))],
  ['undo snapshot (currentContent)', (s) => said(() => currentContent(s.ws, 'link.txt'))],
  ['workspace resource: README excerpt', (s) => said(async () => (await gatherWorkspaceContext(s.ws)).readme)],
  ['workspace resource: git branch from .git/HEAD', (s) => said(async () => (await gatherWorkspaceContext(s.ws)).git)],
  ['path completion', (s) => said(() => completePath(s.ws, 'linkdir/'))],
  ['grep over the tree', (s) => said(async () => text(await grepTool({ pattern: SECRET }, s.ctx)))],
  ['grep of one linked file', (s) => said(async () => text(await grepTool({ pattern: SECRET, path: 'link.txt' }, s.ctx)))],
  ['find listing', (s) => said(async () => text(await findTool({ pattern: '*secret*' }, s.ctx)))],
  ['ls listing of a linked directory', (s) => said(async () => text(await lsTool({ path: 'linkdir' }, s.ctx)))],
]);

for (const [name, readPath] of READ_PATHS) {
  test(`${name}: an outside symlink returns nothing from outside`, () => scene(async (s) => {
    const answer = await readPath(s);
    assert.not.ok(answer.includes(SECRET), `${name} returned outside content: ${answer}`);
    assert.not.ok(answer.includes('secret.txt') && /listing|completion/.test(name), `${name} listed outside names: ${answer}`);
  }));
}

/** Paths that write on a caller's behalf: they must leave the outside file as it was. */
const WRITE_PATHS = new Map<string, (s: Scene) => Promise<string>>([
  ['write over a link', (s) => said(async () => text(await writeTool({ path: 'link.txt', content: 'overwritten' }, s.ctx)))],
  ['write through a linked directory', (s) => said(async () => text(await writeTool({ path: 'linkdir/secret.txt', content: 'overwritten' }, s.ctx)))],
  ['write of a new file in a linked directory', (s) => said(async () => text(await writeTool({ path: 'linkdir/new.txt', content: 'new' }, s.ctx)))],
  ['edit through a link', (s) => said(async () => text(await editTool({ path: 'link.txt', oldText: SECRET, newText: 'x' }, s.ctx)))],
]);

for (const [name, writePath] of WRITE_PATHS) {
  test(`${name}: nothing outside changes`, () => scene(async (s) => {
    await writePath(s);
    assert.is(await readFile(path.join(s.outside, 'secret.txt'), 'utf8'), `${SECRET}\n`);
    assert.equal((await readdir(s.outside)).sort(), ['HEAD', 'secret.txt']);
  }));
}

// ---- the guard ----

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/**
 * Modules allowed to call file-reading functions directly, and why: none of them reads a workspace file
 * for a caller except through the confined path itself.
 */
const ALLOWED = new Map<string, string>([
  ['tools/confined-file.ts', 'the confined path itself'],
  ['tools/fs-steps.ts', 'the drivers that carry out the confined path\'s steps'],
  ['auth/tokens.ts', 'the operator\'s token file, named by a flag'],
  ['auth/secret-files.ts', 'the operator\'s secret files named by flags at start-up (`--state-key-file`, `--oauth-introspection-secret-file`), remembered so the bash sandbox hides them; never a workspace file, their text never reaches a caller or a log'],
  ['tools/sandbox/bounds-probe.ts', 'reads /proc/self/cgroup, /proc/self/mountinfo and its own cgroup\'s control files (paths from the kernel, never a workspace file)'],
  ['tools/sandbox/command-cgroup.ts', 'reads the counters and member list of the cgroups it made itself, never a workspace file'],
  ['tools/sandbox/freeze-shell.ts', 'reads /proc/PID/cmdline and /proc/PID/task/PID/children of the processes it launched, never a workspace file'],
  ['tools/sandbox/inherited-fds.ts', 'reads /proc/self/fdinfo/N of this process\'s own descriptors (close-on-exec flag), never a workspace file'],
  ['tools/walk.ts', 'reads .gitignore rules from a descriptor the confined path opened (readFileSync(fd)); their text never reaches a caller'],
  ['cli/launcher-watch.ts', 'reads /proc/<pid>/stat of the processes that launched the server, never a workspace file'],
  ['cli/code-cache.ts', 'reads the command\'s own V8 code cache from $SUPERPI_HOME/cache: owner-only directory and file, opened non-blocking, regular files only, size-bounded (MAX_CODE_CACHE_BYTES); never a workspace file'],
  ['tools/sandbox/egress-bridge.ts', 'the bridge script that runs inside a bash sandbox opens /dev/null for its stdout once it is ready; the server itself reads nothing there'],
  ['store/ownership.ts', 'reads /proc/sys/kernel/random/boot_id and /proc/<pid>/stat to tell a conversation owner\'s process apart from a reused pid'],
]);

/** A call (not a method of an adapter that itself calls the confined path: `async readFile(`). */
const DIRECT_READ = /(?<!async\s)\b(readFile|readFileSync|createReadStream|openSync|fsPromises\.open)\s*\(/;
const IMPORTS_OPEN = /import\s*\{[^}]*\bopen\b[^}]*\}\s*from\s*'node:fs(\/promises)?'/;

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(full)));
    else if (/\.(ts|mts|mjs|js)$/.test(e.name)) out.push(full);
  }
  return out;
}

test('no module outside the allow-list reads files directly (every read goes through src/tools/confined-file.ts)', async () => {
  const offenders: string[] = [];
  for (const file of await sources(SRC)) {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    if (ALLOWED.has(rel)) continue;
    const code = (await readFile(file, 'utf8')).split('\n').filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).join('\n');
    const hit = DIRECT_READ.exec(code);
    if (hit) offenders.push(`${rel}: ${hit[0]}`);
    if (IMPORTS_OPEN.test(code) && /\bopen\s*\(/.test(code)) offenders.push(`${rel}: open( imported from node:fs`);
  }
  assert.equal(offenders, [], `direct file reads outside the confined path: ${offenders.join(', ')}`);
});

test('the guard sees a direct read (it would catch a new one)', () => {
  assert.ok(DIRECT_READ.test("const text = await readFile(path.join(root, name), 'utf8');"));
  assert.not.ok(DIRECT_READ.test('async readFile(p: unknown): Promise<Buffer> {'));
  assert.ok(IMPORTS_OPEN.test("import { lstat, open } from 'node:fs/promises';"));
});

test.run();
