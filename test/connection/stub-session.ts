// A real Session on a recording scheduler: each connection actor it spawns is a real ActorRef whose host
// records what crosses to it (the messages cast, and how many), so a test decides what the actor handled,
// answers, and when it dies. Shared by the session tests, which differ only in what they look at.

import { ActorRef } from '../../src/actors/actor-ref.ts';
import type { Scheduler } from '../../src/actors/scheduler.ts';
import type { ConnectionActorArgs, ConnectionMessage } from '../../src/connection/connection-actor.ts';
import type { RequestAccount } from '../../src/connection/principal-requests.ts';
import { Session } from '../../src/connection/session.ts';
import type { EffectDeps } from '../../src/connection/effect-runner.ts';
import { createLogger } from '../../src/log/logger.ts';
import type { Outgoing } from '../../src/mcp/outgoing.ts';
import { initialState } from '../../src/mcp/state.ts';

export const quiet = createLogger('emergency', { write: () => true });

/** One spawned connection actor: its ref, the messages cast to it, in order. */
export interface StubActor {
  readonly ref: ActorRef;
  readonly casts: ConnectionMessage[];
  readonly spawnArgs: ConnectionActorArgs;
}

export interface StubSessionOptions {
  readonly id?: string;
  /** The principal's in-flight account the session settles into. */
  readonly requests?: RequestAccount;
  /** Spawn actors that say they share the session's thread (lines cross parsed). */
  readonly sameThread?: boolean;
  /** Start from an empty checkpoint rather than none. */
  readonly checkpoint?: boolean;
  /** Effect dependencies beside the defaults (workspace /ws, a 1 s tool timeout). */
  readonly effects?: Partial<EffectDeps>;
}

export function stubSession(options: StubSessionOptions = {}) {
  const id = options.id ?? 's1';
  const actors: StubActor[] = [];
  const sent: string[] = [];
  /** The session's answers to requests, by request id. */
  const answered = new Map<string, Outgoing>();
  const scheduler = {
    spawn: async (_ref: unknown, spawnArgs: ConnectionActorArgs) => {
      const casts: ConnectionMessage[] = [];
      const ref = new ActorRef(`${id}-a${actors.length + 1}`, {
        ...(options.sameThread === undefined ? {} : { sameThread: options.sameThread }),
        cast: (_to, msg) => void casts.push(msg as ConnectionMessage),
        call: () => Promise.reject(new Error('no calls here')),
        exit: () => undefined,
      });
      actors.push({ ref, casts, spawnArgs });
      return ref;
    },
  } as unknown as Scheduler;
  const session = new Session({
    id, scheduler, logger: quiet,
    ...(options.checkpoint === true ? { checkpoint: new ArrayBuffer(0) } : {}),
    ...(options.requests === undefined ? {} : { requests: options.requests }),
    send: (out) => {
      sent.push(out.line);
      if (out.inReplyTo !== undefined) answered.set(String(out.inReplyTo), out);
    },
    config: initialState({ workspace: '/ws' }).config,
    effects: { workspace: '/ws', logger: quiet, toolTimeoutMs: 1000, ...options.effects },
  });
  /** The ref of the actor spawned `i`-th (0 first). */
  const actor = (i: number): ActorRef => {
    const a = actors[i];
    if (a === undefined) throw new Error(`no actor ${i} was spawned (${actors.length} were)`);
    return a.ref;
  };
  return { session, actors, actor, sent, answered };
}
