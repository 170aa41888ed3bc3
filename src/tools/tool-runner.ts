// Runs one tool body for a `runTool` effect: path rules of the harness first (on the resolved path,
// so a symlink cannot dodge them), then the body; every failure becomes a tool result, never a throw.

import { harnessById } from '../harness/catalog.ts';
import type { HarnessId } from '../harness/ids.ts';
import { decidePath } from '../harness/policy.ts';
import { type BashArgs, bashTool } from './bash.ts';
import { type ToolBody, type ToolContext, ToolError, type ToolOutcome } from './contract.ts';
import type { ToolName } from './definition.ts';
import { type EditArgs, editTool, editToolWith } from './edit.ts';
import type { EditPlanner } from './edit-plan.ts';
import type { FindArgs } from './find.ts';
import type { GrepArgs } from './grep.ts';
import { type LsArgs, lsTool } from './ls.ts';
import { type ReadArgs, readTool, readToolWith } from './read.ts';
import { displayPath, resolveInWorkspace } from './workspace.ts';
import { type WriteArgs, writeTool } from './write.ts';

export interface RunOptions {
  /** Where `edit` decides its change (default: this thread); the tool pool gives its own for a large file. */
  readonly editPlanner?: EditPlanner;
  /**
   * Where `read` sends a file past `maxFileBytes` by the descriptor it opened (default: none, every file is
   * read here); the tool pool gives its own threads for a large one.
   */
  readonly largeRead?: { readonly maxFileBytes: number; readonly elsewhere: ToolBody<ReadArgs> };
}

/**
 * Arguments reach here validated against the tool's input schema (src/mcp/arguments.ts), which is
 * what makes the per-tool casts below sound.
 */
export async function runTool(tool: ToolName, args: Record<string, unknown>, harnessId: HarnessId, ctx: ToolContext, options: RunOptions = {}): Promise<ToolOutcome> {
  try {
    if (tool === 'write' || tool === 'edit') await checkPathRules(tool, String(args.path), harnessId, ctx.workspace);
    switch (tool) {
      case 'read': return await (options.largeRead ? readToolWith(options.largeRead.maxFileBytes, options.largeRead.elsewhere) : readTool)(args as unknown as ReadArgs, ctx);
      case 'write': return await writeTool(args as unknown as WriteArgs, ctx);
      case 'edit': return await (options.editPlanner ? editToolWith(options.editPlanner) : editTool)(args as unknown as EditArgs, ctx);
      case 'bash': return await bashTool(args as unknown as BashArgs, ctx);
      // Loaded on first use (RE2, globs and .gitignore rules are most of the tools' code): a start does
      // not parse them, and grep and find run on the tool pool's threads, which load them there.
      case 'grep': return await (await import('../tools/grep.ts')).grepTool(args as unknown as GrepArgs, ctx);
      case 'find': return await (await import('../tools/find.ts')).findTool(args as unknown as FindArgs, ctx);
      case 'ls': return await lsTool(args as unknown as LsArgs, ctx);
      case 'harness_task': return { text: 'harness_task is not available in this version of super-pi yet.', isError: true };
    }
  } catch (err) {
    if (err instanceof ToolError) return { text: err.message, isError: true };
    throw err;
  }
}

async function checkPathRules(tool: ToolName, userPath: string, harnessId: HarnessId, workspace: string): Promise<void> {
  const real = await resolveInWorkspace(workspace, userPath);
  const decision = decidePath(harnessById(harnessId), tool, displayPath(workspace, real));
  if (decision.verdict === 'deny') throw new ToolError(`Denied by harness policy: ${decision.rule}`);
}
