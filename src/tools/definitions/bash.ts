// The public face of the `bash` tool: name, description for the model, input schema and hints.
// Pure data; the body lives in ../bash.ts.

import type { ToolDefinition } from '../definition.ts';
import { noticesProperty } from './common.ts';
import { BASH_DEFAULT_TIMEOUT_SECONDS, BASH_MAX_TIMEOUT_SECONDS, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES } from '../../limits.ts';

export const bashDefinition: ToolDefinition = {
  name: 'bash',
  title: 'Run a shell command',
  description: [
    'Execute a bash command with the workspace root as the working directory. Returns stdout and stderr interleaved.',
    'stdin is closed, so interactive commands fail instead of waiting for input.',
    `Output is truncated to the last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first); when that happens the full output`,
    'is saved to a temp file whose path is given at the end, so you can read or grep it.',
    `The command is killed (with everything it started) after \`timeout\` seconds: ${BASH_DEFAULT_TIMEOUT_SECONDS} by default,`,
    '0 disables the timer. Background processes do not outlive the command: when it finishes, whatever it left',
    'running in its process group is killed.',
    'A non-zero exit code is reported as an error ending in "Command exited with code N".',
  ].join(' '),
  inputSchema: {
    type: 'object',
    properties: {
      command: { type: 'string', minLength: 1, description: 'Shell command to execute (run with `bash -c`).' },
      timeout: {
        type: 'number',
        minimum: 0,
        maximum: BASH_MAX_TIMEOUT_SECONDS,
        description: `Timeout in seconds (default ${BASH_DEFAULT_TIMEOUT_SECONDS}); 0 disables the timer.`,
      },
    },
    required: ['command'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      exitCode: { type: ['integer', 'null'], description: 'The exit code; null when the command was killed by a signal, timed out or was aborted.' },
      signal: { type: ['string', 'null'], description: 'The signal that killed the command, when one did on its own (not the timeout or an abort).' },
      timedOut: { type: 'boolean', description: 'True when the timeout killed the command.' },
      aborted: { type: 'boolean', description: 'True when the call was cancelled and the command killed.' },
      output: { type: 'string', description: `stdout and stderr interleaved: the last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB when truncated, without the notice.` },
      truncated: { type: 'boolean', description: 'True when output is only the tail of what the command printed.' },
      fullOutputPath: { type: 'string', description: 'When truncated and saved: the temp file that holds the full output (capped in size; the notice says when it is).' },
      notices: noticesProperty,
    },
    required: ['exitCode', 'signal', 'timedOut', 'aborted', 'output', 'truncated', 'notices'],
    additionalProperties: false,
  },
  annotations: {
    title: 'Run a shell command',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    // A command can reach the network and anything else on the machine.
    openWorldHint: true,
  },
};
