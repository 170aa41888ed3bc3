// Which hosts a sandboxed `bash` command may reach through the egress proxy: the operator's allow list
// (`--bash-network allow=…`), parsed once into rules, and the one check every request target goes through.

import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';

/** The ports a host named without one allows: plain HTTP and HTTPS. */
export const DEFAULT_EGRESS_PORTS: readonly number[] = [80, 443];

/** The longest host name DNS can carry (RFC 1035), and the longest label within one. */
const MAX_HOST_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
/** A label as host names are written in practice: letters, digits, `-`, and `_` (seen in real names). */
const LABEL = /^[a-z0-9_-]+$/;

/** One entry of the allow list: a host (or every subdomain of a domain) and the ports it opens. */
export interface EgressRule {
  /** Canonical: lower case, ASCII (punycode), no trailing dot; an IPv6 address in brackets. */
  readonly host: string;
  /** `*.domain`: `host` is the domain, and only names strictly below it match. */
  readonly subdomains: boolean;
  /** The one port the entry names, or null for DEFAULT_EGRESS_PORTS. */
  readonly port: number | null;
}

/** A request target the proxy was asked for, checked for shape (not yet against the list). */
export interface EgressTarget {
  /** Canonical as EgressRule.host; what the proxy resolves and connects to (brackets removed for IPv6). */
  readonly host: string;
  readonly port: number;
  readonly ip: boolean;
}

/** A bad allow-list entry or request target; the message says what is wrong and how to write it. */
export class EgressSyntaxError extends Error {}

/**
 * Parses the text after `--bash-network allow=`: host entries separated by commas. An entry is
 * `host` (ports 80 and 443), `host:port` (that port only), `*.domain` / `*.domain:port` (every name
 * below the domain, not the domain itself), an IPv4 address in four decimal parts, or an IPv6 address in
 * brackets, each with an optional port. Returns the entries in canonical form (lower case, punycode, no
 * trailing dot), duplicates dropped, in order; throws EgressSyntaxError naming the first bad entry.
 */
export function parseEgressAllowList(text: string): string[] {
  const seen = new Set<string>();
  const entries = text.split(',').map((e) => e.trim());
  if (entries.every((e) => e === '')) throw new EgressSyntaxError('allow= needs at least one host, as in --bash-network allow=github.com,registry.npmjs.org');
  for (const entry of entries) {
    if (entry === '') throw new EgressSyntaxError(`"${text}" has an empty entry; separate hosts with single commas, as in allow=github.com,registry.npmjs.org`);
    seen.add(formatRule(parseEgressRule(entry)));
  }
  return [...seen];
}

