// A guard against a hang, for tests whose broken behaviour takes far longer than the working one (a
// 300 s sleep, a Retry-After of 20 s, a client that never answers). It is not a speed claim: on a
// loaded 2-core machine "at once" can take a second or two, so the guard sits far from both outcomes.
// Not a *.test.ts file.

/** How long a guarded promise may stay pending before the test fails. */
export const HANG_GUARD_MS = 10_000;

/** `promise`, or a rejection naming `what` if it is still pending after `ms`. */
export function guarded<T>(promise: Promise<T>, what: string, ms = HANG_GUARD_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

/**
 * Resolves with `probe`'s first non-null value, looking every `pollMs`; fails naming `what` if none came
 * within `ms` (a hang guard, not a speed claim).
 */
export function pollUntil<T>(what: string, probe: () => Promise<T | null> | T | null, ms: number, pollMs = 100): Promise<T> {
  const loop = async (): Promise<T> => {
    for (;;) {
      const value = await probe();
      if (value !== null) return value;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  };
  return guarded(loop(), what, ms);
}
