// Entry of every thread super-pi starts (scheduler workers, tool pool workers): registers the
// TypeScript loader in this thread, then loads the real entry named in workerData.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
const entry = await import(workerData.entry);
export default entry.default;
