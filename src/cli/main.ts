// The command line: parse options, open the workspace, serve MCP over stdio until the host hangs up.

import { Application } from '../runtime/application.ts';
import { createLogger } from '../runtime/logger.ts';
import { openWorkspace } from '../tools/workspace.ts';
import { serveStdio } from '../transports/stdio.ts';
import { OptionsError, parseOptions, usage } from './options.ts';

export const SERVER_VERSION = '0.1.0';

export async function main(argv: readonly string[]): Promise<number> {
  let command;
  try {
    command = parseOptions(argv);
  } catch (err) {
    if (err instanceof OptionsError) {
      process.stderr.write(`super-pi: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (command.kind === 'help') {
    process.stderr.write(`${usage}\n`);
    return 0;
  }
  if (command.kind === 'version') {
    process.stderr.write(`super-pi ${SERVER_VERSION}\n`);
    return 0;
  }
  const options = command.options;
  const logger = createLogger(options.logLevel);
  let workspace: string;
  try {
    workspace = await openWorkspace(options.workspaces[0] as string);
  } catch (err) {
    process.stderr.write(`super-pi: ${(err as Error).message}\n`);
    return 2;
  }
  const app = await Application.start({
    workspace,
    harness: options.harness,
    pageSize: options.pageSize,
    toolTimeoutMs: options.toolTimeoutMs,
    threads: options.threads,
    toolThreads: options.toolThreads,
    chaos: options.chaos,
    logger,
    serverVersion: SERVER_VERSION,
    onGiveUp: (message) => {
      process.stderr.write(`${message}\n`);
      process.exit(1);
    },
  });
  logger.log('info', 'serving MCP over stdio', { workspace, harness: options.harness, pid: process.pid, threads: options.threads });
  await serveStdio({ input: process.stdin, output: process.stdout, maxMessageBytes: options.maxMessageBytes }, async (send) => {
    const session = await app.openSession({
      send,
      principal: { kind: 'local' },
      // stdio has exactly one session: if it is given up, the server has nothing left to serve.
      onGiveUp: (message) => {
        process.stderr.write(`super-pi: ${message}; exiting\n`);
        process.exit(1);
      },
    });
    return { receiveFrame: (frame) => session.receiveFrame(frame), drain: (ms) => session.drain(ms), close: () => app.closeSession(session) };
  });
  await app.stop();
  logger.log('info', 'input closed; exiting');
  return 0;
}
