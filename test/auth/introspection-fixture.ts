// A fake authorization server on 127.0.0.1 offering token introspection (RFC 7662) and no JWKS:
// RFC 8414 metadata naming its introspection endpoint, which answers each opaque token from a table,
// checks this server's client credentials (HTTP Basic), records what it was sent, and can misbehave.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const CLIENT_ID = 'super-pi-rs';
export const CLIENT_SECRET = 'introspection secret: 0123456789';

export type Behaviour = 'answer' | 'http-500' | 'not-json' | 'no-active' | 'huge' | 'hang' | 'held';

export interface FakeIntrospection {
  readonly issuer: string;
  /** Answers by token; an unknown token is `{ active: false }`. */
  readonly answers: Map<string, Record<string, unknown>>;
  /** Each request to the introspection endpoint: its Authorization header and form. */
  readonly requests: { authorization: string | undefined; form: URLSearchParams }[];
  behaviour: Behaviour;
  /** Whether the metadata names an introspection endpoint (else a JWKS, with no keys). */
  offers: boolean;
  /** Answers the requests held by `hang` (inactive) and `held` (from the table, as `answer` would). */
  release(): void;
  /** Called as each request is held by `hang` or `held`. */
  onHeld: () => void;
  close(): Promise<void>;
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

export async function startFakeIntrospection(): Promise<FakeIntrospection> {
  const hanging = new Set<() => void>();
  const fake = {
    issuer: '',
    answers: new Map<string, Record<string, unknown>>(),
    requests: [] as FakeIntrospection['requests'],
    behaviour: 'answer' as Behaviour,
    offers: true,
    onHeld: () => {},
  };
  const hold = (answer: () => void) => {
    hanging.add(answer);
    fake.onHeld();
  };
  const server: Server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.method === 'GET' && req.url === '/.well-known/oauth-authorization-server') {
      // Introspection only (no JWKS), or keys only: an issuer's metadata names one or the other.
      return void res.end(JSON.stringify({ issuer: fake.issuer, ...(fake.offers ? { introspection_endpoint: `${fake.issuer}/introspect` } : { jwks_uri: `${fake.issuer}/jwks` }) }));
    }
    if (req.method === 'GET' && req.url === '/jwks') return void res.end('{"keys":[]}');
    if (req.method !== 'POST' || req.url !== '/introspect') {
      res.statusCode = 404;
      return void res.end('{}');
    }
    void body(req).then((text) => {
      const form = new URLSearchParams(text);
      fake.requests.push({ authorization: req.headers.authorization, form });
      const expected = `Basic ${Buffer.from(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`).toString('base64')}`;
      if (req.headers.authorization !== expected) {
        res.statusCode = 401;
        return void res.end('{"error":"invalid_client"}');
      }
      switch (fake.behaviour) {
        case 'http-500': res.statusCode = 500; return void res.end('{}');
        case 'not-json': return void res.end('<html>');
        case 'no-active': return void res.end('{"sub":"x"}');
        case 'huge': return void res.end(JSON.stringify({ active: false, pad: 'x'.repeat(300 * 1024) }));
        case 'hang': return void hold(() => res.end('{"active":false}'));
        case 'held': return void hold(() => res.end(JSON.stringify(fake.answers.get(form.get('token') ?? '') ?? { active: false })));
        case 'answer': return void res.end(JSON.stringify(fake.answers.get(form.get('token') ?? '') ?? { active: false }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const release = () => {
    for (const end of hanging) end();
    hanging.clear();
  };
  return Object.assign(fake, {
    release,
    close: () => new Promise<void>((resolve) => {
      release();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}
