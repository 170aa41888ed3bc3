// What a test needs from the machine that npm does not install (chromium, PostgreSQL server binaries):
// missing outside CI, its tests are reported skipped with the reason printed; in CI (`CI=true`, where
// .ci/run installs them) a missing requirement is a failure that says so — never a pass in silence.

/** True when the environment says this is a CI run (`CI` set to anything but empty, 0 or false). */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CI?.trim().toLowerCase() ?? '';
  return v !== '' && v !== '0' && v !== 'false';
}

export class MissingRequirement extends Error {
  override readonly name = 'MissingRequirement';
}

/**
 * Whether the tests that need `name` can run. When `available` is false: in CI, throws a
 * MissingRequirement naming it and `reason`; elsewhere prints `  (skipped: needs <name>: <reason>)` as the
 * PostgreSQL tests do and returns false, for the caller to register its tests with `.skip`.
 */
export function needs(name: string, available: boolean, reason: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (available) return true;
  failInCi(name, false, reason, env);
  console.log(`  (skipped: needs ${name}: ${reason})`);
  return false;
}

/** In CI, throws a MissingRequirement naming `name` and `reason` when not `available`; for callers that print their own skips. */
export function failInCi(name: string, available: boolean, reason: string, env: NodeJS.ProcessEnv = process.env): void {
  if (!available && inCi(env)) throw new MissingRequirement(`needs ${name}: ${reason} (CI=${env.CI ?? ''}: a missing requirement fails here rather than skips)`);
}
