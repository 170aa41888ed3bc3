// The application's actor behaviours, found by name (BehaviourRef `module: 'builtin'`). One map for both
// hosts: every scheduler worker registers it from its entry point (scheduler-entry.ts), and the server
// hands it to the scheduler for the actors it runs on the main thread (`--threads 0`), so actors/ stays
// free of the application.

import type { Behaviour } from '../actors/behaviour.ts';
import { connectionBehaviour } from '../connection/connection-actor.ts';
import { taskBehaviour } from '../task/task-actor.ts';

// A Map: a name that happens to be an Object.prototype member (`constructor`) must find nothing.
export const applicationBehaviours: ReadonlyMap<string, Behaviour> = new Map([
  ['connection', connectionBehaviour as Behaviour],
  ['task', taskBehaviour as Behaviour],
]);
