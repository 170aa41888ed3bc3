// Entry point of every scheduler worker thread: the generic actor host (actors/scheduler-worker.ts)
// with the application's behaviours compiled in, found by name (BehaviourRef `module: 'builtin'`), so a
// worker built as one bundle needs no module loading to host them. No warm-up: the tool argument
// validators are generated ahead of time (mcp/tool-validators.generated.js), nothing is left to compile.

import { hostBehaviours } from '../actors/scheduler-worker.ts';
import { applicationBehaviours } from './behaviours.ts';

hostBehaviours(applicationBehaviours);

export default null;
