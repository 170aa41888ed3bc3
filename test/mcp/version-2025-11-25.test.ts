// 2025-11-25 in the core: negotiated, its serverInfo fields, and form elicitation only to a client that
// declares form mode (an URL-only client is never sent a form: a MUST NOT of that revision).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { canElicitForm } from '../../src/mcp/client-capabilities.ts';
import { isSupportedVersion, negotiateVersion, supportedVersions, versionFeatures } from '../../src/mcp/version.ts';
import { feed, fresh, init, ready, req } from './golden.ts';

const versions = suite('2025-11-25 negotiation');

versions('is the newest version spoken, and what an unknown version is answered with', () => {
  assert.equal([...supportedVersions], ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
  assert.is(negotiateVersion('2025-11-25'), '2025-11-25');
  assert.is(negotiateVersion('2031-01-01'), '2025-11-25');
  assert.ok(isSupportedVersion('2025-11-25'));
});

versions('keeps every 2025-06-18 feature and drops batches', () => {
  const f = versionFeatures('2025-11-25');
  assert.equal([f.structuredContent, f.titles, f.elicitation, f.annotations, f.completions, f.batches], [true, true, true, true, true, false]);
  assert.equal([f.implementationDescription, f.icons, f.elicitationModes], [true, true, true]);
  const older = versionFeatures('2025-06-18');
  assert.equal([older.implementationDescription, older.icons, older.elicitationModes], [false, false, false]);
});

versions('serverInfo carries a description and an icon under 2025-11-25 only', () => {
  type Info = { result: { serverInfo: { description?: string; icons?: { src: string; mimeType: string }[] } } };
  const modern = (feed(fresh(), init('2025-11-25')).replies[0] as Info).result.serverInfo;
  assert.match(modern.description ?? '', /workspace/);
  assert.is(modern.icons?.length, 1);
  assert.match(modern.icons?.[0]?.src ?? '', /^data:image\/svg\+xml,/);
  const legacy = (feed(fresh(), init('2025-06-18')).replies[0] as Info).result.serverInfo;
  assert.equal([legacy.description, legacy.icons], [undefined, undefined]);
});

versions.run();

const modes = suite('form elicitation by declared mode');

const cases: [string, object, boolean][] = [
  ['2025-11-25', { elicitation: {} }, true],
  ['2025-11-25', { elicitation: { form: {} } }, true],
  ['2025-11-25', { elicitation: { form: {}, url: {} } }, true],
  ['2025-11-25', { elicitation: { url: {} } }, false],
  ['2025-11-25', {}, false],
  ['2025-06-18', { elicitation: {} }, true],
  // Before 2025-11-25 there are no modes: declaring elicitation means forms, whatever is inside.
  ['2025-06-18', { elicitation: { url: {} } }, true],
  ['2025-03-26', { elicitation: {} }, false],
];
for (const [version, capabilities, expected] of cases) {
  modes(`${version} ${JSON.stringify(capabilities)}: ${expected ? 'may' : 'may not'} be sent a form`, () => {
    assert.is(canElicitForm(ready(version, capabilities)), expected);
  });
}

modes('an ask rule for a URL-only client is refused, never sent as a form', () => {
  const r = feed(ready('2025-11-25', { elicitation: { url: {} } }, { principal: { kind: 'token', name: 'alice' } }), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' } }));
  assert.equal(r.replies.filter((x) => (x as { method?: string }).method === 'elicitation/create'), []);
  const result = (r.replies[0] as { result: { isError: boolean; content: { text: string }[] } }).result;
  assert.is(result.isError, true);
  assert.match(result.content[0]!.text, /cannot be asked/);
});

modes('an ask rule for a form client is sent as elicitation/create', () => {
  const r = feed(ready('2025-11-25', { elicitation: { form: {} } }, { principal: { kind: 'token', name: 'alice' } }), req(1, 'tools/call', { name: 'bash', arguments: { command: 'ls' } }));
  assert.is((r.replies[0] as { method: string }).method, 'elicitation/create');
});

modes.run();
