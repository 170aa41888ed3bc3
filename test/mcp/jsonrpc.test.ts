import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { errorLine, notificationLine, requestLine, responseIdOf, resultLine } from '../../src/mcp/jsonrpc.ts';

test('responseIdOf reads numeric and string ids of results and errors', () => {
  assert.is(responseIdOf(resultLine(42, { a: 1 })), 42);
  assert.is(responseIdOf(errorLine(-3.5, -32600, 'x')), -3.5);
  assert.is(responseIdOf(resultLine('abc', {})), 'abc');
  assert.is(responseIdOf(resultLine('a"b\\",c', {})), 'a"b\\",c');
});

test('responseIdOf ignores notifications, server requests and id-null errors', () => {
  assert.is(responseIdOf(notificationLine('notifications/progress', { progress: 1 })), undefined);
  assert.is(responseIdOf(requestLine('superpi-confirm-1', 'elicitation/create', {})), undefined);
  assert.is(responseIdOf(errorLine(null, -32700, 'Parse error')), undefined);
});

test.run();
