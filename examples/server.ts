// The long-running multi-client server: Streamable HTTP and WebSocket on 127.0.0.1 (`npm start`).
// `npx tsx examples/server.ts --port 0 --workspace DIR` picks a free port and prints it.

import { main } from '../src/cli/main.ts';

process.exitCode = await main(process.argv.slice(2), 'http');
