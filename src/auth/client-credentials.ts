// This resource server's own client credentials at the issuers, for token introspection (RFC 7662 §2.1):
// the client id and secret the operator registered, sent as HTTP Basic (RFC 6749 §2.3.1). The secret
// stays in a private field: printing or serializing the credentials shows the id only.

import { readSecretFile } from './secret-files.ts';

export class ClientCredentialsError extends Error {
  override readonly name = 'ClientCredentialsError';
}

export class ClientCredentials {
  readonly clientId: string;
  readonly #secret: string;

  constructor(clientId: string, secret: string) {
    if (clientId === '' || /[\x00-\x1f\x7f]/.test(clientId)) throw new ClientCredentialsError('--oauth-introspection-client-id: an id of printable characters is needed');
    if (secret === '') throw new ClientCredentialsError('the introspection client secret is empty');
    this.clientId = clientId;
    this.#secret = secret;
  }

  /** The `Authorization` header value of `client_secret_basic`. */
  basicAuthorization(): string {
    return `Basic ${Buffer.from(`${encodeURIComponent(this.clientId)}:${encodeURIComponent(this.#secret)}`).toString('base64')}`;
  }

  toJSON(): { clientId: string } {
    return { clientId: this.clientId };
  }

  toString(): string {
    return `ClientCredentials(${this.clientId})`;
  }
}

export interface ClientCredentialsSource {
  /** `--oauth-introspection-client-id`, else `SUPERPI_OAUTH_INTROSPECTION_CLIENT_ID`. */
  readonly clientId?: string | undefined;
  /** `--oauth-introspection-secret-file`: a file holding the secret (a trailing newline is not part of it). */
  readonly secretFile?: string | undefined;
  /** `SUPERPI_OAUTH_INTROSPECTION_SECRET`. */
  readonly secretEnv?: string | undefined;
}

/**
 * The credentials the operator gave, or undefined when none (opaque tokens are then refused). The secret
 * comes from a file or the environment, never from the command line, where any local user could read it.
 */
export function clientCredentialsFrom(source: ClientCredentialsSource, read: (path: string) => string = readSecretFile): ClientCredentials | undefined {
  const id = source.clientId === '' ? undefined : source.clientId;
  let secret: string | undefined;
  if (source.secretFile !== undefined) {
    try {
      secret = read(source.secretFile).replace(/\r?\n$/, '');
    } catch (err) {
      throw new ClientCredentialsError(`--oauth-introspection-secret-file ${source.secretFile}: cannot read it (${(err as Error).message})`, { cause: err });
    }
  } else if (source.secretEnv !== undefined && source.secretEnv !== '') {
    secret = source.secretEnv;
  }
  if (id === undefined && secret === undefined) return undefined;
  if (id === undefined) throw new ClientCredentialsError('an introspection client secret is given without --oauth-introspection-client-id (or SUPERPI_OAUTH_INTROSPECTION_CLIENT_ID)');
  if (secret === undefined) throw new ClientCredentialsError('--oauth-introspection-client-id needs its secret: --oauth-introspection-secret-file FILE or SUPERPI_OAUTH_INTROSPECTION_SECRET');
  return new ClientCredentials(id, secret);
}
