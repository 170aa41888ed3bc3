// Entry of a tool-pool (piscina) thread: registers the TypeScript loader, then exposes the task function.
import { register } from 'tsx/esm/api';

register();
const { default: runPooledTool } = await import('./tool-pool-worker.ts');
export default runPooledTool;
