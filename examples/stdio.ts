// The stdio server as an MCP host launches it: `npx tsx examples/stdio.ts [--workspace DIR] [--harness ID]`.
// `--help` prints the stdio usage (HTTP-only flags are refused here).

import { main } from '../src/cli/main.ts';

process.exitCode = await main(process.argv.slice(2), 'stdio');
