// Gathers the workspace context resource: root, git branch and status (read without running git:
// ./git-summary.ts), top-level layout, README excerpt (read through the confined path, bounded).

import type { WorkspaceContext } from '../mcp/effects.ts';
import { closeStep, runAsync } from '../tools/fs-steps.ts';
import { eachConfinedEntry, openConfined, readHead } from '../tools/confined-file.ts';
import { ToolError } from '../tools/contract.ts';
import { gitSummary } from '../tools/git-summary.ts';
import { LeastItems } from '../tools/least.ts';
import { nameInText, notUtf8InText } from '../tools/name-in-text.ts';
import { type Clock, systemClock } from '../time/clock.ts';
import { LAYOUT_LIMIT, README_EXCERPT_BYTES, README_EXCERPT_LINES } from '../limits.ts';

/** The workspace resource's content; stops with `signal`'s reason once it aborts (a cancelled read). */
export async function gatherWorkspaceContext(root: string, clock: Clock = systemClock, signal?: AbortSignal): Promise<WorkspaceContext> {
  const [git, { layout, readmeName }] = await Promise.all([gitSummary(root, { clock }), scanRoot(root, signal)]);
  signal?.throwIfAborted();
  return { root, git, layout, readme: readmeName === null ? null : await readmeExcerpt(root, readmeName) };
}

/**
 * The top-level layout and the README's name, from one pass over the root read a batch at a time
 * (src/tools/confined-file.ts): only the first LAYOUT_LIMIT names are kept, so a root of millions of names
 * (workspace content) neither fills the heap nor holds the thread that serves every session.
 */
async function scanRoot(root: string, signal: AbortSignal | undefined): Promise<{ layout: string[]; readmeName: string | null }> {
  // Sorted by name, as they were before any was quoted; each kept with the line it shows as.
  const least = new LeastItems<{ name: string; shown: string }>(LAYOUT_LIMIT, ({ name: a }, { name: b }) => a.localeCompare(b) || (a < b ? -1 : a > b ? 1 : 0));
  let readmeName: string | null = null;
  await eachConfinedEntry(root, root, '.', (e, nameIsUtf8) => {
    if (readmeName === null && /^readme(\.(md|markdown|txt|rst))?$/i.test(e.name)) readmeName = e.name;
    if (e.name === '.git') return;
    // The layout is a list of lines in the resource's markdown: a name that could break one is quoted.
    const mark = e.isDirectory() ? '/' : '';
    least.offer({ name: `${e.name}${mark}`, shown: nameIsUtf8 ? `${nameInText(e.name)}${mark}` : notUtf8InText(e.name, mark) });
  }, signal === undefined ? {} : { signal });
  const layout = least.sorted().map((e) => e.shown);
  if (least.offered > LAYOUT_LIMIT) layout.push(`... and ${least.offered - LAYOUT_LIMIT} more`);
  return { layout, readmeName };
}

async function readmeExcerpt(root: string, name: string): Promise<WorkspaceContext['readme']> {
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
