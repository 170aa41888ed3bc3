import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { answer, notice, question, refusal } from '../../src/mcp/outgoing.ts';

test('an answer and an error name in inReplyTo the id written in their line, numbers and strings apart; only the error says isError', () => {
  for (const id of [42, -3.5, 'abc', 'a"b\\",c', '42']) {
    for (const out of [answer(id, { a: 1 }), refusal(id, -32600, 'x')]) {
      assert.is(out.inReplyTo, id);
      assert.is((JSON.parse(out.line) as { id: unknown }).id, id);
      assert.is(out.relatedTo, undefined);
      assert.is(out.isError === true, 'error' in (JSON.parse(out.line) as object));
    }
  }
});

test('an error with id null, a notification and a server request answer nothing; the last two may name their request', () => {
  assert.equal(refusal(null, -32700, 'Parse error'), { line: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}', isError: true, errorCode: -32700 });
  assert.equal(notice('notifications/resources/updated', { uri: 'u' }), { line: '{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"u"}}' });
  assert.equal(notice('notifications/progress', { progress: 1 }, 7).relatedTo, 7);
  const ask = question('superpi-confirm-1', 'elicitation/create', {}, '7');
  assert.equal([ask.inReplyTo, ask.relatedTo], [undefined, '7']);
  assert.is((JSON.parse(ask.line) as { id: unknown }).id, 'superpi-confirm-1');
});

test.run();
