// serveStdioSession's `onFirstReply` (what the command schedules its code cache's write from): called
// once, by the session's first message out, and not again.

import { PassThrough } from 'node:stream';
import os from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log/logger.ts';
import { openServer, resolveOptions, serveStdioSession } from '../../src/cli/serve.ts';
import { guarded } from '../hang-guard.ts';

test('onFirstReply is called once, by the first reply (before the second request is sent), not again for the replies after it', async () => {
  const opened = await openServer(resolveOptions({ workspace: os.tmpdir(), threads: 0, toolThreads: 1 }, 'stdio'), { logger: createLogger('error') });
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (d: Buffer) => (written += d.toString()));
  const calls: number[] = [];
  let sent = 0;
  const served = serveStdioSession(opened, {
    input,
    output,
    onFirstReply: () => calls.push(sent),
  });
  const reply = (id: number) => guarded(new Promise<void>((resolve) => {
    const check = (): void => {
      if (written.includes(`"id":${id},`)) resolve();
      else setImmediate(check);
    };
    check();
  }), `the reply to ${id}`);
  input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  await reply(1);
  sent = 1;
  input.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  await reply(2);
  input.end();
  assert.equal(await guarded(served, 'the session end'), { kind: 'ended' });
  assert.equal(calls, [0]);
  assert.is(written, '{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n');
});

test.run();
