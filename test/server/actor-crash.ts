// What the crash-recovery tests of an Application share: polling until a condition holds, and killing the
// scheduler thread a session's connection actor lives on, for real, until the session has a new actor.

import * as assert from 'uvu/assert';
import type { Application } from '../../src/server/application.ts';
import type { Session } from '../../src/connection/session.ts';

/** Polls `check` until it holds (a generous deadline: no timed assertion, only a hang guard). */
export async function until(check: () => boolean | Promise<boolean>, what: string, deadlineMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + deadlineMs; !(await check()); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
  }
}

/** Kills the scheduler thread running `session`'s connection actor and waits until a new actor runs it. */
export async function killSessionThread(application: Application, session: Session): Promise<void> {
  const host = application.scheduler.threads().find((t) => t.actors.has(session.actorId ?? ''));
  assert.ok(host, 'the session\'s actor lives on a scheduler thread');
  const restarts = session.restarts;
  host.kill();
  await host.exited;
  await until(() => session.restarts > restarts && session.actorId !== null, 'the session has a new connection actor');
}
