// End to end: accept means run, in both eras. `bash` is an `ask` tool under the default harness; a host's
// person answers the confirmation form the way generic hosts do (Accept on the form as shown, with its
// default; Accept with an empty form; Accept with no content), or unticks, declines or cancels. Over stdio
// with the SDK v1 client (2025-11-25, elicitation/create) and the SDK v2 client pinned to 2026-07-28
// (input_required and the retry). A run writes a real file; a refusal writes nothing.

import { access } from 'node:fs/promises';
import path from 'node:path';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connectStdio, makeSandbox, repoRoot, type Sandbox, stdioEntry } from './fixtures.ts';
import { stdioServerEnv } from '../test-home.ts';

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, boolean> };
type Schema = { properties?: Record<string, { type?: string; default?: unknown }> };

/** Each answer a host may send, and whether the call must run. `form` is the form's own default values. */
const cases: { name: string; answer: (form: Record<string, unknown>) => Answer; runs: boolean }[] = [
  { name: 'accept on the form as shown (its defaults)', answer: (form) => ({ action: 'accept', content: form as Record<string, boolean> }), runs: true },
  { name: 'accept with an empty form', answer: () => ({ action: 'accept', content: {} }), runs: true },
  { name: 'accept with no content', answer: () => ({ action: 'accept' }), runs: true },
  { name: 'accept with the box unticked', answer: () => ({ action: 'accept', content: { allow: false } }), runs: false },
  { name: 'decline', answer: () => ({ action: 'decline' }), runs: false },
  { name: 'cancel', answer: () => ({ action: 'cancel' }), runs: false },
];

/** The values a generic form shows before anyone touches it: each property's default. */
function formDefaults(schema: Schema | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(schema?.properties ?? {}).filter(([, p]) => 'default' in p).map(([k, p]) => [k, p.default]));
}

const exists = (p: string) => access(p).then(() => true, () => false);
const textOf = (r: unknown) => ((r as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? '').join('\n');

interface Era { name: string; connect(box: Sandbox, person: (schema: Schema | undefined) => Answer): Promise<{ call(command: string): Promise<unknown>; close(): Promise<void> }> }

const eras: Era[] = [
  {
    name: '2025-11-25, SDK v1 client (elicitation/create)',
    connect: async (box, person) => {
      const c = await connectStdio(box.ws, [], { elicitation: {} }, (client) => {
        client.setRequestHandler(ElicitRequestSchema, async (req) => person((req.params as { requestedSchema?: Schema }).requestedSchema));
        return client;
      });
      return { call: (command) => c.client.callTool({ name: 'bash', arguments: { command } }), close: () => c.close() };
    },
  },
  {
    name: '2026-07-28, SDK v2 client (input_required, retry)',
    connect: async (box, person) => {
      const client = new ClientV2({ name: 'accept-e2e', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
      client.setRequestHandler('elicitation/create', async (req) => person((req.params as { requestedSchema?: Schema }).requestedSchema));
      await client.connect(new StdioV2({ command: process.execPath, args: ['--import', 'tsx', stdioEntry, '--workspace', box.ws], cwd: repoRoot, env: stdioServerEnv(), stderr: 'pipe' }));
      assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
      return { call: (command) => client.callTool({ name: 'bash', arguments: { command } }), close: () => client.close() };
    },
  },
];

for (const era of eras) {
  const t = suite(`accept means run: ${era.name}`);
  let box: Sandbox;
  let c: Awaited<ReturnType<Era['connect']>>;
  let next: (typeof cases)[number] = cases[0]!;
  const schemas: (Schema | undefined)[] = [];
  t.before(async () => {
    box = await makeSandbox();
    c = await era.connect(box, (schema) => {
      schemas.push(schema);
      return next.answer(formDefaults(schema));
    });
  });
  t.after(async () => {
    await c?.close();
    await box?.cleanup();
  });


  cases.forEach((k, i) => {
    t(`${k.name}: ${k.runs ? 'runs the command' : 'a tool error, nothing run'}`, async () => {
      next = k;
      const file = `case-${i}.txt`;
      const r = await c.call(`echo ran > ${file}`);
      assert.is(schemas.length, i + 1, 'the person was asked once per call');
      assert.equal(formDefaults(schemas[i]), { allow: true }, 'the form\'s one field is allow, checked');
      assert.is(schemas[i]?.properties?.allow?.type, 'boolean');
      assert.is(await exists(path.join(box.ws, file)), k.runs, textOf(r));
      assert.is((r as { isError?: boolean }).isError === true, !k.runs, textOf(r));
      if (!k.runs) assert.match(textOf(r), /^Not run: bash needs the person's confirmation/);
    });
  });
  t.run();
}
