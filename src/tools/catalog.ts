// The eight tools in listing order. Pure data: importing this loads no tool body.

import type { ToolDefinition, ToolName } from './definition.ts';
import { bashDefinition } from './definitions/bash.ts';
import { editDefinition } from './definitions/edit.ts';
import { findDefinition } from './definitions/find.ts';
import { grepDefinition } from './definitions/grep.ts';
import { harnessTaskDefinition } from './definitions/harness-task.ts';
import { lsDefinition } from './definitions/ls.ts';
import { readDefinition } from './definitions/read.ts';
import { writeDefinition } from './definitions/write.ts';

// No prototype: tool names come from callers, and even past `isToolName` a lookup must not be able to
// reach Object.prototype's members (`toolCatalog['constructor']` is undefined, not a function).
export const toolCatalog: Readonly<Record<ToolName, ToolDefinition>> = Object.freeze(Object.assign(Object.create(null) as object, {
  read: readDefinition,
  write: writeDefinition,
  edit: editDefinition,
  bash: bashDefinition,
  grep: grepDefinition,
  find: findDefinition,
  ls: lsDefinition,
  harness_task: harnessTaskDefinition,
}));
