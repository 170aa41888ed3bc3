// The command's start from the bundle (dist/super-pi-start.cjs, loaded by bin/super-pi.js): runs
// dist/super-pi.cjs through the code cache (code-cache.ts), then its command line.

import { runBundle } from './code-cache.ts';

/** The bundle's hash, filled in by scripts/build.mjs (saves hashing it at every start); undefined from source. */
declare const __SUPER_PI_BUNDLE_HASH__: string | undefined;

interface CommandBundle {
  runCommand(codeCache: ReturnType<typeof runBundle>['cache']): Promise<void>;
}

export function startCommand(bundle: string): Promise<void> {
  const { exports, cache } = runBundle(bundle, typeof __SUPER_PI_BUNDLE_HASH__ === 'string' ? { hash: __SUPER_PI_BUNDLE_HASH__ } : {});
  return (exports as CommandBundle).runCommand(cache);
}
