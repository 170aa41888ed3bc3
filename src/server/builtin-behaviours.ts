// The behaviours compiled into every scheduler worker, found by name (BehaviourRef `module: 'builtin'`),
// so a worker built as one bundle needs no module loading to host them.

import type { Behaviour } from '../actors/behaviour.ts';
import { connectionBehaviour } from '../connection/connection-actor.ts';
import { taskBehaviour } from '../task/task-actor.ts';

// A Map: a name that happens to be an Object.prototype member (`constructor`) must find nothing.
export const builtinBehaviours: ReadonlyMap<string, Behaviour> = new Map([
  ['connection', connectionBehaviour as Behaviour],
  ['task', taskBehaviour as Behaviour],
]);
