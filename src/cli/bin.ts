// The `super-pi` executable's body: HTTP and WebSocket by default, `--stdio` for stdio. Run by
// bin/super-pi.js, from the bundle (dist/super-pi.cjs, through start.ts and its code cache) or from source.

import type { CodeCacheHandle } from './code-cache.ts';
import { main } from './main.ts';

/** Runs the command line of this process; `codeCache`: the start's code cache, written once the first reply is out. */
export function runCommand(codeCache?: CodeCacheHandle): Promise<void> {
  return main(process.argv.slice(2), 'http', codeCache ? { codeCache } : {}).then((code) => {
    process.exitCode = code;
  });
}
