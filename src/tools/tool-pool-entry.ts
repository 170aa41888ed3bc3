// Where a tool-pool thread finds its code. Piscina loads its `filename` itself, so a source entry is a
// boot file that needs no workerData.

import { type EntryMode, type ThreadEntry, threadEntry } from '../actors/thread-entry.ts';

export const TOOL_POOL_CODE = { bundle: 'tool-pool-worker', source: 'src/tools/tool-pool-worker.ts', boot: 'src/tools/tool-pool-boot.mjs' } as const;

export function toolPoolEntry(mode: EntryMode = 'auto'): ThreadEntry {
  return threadEntry(TOOL_POOL_CODE, mode);
}
