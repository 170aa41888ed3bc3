// Entry point of every scheduler worker thread: the generic actor host (actors/scheduler-worker.ts)
// with the application's behaviours compiled in, found by name (BehaviourRef `module: 'builtin'`), so a
// worker built as one bundle needs no module loading to host them.

import type { Behaviour } from '../actors/behaviour.ts';
import { hostBehaviours } from '../actors/scheduler-worker.ts';
import { connectionBehaviour } from '../connection/connection-actor.ts';
import { precompileToolValidators } from '../mcp/arguments.ts';
import { taskBehaviour } from '../task/task-actor.ts';

hostBehaviours(new Map([
  ['connection', connectionBehaviour as Behaviour],
  ['task', taskBehaviour as Behaviour],
]), { warmUp: precompileToolValidators });

export default null;
