// The bridge inside a `bash` sandbox's network namespace: a small Node program, passed inline (the sandbox
// holds no file of ours), that listens on 127.0.0.1 and pipes each TCP connection to the egress proxy's
// Unix socket, so the proxy variables can name an ordinary http:// address.

import { realpathSync } from 'node:fs';
import { EGRESS_MAX_CONNECTIONS } from '../../limits.ts';
import { EGRESS_NODE_IN_SANDBOX, EGRESS_SOCKET_IN_SANDBOX, type EgressSeam } from './bwrap-argv.ts';

/**
 * The bridge program. Its arguments: the Unix socket path (as seen inside the sandbox) and the port.
 * - Once it listens it writes `ready\n` to stdout and then points fd 1 at /dev/null, so a launcher can wait
 *   for the line and the bridge never holds the command's output pipe open.
 * - Each accepted connection gets its own connection to the socket; bytes flow both ways with half-close
 *   passed on (a FIN from one side ends only that direction); an error on either side destroys the pair
 *   and nothing else. Connections past EGRESS_MAX_CONNECTIONS are not accepted until one closes.
 * - A failure to listen (the port taken) is written to stderr and it exits 1, before `ready`.
 * - When it stops: when its PID namespace ends (the sandbox's command is its first process, so the kernel
 *   kills the bridge with it), or when its stdin ends if stdin is a pipe or socket (a lifeline a launcher
 *   outside a namespace may hold; /dev/null or a terminal is not watched). It does not watch its parent:
 *   launchers detach it on purpose (`(bridge &)`), so being reparented is its normal state.
 */
const BRIDGE_SCRIPT = `'use strict';
const fs = require('fs');
const net = require('net');
const { pipeline } = require('stream');
const socketPath = process.argv[1];
const port = Number(process.argv[2]);
function pair(tcp) {
  const unix = net.connect({ path: socketPath, allowHalfOpen: true });
  const done = (err) => { if (err) { tcp.destroy(); unix.destroy(); } };
  pipeline(tcp, unix, done);
  pipeline(unix, tcp, done);
}
const server = net.createServer({ allowHalfOpen: true }, pair);
server.maxConnections = ${EGRESS_MAX_CONNECTIONS};
server.on('error', (err) => {
  process.stderr.write('super-pi egress bridge: cannot listen on 127.0.0.1:' + port + ': ' + err.message + '\\n');
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  fs.writeSync(1, 'ready\\n');
  fs.closeSync(1);
  // The lowest free descriptor is 1 again: later writes to stdout, if any, go nowhere.
  fs.openSync('/dev/null', 'w');
});
let stdin = null;
try { stdin = fs.fstatSync(0); } catch (err) { stdin = null; /* fd 0 is closed: no lifeline to watch */ }
if (stdin !== null && (stdin.isFIFO() || stdin.isSocket())) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}
`;

/**
 * The command that runs the bridge: `[node, -e, BRIDGE_SCRIPT, socketPathInSandbox, port]`, by default with
 * this server's own Node binary (where it is run, that path must be visible: see sandboxBridge). A launcher
 * that must not start the command before the bridge listens runs, in sh: `(bridge… &) | head -n 1 >/dev/null; exec command`.
 * The bridge keeps the stderr it was given (its only output after `ready` is a failure to listen): inside
 * the sandbox's PID namespace it dies with the command, so it never holds that pipe open past the command.
 */
export function egressBridgeArgv(socketPathInSandbox: string, port: number, node: string = process.execPath): string[] {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`the egress bridge port must be 1 to 65535, not ${port}`);
  return [node, '-e', BRIDGE_SCRIPT, socketPathInSandbox, String(port)];
}

/**
 * The bridge of a sandboxed command: `node` (this server's Node by default) resolved to its real path on
 * the host, which bwrapArgv binds read-only at EGRESS_NODE_IN_SANDBOX, and the command that runs it from
 * there. The host path itself may be hidden in the sandbox (a Node under /tmp, $SUPERPI_HOME, the
 * server's temp directory, a --bash-hide path); a link is resolved so the bind is of the file itself.
 */
export function sandboxBridge(port: number, node: string = process.execPath): Pick<EgressSeam, 'bridgeNode' | 'bridgeArgv'> {
  return { bridgeNode: realpathSync(node), bridgeArgv: egressBridgeArgv(EGRESS_SOCKET_IN_SANDBOX, port, EGRESS_NODE_IN_SANDBOX) };
}
