// The sandbox flags' parsers and what a policy hides before the disk is looked at.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allowedEnvironment, defaultPolicy, hiddenCandidates, parseEnvNames, parseNetworkPolicy, parsePathList, SandboxPolicyError } from '../../../src/tools/sandbox/policy.ts';

test('--bash-network: off by default, on, allow=HOST,HOST; anything else is an error naming the forms', () => {
  assert.equal(parseNetworkPolicy(undefined), { kind: 'none' });
  assert.equal(parseNetworkPolicy('off'), { kind: 'none' });
  assert.equal(parseNetworkPolicy('on'), { kind: 'host' });
  assert.equal(parseNetworkPolicy('allow=Registry.npmjs.org, *.github.com,example.com:8443'), { kind: 'allow', hosts: ['registry.npmjs.org', '*.github.com', 'example.com:8443'] });
  assert.throws(() => parseNetworkPolicy('allow='), (err: unknown) => err instanceof SandboxPolicyError);
  assert.throws(() => parseNetworkPolicy('allow=http://x'), /--bash-network: allow-list entry "http:\/\/x": write the host alone/);
  assert.throws(() => parseNetworkPolicy('maybe'), /off, on or allow=/);
});

test('path flags resolve against the working directory and refuse the root; --bash-env takes variable names only', () => {
  assert.equal(parsePathList('--bash-hide', ['a/b', '/abs'], '/cwd'), ['/cwd/a/b', '/abs']);
  assert.throws(() => parsePathList('--bash-writable', ['/'], '/cwd'), /root directory/);
  assert.equal(parseEnvNames(['NPM_TOKEN', '_X1']), ['NPM_TOKEN', '_X1']);
  assert.throws(() => parseEnvNames(['A=B']), /not a variable name/);
});

test('the default hides the server\'s home, the credential stores under HOME, system secrets and sockets, and SSH_AUTH_SOCK', () => {
  const hidden = hiddenCandidates({ ...defaultPolicy({}), serverState: ['/srv/sp-home', '/etc/sp/tokens'] }, '/home/u', { SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1' }, '/tmp');
  for (const p of ['/srv/sp-home', '/etc/sp/tokens', '/home/u/.ssh', '/home/u/.pgpass', '/home/u/.aws', '/home/u/.config/gcloud', '/home/u/.kube', '/home/u/.docker', '/home/u/.netrc', '/home/u/.npmrc', '/home/u/.git-credentials', '/home/u/.gnupg', '/etc/shadow', '/run/docker.sock', '/run/user', '/tmp/ssh-x/agent.1']) {
    assert.ok(hidden.includes(p), `${p} is not hidden`);
  }
});

test('--bash-reveal shows a default-hidden path and what is under it; --bash-hide adds one, and wins over a reveal', () => {
  const policy = { ...defaultPolicy({}), reveal: ['/home/u/.npmrc', '/home/u/.config'], hide: ['/data/secret', '/home/u/.config/gh'] };
  const hidden = hiddenCandidates(policy, '/home/u', {}, '/tmp');
  assert.not.ok(hidden.includes('/home/u/.npmrc'));
  assert.not.ok(hidden.includes('/home/u/.config/gcloud'));
  assert.ok(hidden.includes('/home/u/.config/gh'));
  assert.ok(hidden.includes('/data/secret'));
  assert.ok(hidden.includes('/home/u/.ssh'));
});

test('a temp directory other than /tmp is hidden (other sessions\' full-output files live there)', () => {
  assert.ok(hiddenCandidates(defaultPolicy({}), '/home/u', {}, '/var/tmp/sp').includes('/var/tmp/sp'));
  assert.not.ok(hiddenCandidates(defaultPolicy({}), '/home/u', {}, '/tmp').includes('/tmp'));
});

test('the environment allow-list passes no secret-looking variable unless named', () => {
  const env = { PATH: '/bin', PGPASSWORD: 'p', AWS_ACCESS_KEY_ID: 'a', NPM_TOKEN: 'n', ANTHROPIC_API_KEY: 'k', SUPERPI_TOKENS: 't', LC_CTYPE: 'C' };
  assert.equal(allowedEnvironment([], env), { PATH: '/bin', LC_CTYPE: 'C' });
  assert.equal(allowedEnvironment(['NPM_TOKEN'], env), { PATH: '/bin', LC_CTYPE: 'C', NPM_TOKEN: 'n' });
});

test.run();
