// A transcript larger than one read, end to end with the official SDK clients: over stdio a 2025 session
// (SDK 1.x) and over Streamable HTTP 2026-07-28 requests (SDK v2, a bearer principal) read it page by page,
// following the content's `_meta["superpi/nextUri"]` until a page names none, and get every entry exactly
// once, in order, each page within TRANSCRIPT_READ_MAX_BYTES and TRANSCRIPT_READ_MAX_ENTRIES. And a 2025
// subscription made under another percent-encoding of the transcript's URI hears an entry another process
// appends, named as it subscribed.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SyncStoreAdapter } from '../../src/store/async-store.ts';
import { openStore } from '../../src/store/location.ts';
import { guarded } from '../hang-guard.ts';
import { type Connected, connectStdio, makeSandbox, type RunningServer, type Sandbox, startHttpServerProcess } from './fixtures.ts';
import { checkPages, type Contents, seedTranscript, uriOf, walk } from './transcript-pages-wire.ts';

const ALICE = 'transcript-pages-alice-token-0123456789';

const e2e = suite('a transcript larger than one read, page by page, with the SDK clients');
let box: Sandbox;
let home: string;
let stdio: Connected | undefined;
let http: RunningServer | undefined;
let modern: ModernClient | undefined;
/** The conversations, by principal, and how many entries each has. */
const seeded = new Map<string, { id: string; count: number }>();

/** A transcript past both bounds, in the local store (see `seedTranscript`). */
async function seed(principal: string): Promise<{ id: string; count: number }> {
  const store = new SyncStoreAdapter(openStore({ home }));
  try {
    return await seedTranscript(store, principal);
  } finally {
    await store.close();
  }
}

e2e.before(async () => {
  box = await makeSandbox();
  home = await mkdtemp(path.join(os.tmpdir(), 'superpi-pages-home-'));
  seeded.set('local', await seed('local'));
  seeded.set('token:alice', await seed('token:alice'));
});
e2e.after(async () => {
  await stdio?.close();
  await modern?.close();
  await http?.stop();
  await box.cleanup();
  await rm(home, { recursive: true, force: true });
});

e2e('over stdio, a 2025 session (SDK 1.x) reads every page by _meta["superpi/nextUri"], every entry once', async () => {
  stdio = await connectStdio(box.ws, [], {}, (c) => c, { SUPERPI_HOME: home });
  const { id, count } = seeded.get('local')!;
  const pages = await walk(async (uri) => (await stdio!.client.readResource({ uri })).contents as Contents, uriOf(id));
  checkPages(pages, count);
  // A page URI with a malformed query is -32602, and the session goes on.
  const refused = await stdio.client.readResource({ uri: `${uriOf(id)}?after=first` }).then(() => null, (e: unknown) => e as { code?: number; message: string });
  assert.is(refused?.code, -32602);
  assert.match(refused?.message ?? '', 'after=<seq>');
  assert.equal(await stdio.client.ping(), {});
});

e2e('over stdio, a subscription under another percent-encoding of the URI hears an entry another process appends, under its spelling', async () => {
  const { id } = seeded.get('local')!;
  // The server spells the id's dashes literally (encodeURIComponent); this client spells them %2D, and its first letter lower-case-escaped.
  const spelled = uriOf(`%${id.charCodeAt(0).toString(16)}${id.slice(1).replaceAll('-', '%2D')}`);
  assert.is.not(spelled, uriOf(id));
  const heard = new Promise<string>((resolve) => stdio!.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
  assert.equal(await stdio!.client.subscribeResource({ uri: spelled }), {});
  const store = openStore({ home });
  try {
    store.append(id, 'user', { n: 'appended' });
  } finally {
    store.close();
  }
  assert.is(await guarded(heard, 'the update of the subscribed transcript'), spelled);
  assert.equal(await stdio!.client.unsubscribeResource({ uri: uriOf(id) }), {}, 'unsubscribed under the server\'s own spelling');
  assert.not.match(stdio!.stderr(), /uncaught|unhandled/i);
});

e2e('over Streamable HTTP, 2026-07-28 requests (SDK v2) read every page of the bearer principal\'s transcript, every entry once', async () => {
  http = await startHttpServerProcess(box.ws, [], { SUPERPI_TOKENS: `${ALICE}=alice`, SUPERPI_HOME: home });
  modern = new ModernClient({ name: 'pages-e2e', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await modern.connect(new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }));
  assert.is(modern.getNegotiatedProtocolVersion(), '2026-07-28');
  const { id, count } = seeded.get('token:alice')!;
  const pages = await walk(async (uri) => (await modern!.readResource({ uri })).contents as Contents, uriOf(id));
  checkPages(pages, count);
  // The local user's transcript is not alice's: not found (-32602 in this revision), on the first page and on a later one alike.
  const local = seeded.get('local')!.id;
  for (const uri of [uriOf(local), `${uriOf(local)}?after=3`]) {
    const refused = await modern.readResource({ uri }).then(() => null, (e: unknown) => e as { code?: number; message: string });
    assert.is(refused?.code, -32602, uri);
    assert.match(refused?.message ?? '', 'Resource not found', uri);
  }
});

e2e.run();
