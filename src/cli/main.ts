// The command line: parse options, open the workspace, serve MCP over stdio until the host hangs up.

import { initialState } from '../mcp/state.ts';
import { Connection } from '../runtime/connection.ts';
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
  logger.log('info', 'serving MCP over stdio', { workspace, harness: options.harness, pid: process.pid });
  await serveStdio({ input: process.stdin, output: process.stdout, maxMessageBytes: options.maxMessageBytes }, (send) =>
    new Connection(
      initialState({ workspace, harness: options.harness, pageSize: options.pageSize, server: { name: 'super-pi', version: SERVER_VERSION } }),
      { workspace, logger, toolTimeoutMs: options.toolTimeoutMs },
      send,
    ));
  logger.log('info', 'input closed; exiting');
  return 0;
}
