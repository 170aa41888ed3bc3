// The `super-pi` executable's body: HTTP and WebSocket by default, `--stdio` for stdio.

import { main } from './main.ts';

process.exitCode = await main(process.argv.slice(2), 'http');
