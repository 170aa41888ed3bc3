// The SUPERPI_HOME of the servers the tests start: the run's own (test/run.ts makes one per run), never the
// user's ~/.super-pi. A child spawned with the test's environment inherits it; one started through the
// SDK's StdioClientTransport gets only the SDK's default allow-list (HOME, PATH, …) plus the `env` it is
// given, so it needs `stdioServerEnv()`. Not a *.test.ts file.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * The run's SUPERPI_HOME. A file started alone (`node --import tsx test/…`, no runner) gets a temporary one
 * here, set in its own environment so every child it spawns inherits it too, and removed when it exits.
 */
export function testHome(): string {
  const fromRunner = process.env.SUPERPI_HOME;
  if (fromRunner !== undefined && fromRunner !== '') return fromRunner;
  const own = mkdtempSync(path.join(os.tmpdir(), 'superpi-test-home-'));
  process.env.SUPERPI_HOME = own;
  process.on('exit', () => rmSync(own, { recursive: true, force: true }));
  return own;
}

// At import, so that a file run alone has it before its first spawn, whichever way that spawn is made.
testHome();

/** An SDK StdioClientTransport's `env`: the SDK's default allow-list, the run's SUPERPI_HOME, then `extra` (which may name another home). */
export function stdioServerEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...getDefaultEnvironment(), SUPERPI_HOME: testHome(), ...extra };
}
