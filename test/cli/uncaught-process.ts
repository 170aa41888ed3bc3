// A real HTTP server process (the command's main) with a planted bug: on SIGUSR2 it throws from a timer
// (PLANT=exception) or leaves a promise rejected (PLANT=rejection), so a test can watch the process's
// uncaught-failure policy act. Not a *.test.ts file.

import { main } from '../../src/cli/main.ts';

process.on('SIGUSR2', () => {
  setImmediate(() => {
    if (process.env.PLANT === 'rejection') void Promise.reject(new Error('planted rejection'));
    else throw new Error('planted failure\nforged second line');
  });
});
process.exitCode = await main(process.argv.slice(2), 'http');
