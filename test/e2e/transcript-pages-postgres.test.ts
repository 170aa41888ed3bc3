// A transcript larger than one read on a PostgreSQL store, end to end: a node on a database the test
// seeds serves it over Streamable HTTP to a 2025 session (SDK 1.x) and to 2026-07-28 requests (SDK v2),
// each reading page by page by `_meta["superpi/nextUri"]` to the end and getting every entry exactly once,
// each page within the bounds — the PostgreSQL store's byte cut, through the whole server. The database
// server is started by the test (test/store/postgres-server.ts); without PostgreSQL binaries the test is
// reported skipped, with the reason.

import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresConversationStore } from '../../src/store/postgres-store.ts';
import { findPostgres, postgresBinDirs } from '../store/postgres-server.ts';
import { clusterGround, type RunningServer, startHttpServerProcess } from './fixtures.ts';
import { checkPages, type Contents, seedTranscript, uriOf, walk } from './transcript-pages-wire.ts';

const ALICE = 'pages-pg-alice-token-0123456789';
const NAME = 'on a PostgreSQL store, a 2025 session and 2026-07-28 requests over HTTP each read a transcript larger than one read page by page, every entry once';

const found = findPostgres();
if (found.ok) {
  const ground = clusterGround(test, found);
  test(NAME, async () => {
    const { pg, box } = ground();
    const url = await pg.createDatabase();
    const store = await PostgresConversationStore.open(url);
    let seeded: { id: string; count: number };
    try {
      seeded = await seedTranscript(store, 'token:alice');
    } finally {
      await store.close();
    }
    let node: RunningServer | undefined;
    const legacy = new Client({ name: 'pages-pg-e2e', version: '1.0.0' });
    const modern = new ModernClient({ name: 'pages-pg-e2e', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      node = await startHttpServerProcess(box.ws, ['--store', url, '--node-id', 'pages-a', '--threads', '1', '--tool-threads', '1'], { SUPERPI_TOKENS: `${ALICE}=alice` });
      const headers = { authorization: `Bearer ${ALICE}` };
      await legacy.connect(new StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers } }));
      checkPages(await walk(async (uri) => (await legacy.readResource({ uri })).contents as Contents, uriOf(seeded.id)), seeded.count);
      await modern.connect(new ModernHttpTransport(new URL(node.url), { requestInit: { headers } }));
      assert.is(modern.getNegotiatedProtocolVersion(), '2026-07-28');
      checkPages(await walk(async (uri) => (await modern.readResource({ uri })).contents as Contents, uriOf(seeded.id)), seeded.count);
    } finally {
      await legacy.close();
      await modern.close();
      await node?.stop();
    }
  });
} else {
  console.log(`  (skipped: transcript pages on PostgreSQL need a PostgreSQL server: ${found.reason})`);
  test.skip(NAME, () => undefined);
  test('without PostgreSQL binaries the reason names every directory searched', () => {
    for (const dir of postgresBinDirs()) assert.ok(found.reason.includes(dir), dir);
  });
}

test.run();