/** One allow-list entry as a rule; throws EgressSyntaxError naming the entry. */
export function parseEgressRule(entry: string): EgressRule {
  const fail = (why: string): never => {
    throw new EgressSyntaxError(`allow-list entry "${entry}": ${why}`);
  };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) fail('write the host alone, without a scheme (github.com, not https://github.com)');
  if (/[/?#@\\\s]/.test(entry)) fail('write a host with an optional :port, nothing else (no path, user or spaces)');
  let subdomains = false;
  let rest = entry;
  if (rest.startsWith('*.')) {
    subdomains = true;
    rest = rest.slice(2);
  }
  if (rest.includes('*')) fail('a wildcard is allowed only as the whole first label (*.example.com)');
  const authority = splitAuthority(rest);
  if (typeof authority === 'string') return fail(authority);
  const host = canonicalHost(authority.host);
  if (typeof host === 'string') return fail(host);
  if (subdomains && host.ip) fail('*. takes a domain name, not an address');
  if (subdomains && !host.name.includes('.')) fail(`*.${host.name} would allow a whole top-level domain; name the domain (*.example.${host.name})`);
  return { host: host.name, subdomains, port: authority.port };
}

/** The entry text of a rule, in the form parseEgressRule reads. */
export function formatRule(rule: EgressRule): string {
  return `${rule.subdomains ? '*.' : ''}${rule.host}${rule.port === null ? '' : `:${rule.port}`}`;
}

/**
 * A request target (`host:port` of a CONNECT, the authority of an absolute-form URL) checked for shape.
 * `defaultPort` is used when the authority has none (null: a port is required). Returns the target, or
 * a message saying what is wrong with it.
 */
export function parseEgressTarget(authority: string, defaultPort: number | null): EgressTarget | string {
  if (authority.includes('@')) return 'a target with user information is not accepted';
  const parts = splitAuthority(authority);
  if (typeof parts === 'string') return parts;
  const port = parts.port ?? defaultPort;
  if (port === null) return 'the target needs a port (host:port)';
  const host = canonicalHost(parts.host);
  if (typeof host === 'string') return host;
  return { host: host.name, port, ip: host.ip };
}

/**
 * Whether `target` is allowed by `rules`. Names and addresses are compared as written (canonical): a name
 * never matches an address rule, nor an address a name rule, so an allowed name does not open whatever
 * address it resolves to, and an address is reachable only when the list names that address.
 */
export function egressAllowed(rules: readonly EgressRule[], target: EgressTarget): boolean {
  return rules.some((rule) => {
    const portOk = rule.port === null ? DEFAULT_EGRESS_PORTS.includes(target.port) : rule.port === target.port;
    if (!portOk) return false;
    if (rule.subdomains) return !target.ip && target.host.endsWith(`.${rule.host}`);
    return rule.host === target.host;
  });
}

/**
 * Whether the list names `address` itself (as a resolver returns it) on `port`: the operator's explicit
 * opt-in that lets an allowed name lead to a special-purpose address (src/tools/sandbox/special-addresses.ts).
 * The address is compared in its canonical form, so `::1` and `0:0::1` are one entry, while
 * `::ffff:127.0.0.1` is not `127.0.0.1`; an address with a zone (`fe80::1%eth0`) is never named.
 */
export function addressAllowed(rules: readonly EgressRule[], address: string, port: number): boolean {
  const target = parseEgressTarget(isIPv6(address) ? `[${address}]` : address, port);
  return typeof target !== 'string' && target.ip && egressAllowed(rules, target);
}

/** The host (as written) and the port of `host`, `host:port`, `[v6]` or `[v6]:port`, or what is wrong. */
function splitAuthority(text: string): { host: string; port: number | null } | string {
  let host: string;
  let portText: string | null = null;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) return `"${text}" opens an IPv6 bracket it never closes`;
    host = text.slice(0, end + 1);
    const after = text.slice(end + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return `"${text}" has text after the IPv6 address that is not :port`;
      portText = after.slice(1);
    }
  } else {
    const colon = text.indexOf(':');
    if (colon >= 0 && text.indexOf(':', colon + 1) >= 0) return `"${text}" has more than one colon; write an IPv6 address in brackets ([::1]:8080)`;
    host = colon < 0 ? text : text.slice(0, colon);
    portText = colon < 0 ? null : text.slice(colon + 1);
  }
  if (host === '') return `"${text}" names no host`;
  if (portText === null) return { host, port: null };
  const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : 0;
  if (port < 1 || port > 65535) return `"${portText}" is not a port (1 to 65535)`;
  return { host, port };
}

/**
 * Whether an `xn--` label is punycode that decodes to a name and encodes back to itself. Node's own
 * conversion does not decide it alike everywhere: Node 20 and 22 refuse `xn--` and `xn--abc` but turn
 * `xn--zz-` into `zz`; Node 24 passes all three through unchanged.
 */
function isPunycode(label: string): boolean {
  const decoded = domainToUnicode(label);
  return decoded !== '' && decoded !== label && domainToASCII(decoded) === label;
}

/**
 * A host as written, in canonical form: an IPv6 address in brackets (compressed, lower case), an IPv4
 * address in four decimal parts, or a DNS name (lower case, punycode, no trailing dot). Anything a
 * resolver might read as a number in another form (`127.1`, `0x7f.0.0.1`, `2130706433`) is refused
 * rather than guessed at, so no two spellings of one address reach different rules.
 */
function canonicalHost(written: string): { name: string; ip: boolean } | string {
  if (written.startsWith('[')) {
    const inner = written.slice(1, -1);
    if (!isIPv6(inner)) return `"${written}" is not an IPv6 address`;
    // A zone (`%eth0`) names an interface of the server: no entry or target needs one, and URL refuses it.
    if (inner.includes('%')) return `"${written}" has a zone (%…); write the address without it`;
    return { name: new URL(`http://${written}/`).hostname, ip: true };
  }
  if (isIPv4(written)) return { name: written, ip: true };
  if (isIPv6(written)) return `"${written}" is an IPv6 address; write it in brackets ([${written}])`;
  const ascii = domainToASCII(written.endsWith('.') ? written.slice(0, -1) : written);
  if (ascii === '') return `"${written}" is not a host name`;
  if (ascii.length > MAX_HOST_LENGTH) return `"${written}" is longer than a host name can be (${MAX_HOST_LENGTH} characters)`;
  const labels = ascii.split('.');
  for (const label of labels) {
    if (!LABEL.test(label) || label.length > MAX_LABEL_LENGTH) return `"${written}" is not a host name (labels are letters, digits, - and _, 1 to ${MAX_LABEL_LENGTH} long)`;
    if (label.startsWith('xn--') && !isPunycode(label)) return `"${written}" is not a host name ("${label}" is not valid punycode)`;
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1] as string) || /^0x[0-9a-f]*$/.test(labels[labels.length - 1] as string)) {
    return `"${written}" looks like an address but is not four decimal parts (write IPv4 as 127.0.0.1)`;
  }
  return { name: ascii, ip: false };
}
