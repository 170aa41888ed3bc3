// Where an allowed host name may lead the egress proxy: the name is resolved once, every address is
// checked against the special-purpose ranges, and the connection is handed exactly the addresses that
// passed, so a second answer of the resolver (DNS rebinding) is never asked for, let alone used.

import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIPv6, type LookupFunction } from 'node:net';
import { addressAllowed, DEFAULT_EGRESS_PORTS, type EgressRule, type EgressTarget } from './egress-allow.ts';
import { describeSpecialUse, type SpecialUse, specialUse } from './special-addresses.ts';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** An address a name resolved to that the proxy will not connect to, and why. */
export interface RefusedAddress {
  readonly address: string;
  readonly use: SpecialUse;
}

/** Every address the name resolved to is special and unlisted: the message is the 403's reason. */
export class SpecialAddressError extends Error {
  readonly code = 'ESPECIALADDRESS';
  constructor(readonly target: EgressTarget, readonly refused: readonly RefusedAddress[]) {
    super(specialRefusalText(target, refused));
  }
}

export type EgressLog = (level: 'debug' | 'info', message: string, data: Record<string, unknown>) => void;

/**
 * The lookup net.connect is given for an allowed name: resolves it through `lookup` (all addresses, one
 * call), keeps each address that is ordinary or that the list names itself on the target's port
 * (addressAllowed), and answers with only those, as net.connect asked (all, or the first). No address
 * left: a SpecialAddressError, logged once for the operator. Addresses dropped beside kept ones are
 * logged at debug: the connection goes to the kept ones only.
 */
export function checkedLookup(target: EgressTarget, rules: readonly EgressRule[], lookup: LookupFunction, log: EgressLog): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    lookup(hostname, { ...options, all: true }, (err, answer) => {
      if (err) return callback(err, []);
      const addresses = (Array.isArray(answer) ? answer : [{ address: answer, family: isIPv6(answer) ? 6 : 4 }]) as LookupAddress[];
      if (addresses.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      const kept: LookupAddress[] = [];
      const refused: RefusedAddress[] = [];
      for (const one of addresses) {
        const use = specialUse(one.address);
        if (use === null || addressAllowed(rules, one.address, target.port)) kept.push(one);
        else refused.push({ address: one.address, use });
      }
      const where = `${target.host}:${target.port}`;
      if (kept.length === 0) {
        const error = new SpecialAddressError(target, refused);
        log('info', 'egress refused: the name resolves to special-purpose addresses only', {
          target: where, addresses: refused.map((r) => `${r.address} (${describeSpecialUse(r.use)})`),
        });
        return callback(error, []);
      }
      if (refused.length > 0) log('debug', 'egress skipped special-purpose addresses', { target: where, addresses: refused.map((r) => r.address) });
      if (options.all === true) return callback(null, kept);
      const first = kept[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** An address as an allow-list entry: `10.0.0.5`, `[fd00::1]`, with `:port` unless the port is 80 or 443. */
function addressEntry(address: string, port: number): string {
  const host = isIPv6(address) ? `[${address}]` : address;
  return DEFAULT_EGRESS_PORTS.includes(port) ? host : `${host}:${port}`;
}

/** The body of the 403 for a name that resolves to special-purpose addresses only. */
export function specialRefusalText(target: EgressTarget, refused: readonly RefusedAddress[]): string {
  const where = `${target.host}:${target.port}`;
  const listed = refused.map((r) => `  ${r.address} (${describeSpecialUse(r.use)})`);
  const entries = [...new Set(refused.filter((r) => !r.address.includes('%')).map((r) => addressEntry(r.address, target.port)))];
  return [
    `super-pi egress proxy: ${where} is on the allow list, but it resolves only to special-purpose addresses,`,
    'which an allowed name may not lead to (the server\'s own loopback, private networks, link-local, …):',
    ...listed,
    entries.length === 0
      ? 'No allow-list entry can open these.'
      : `The operator opens one by adding the address itself to the list (then it is reachable directly too): --bash-network allow=…,${entries.join(',')}`,
    '',
  ].join('\n');
}
