// Gathers the workspace context resource: root, git branch and status (read without running git:
// ./git-summary.ts), top-level layout, README excerpt (read through the confined path, bounded).

import { readdir } from 'node:fs/promises';
import type { WorkspaceContext } from '../mcp/effects.ts';
import { closeStep, runAsync } from '../tools/fs-steps.ts';
import { openConfined, readHead } from '../tools/confined-file.ts';
import { ToolError } from '../tools/contract.ts';
import { gitSummary } from '../tools/git-summary.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { LAYOUT_LIMIT, README_EXCERPT_BYTES, README_EXCERPT_LINES } from '../limits.ts';

export async function gatherWorkspaceContext(root: string, clock: Clock = systemClock): Promise<WorkspaceContext> {
  const [git, layout, readme] = await Promise.all([gitSummary(root, { clock }), topLevel(root), readmeExcerpt(root)]);
  return { root, git, layout, readme };
}

async function topLevel(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true });
  const names = entries
    .filter((e) => e.name !== '.git')
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort((a, b) => a.localeCompare(b));
  if (names.length <= LAYOUT_LIMIT) return names;
  return [...names.slice(0, LAYOUT_LIMIT), `... and ${names.length - LAYOUT_LIMIT} more`];
}

async function readmeExcerpt(root: string): Promise<WorkspaceContext['readme']> {
  const entries = await readdir(root);
  const name = entries.find((n) => /^readme(\.(md|markdown|txt|rst))?$/i.test(n));
  if (!name) return null;
  let head: Buffer;
  try {
    // Confined: a README that links outside, or is a FIFO or a device, is refused before a byte is read.
    head = await runAsync((function* () {
      const opened = yield* openConfined(root, name);
      try {
        return yield* readHead(opened, README_EXCERPT_BYTES);
      } finally {
        yield* closeStep(opened.file);
      }
    })());
  } catch (err) {
    // Any refusal or failed read means no excerpt; the rest of the context is still worth having.
    if (err instanceof ToolError) return null;
    throw err;
  }
  const lines = head.toString('utf8').split('\n');
  const cut = lines.length > README_EXCERPT_LINES || head.length === README_EXCERPT_BYTES;
  const excerpt = lines.slice(0, README_EXCERPT_LINES).join('\n');
  return { path: name, excerpt: cut ? `${excerpt}\n...` : excerpt };
}
