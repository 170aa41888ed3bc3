// Descriptors the server inherited from whatever started it (an MCP host, a supervisor, a shell that
// leaks one) without close-on-exec. Node and libuv open everything close-on-exec, but an inherited
// descriptor stays as it came, and neither spawn nor bwrap closes it: a command would get it, open, inside
// the sandbox (a file outside the workspace opened for writing is a write past the read-only root; a
// socket is a way past the network policy). A command's launch puts /dev/null over each of them.

import { openSync, readdirSync, readFileSync } from 'node:fs';
import type { StdioNull, StdioPipe } from 'node:child_process';
import { errnoCode } from '../fs-errors.ts';

/** O_CLOEXEC in the octal `flags:` line of /proc/self/fdinfo/N (Linux, every architecture Node runs on). */
const O_CLOEXEC = 0o2000000;

/** This process's descriptors from `from` up that a child would inherit, ascending; none where there is no /proc. */
export function inheritableDescriptors(from: number): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return [];
    throw err;
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < from) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${name}`, 'utf8');
    } catch (err) {
      // Closed since the listing (the listing's own descriptor is one): nothing to inherit.
      if (errnoCode(err) === 'ENOENT') continue;
      throw err;
    }
    const flags = /^flags:\s*([0-7]+)$/m.exec(info)?.[1];
    // Flags that cannot be read count as inheritable: covering one too many costs nothing.
    if (flags === undefined || (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) found.push(fd);
  }
  return found.sort((a, b) => a - b);
}

let devNull: number | undefined;
/**
 * What this process inherited, found once, at its first launch: a descriptor is inherited at exec, and
 * everything the server opens after (Node, libuv, SQLite) is close-on-exec. Scanning at every launch would
 * read one /proc file per open descriptor on the main thread for each command, and a client holding
 * thousands of connections open would make every `bash` call pay for them.
 */
let inherited: readonly number[] | undefined;

/**
 * `stdio` for spawn, extended so that each inheritable descriptor past it is /dev/null in the child
 * (spawn dup2s it over the number); the numbers between are left as they are ('ignore').
 */
export function stdioWithoutInherited<T extends StdioPipe | StdioNull>(stdio: readonly T[]): (T | StdioNull | number)[] {
  inherited ??= inheritableDescriptors(0);
  const leaked = inherited.filter((fd) => fd >= stdio.length);
  const last = leaked.at(-1);
  if (last === undefined) return [...stdio];
  // Opened close-on-exec, as everything Node opens: it reaches a child only where it is put.
  devNull ??= openSync('/dev/null', 'r');
  const out: (T | StdioNull | number)[] = [...stdio];
  const covered = new Set(leaked);
  for (let fd = stdio.length; fd <= last; fd++) out.push(covered.has(fd) ? devNull : 'ignore');
  return out;
}
