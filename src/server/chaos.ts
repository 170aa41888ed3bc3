// Fault injection, a real option of the server: off by default, loud when on.
//   --chaos kill-worker=<ms>        terminate a random scheduler worker every <ms>
//   --chaos crash-actor=<p>         a connection actor crashes on a message with probability p
//   --chaos kill-task-worker=<ms>   terminate the scheduler worker of a running harness task every <ms>

export interface ChaosOptions {
  readonly killWorkerEveryMs?: number;
  readonly crashActorProbability?: number;
  readonly killTaskWorkerEveryMs?: number;
}

export function parseChaos(specs: readonly string[]): ChaosOptions {
  let killWorkerEveryMs: number | undefined;
  let crashActorProbability: number | undefined;
  let killTaskWorkerEveryMs: number | undefined;
  for (const spec of specs) {
    const [name, value, ...rest] = spec.split('=');
    if (value === undefined || rest.length > 0) throw new Error(`--chaos takes kill-worker=<ms>, kill-task-worker=<ms> or crash-actor=<probability>, not "${spec}"`);
    const n = Number(value);
    if (name === 'kill-worker') {
      if (!Number.isSafeInteger(n) || n < 10) throw new Error(`--chaos kill-worker takes a whole number of milliseconds, at least 10, not "${value}"`);
      killWorkerEveryMs = n;
    } else if (name === 'kill-task-worker') {
      if (!Number.isSafeInteger(n) || n < 10) throw new Error(`--chaos kill-task-worker takes a whole number of milliseconds, at least 10, not "${value}"`);
      killTaskWorkerEveryMs = n;
    } else if (name === 'crash-actor') {
      if (!Number.isFinite(n) || n <= 0 || n > 1) throw new Error(`--chaos crash-actor takes a probability in (0, 1], not "${value}"`);
      crashActorProbability = n;
    } else {
      throw new Error(`unknown --chaos mode "${name}": use kill-worker=<ms>, kill-task-worker=<ms> or crash-actor=<probability>`);
    }
  }
  return {
    ...(killWorkerEveryMs === undefined ? {} : { killWorkerEveryMs }),
    ...(crashActorProbability === undefined ? {} : { crashActorProbability }),
    ...(killTaskWorkerEveryMs === undefined ? {} : { killTaskWorkerEveryMs }),
  };
}

export function describeChaos(chaos: ChaosOptions): string | null {
  const parts: string[] = [];
  if (chaos.killWorkerEveryMs !== undefined) parts.push(`--chaos kill-worker=${chaos.killWorkerEveryMs} (a random scheduler worker is terminated every ${chaos.killWorkerEveryMs} ms)`);
  if (chaos.killTaskWorkerEveryMs !== undefined) parts.push(`--chaos kill-task-worker=${chaos.killTaskWorkerEveryMs} (the scheduler worker of a running harness task is terminated every ${chaos.killTaskWorkerEveryMs} ms)`);
  if (chaos.crashActorProbability !== undefined) parts.push(`--chaos crash-actor=${chaos.crashActorProbability} (connection actors crash on ${(chaos.crashActorProbability * 100).toFixed(2)}% of messages)`);
  return parts.length === 0 ? null : `WARNING: fault injection is ON: ${parts.join('; ')}. Requests will fail on purpose. Never use this in production.`;
}
