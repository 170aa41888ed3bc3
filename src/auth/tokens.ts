// Bearer tokens → principals. Tokens are kept only as SHA-256 digests, so a token never sits in memory
// in a form a log line could print, and lookups do not compare secret strings byte by byte.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Principal } from '../mcp/state.ts';

export class TokenConfigError extends Error {
  override readonly name = 'TokenConfigError';
}

export class TokenTable {
  readonly #byDigest = new Map<string, string>();

  get size(): number {
    return this.#byDigest.size;
  }

  /**
   * `where` names the pair in an error (`SUPERPI_TOKENS pair 2`, `tokens.txt:3`), never its text: a token and
   * its principal written the wrong way round would put the token in the message, on the operator's stderr.
   */
  add(token: string, principal: string, where = 'a token=principal pair'): void {
    if (token.length < 8) throw new TokenConfigError(`${where}: the token is shorter than 8 characters`);
    if (!/^[A-Za-z0-9._@-]{1,64}$/.test(principal)) throw new TokenConfigError(`${where}: the principal name must be 1-64 characters of letters, digits, . _ @ - (token first, then principal)`);
    this.#byDigest.set(digest(token), principal);
  }

  /**
   * The principal an `Authorization` header names: a known bearer token → that principal; no header →
   * anonymous; a header with an unknown or malformed token → null (refused, never anonymous).
   */
  resolve(authorization: string | undefined): Principal | null {
    if (authorization === undefined || authorization === '') return { kind: 'anonymous' };
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) return null;
    const name = this.#byDigest.get(digest(m[1] as string));
    return name === undefined ? null : { kind: 'token', name };
  }
}

/** `SUPERPI_TOKENS="tokenA=alice,tokenB=bob"`. */
export function parseTokenList(list: string, table = new TokenTable()): TokenTable {
  for (const [i, pair] of list.split(',').map((p) => p.trim()).filter((p) => p !== '').entries()) {
    const eq = pair.lastIndexOf('=');
    if (eq <= 0 || eq === pair.length - 1) throw new TokenConfigError('SUPERPI_TOKENS takes comma-separated token=principal pairs');
    table.add(pair.slice(0, eq), pair.slice(eq + 1), `SUPERPI_TOKENS pair ${i + 1}`);
  }
  return table;
}

/** `--tokens FILE`: one `token principal` pair per line; blank lines and `#` comments are skipped. */
export async function readTokenFile(file: string, table = new TokenTable()): Promise<TokenTable> {
  const text = await readFile(file, 'utf8');
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const parts = line.split(/\s+/);
    if (parts.length !== 2) throw new TokenConfigError(`${file}:${i + 1}: expected "token principal"`);
    table.add(parts[0] as string, parts[1] as string, `${file}:${i + 1}`);
  });
  return table;
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
