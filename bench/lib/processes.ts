// Stopping a server the benchmarks started: ask it to end the way it ends normally (stdin closed for a
// stdio server, SIGTERM for a network one), then SIGKILL once `graceMs` has passed.

import type { ChildProcess } from 'node:child_process';

export function stopChild(child: ChildProcess, graceMs: number, ask: 'stdin' | 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (ask === 'stdin') child.stdin?.end();
    else child.kill('SIGTERM');
  });
}
