// Names the JIT-compiled JavaScript in a callgrind dump: callgrind knows node's own symbols (V8's builtins,
// libuv, the C++ runtime) but sees V8's generated code as bare addresses, which `node --perf-basic-prof`
// writes to /tmp/perf-<pid>.map with the function each range holds. This reads a dump's self cost per
// function, puts the map's name on each address, sums by name, and prints the top
// rows, per call when told how many calls the dump counted (a block of bench/call-instructions.ts).
// Usage: npx tsx bench/callgrind-names.ts <dump> <perf map> [--calls N] [--top 40] [--minus <dump of the other era>]

import { readFileSync } from 'node:fs';

const [dump, mapFile] = process.argv.slice(2);
const arg = (name: string, fallback: string): string => {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : (process.argv[at + 1] as string);
};
if (dump === undefined || mapFile === undefined) throw new Error('usage: callgrind-names.ts <dump> <perf map> [--calls N] [--top 40] [--minus <dump>]');
const calls = Number(arg('--calls', '1'));
const top = Number(arg('--top', '40'));
const minus = arg('--minus', '');

/** The map's ranges, sorted by start. */
const ranges = readFileSync(mapFile, 'utf8').split('\n').flatMap((line) => {
  const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
  return m === null ? [] : [{ start: parseInt(m[1] as string, 16), end: parseInt(m[1] as string, 16) + parseInt(m[2] as string, 16), name: m[3] as string }];
}).sort((a, b) => a.start - b.start);

function nameAt(address: number): string | undefined {
  let lo = 0;
  let hi = ranges.length - 1;
  let found: string | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = ranges[mid] as (typeof ranges)[number];
    if (r.start <= address) {
      if (address < r.end) found = r.name; // the last range starting at or before it (a later one replaces moved code)
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * Self instructions by function name, JIT addresses named from the map. Read from the dump itself (a cost
 * line after `calls=` is the callee's inclusive cost, not the caller's own): callgrind_annotate's self
 * figures of a dump taken mid-run (`callgrind_control -d`) count the functions still on the stack in full.
 */
function costs(file: string): Map<string, number> {
  const names = new Map<string, string>();
  const byName = new Map<string, number>();
  let fn = '';
  let skipNext = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) {
      const m = /^fn=\((\d+)\)(?: (.*))?$/.exec(line);
      if (m !== null) {
        if (m[2] !== undefined) names.set(m[1] as string, m[2]);
        fn = names.get(m[1] as string) ?? '?';
      }
      continue;
    }
    if (line.startsWith('cfn=')) {
      const m = /^cfn=\((\d+)\)(?: (.*))?$/.exec(line);
      if (m !== null && m[2] !== undefined) names.set(m[1] as string, m[2]);
      continue;
    }
    if (line.startsWith('calls=')) {
      skipNext = true;
      continue;
    }
    const m = /^[+-]?\d+ (\d+)$/.exec(line) ?? /^\* (\d+)$/.exec(line);
    if (m === null) continue;
    if (skipNext) {
      skipNext = false;
      continue;
    }
    const address = /^0x([0-9a-f]+)$/.exec(fn);
    const name = address !== null ? (nameAt(parseInt(address[1] as string, 16)) ?? 'JIT code not in the map') : fn.replace(/'\d+$/, '');
    byName.set(name, (byName.get(name) ?? 0) + Number(m[1]));
  }
  return byName;
}

const main = costs(dump);
const other = minus === '' ? null : costs(minus);
const names = new Set([...main.keys(), ...(other?.keys() ?? [])]);
const rows = [...names].map((name) => ({ name, cost: ((main.get(name) ?? 0) - (other?.get(name) ?? 0)) / calls }))
  .sort((a, b) => Math.abs(b.cost) - Math.abs(a.cost)).slice(0, top);
const total = [...main.values()].reduce((a, b) => a + b, 0) - (other === null ? 0 : [...other.values()].reduce((a, b) => a + b, 0));
process.stdout.write(`total ${Math.round(total / calls)} instructions${calls === 1 ? '' : ' per call'}${other === null ? '' : ' (difference)'}\n`);
for (const r of rows) process.stdout.write(`${String(Math.round(r.cost)).padStart(10)}  ${r.name}\n`);
