// Reading a V8 .heapsnapshot (the JSON that `HeapProfiler.takeHeapSnapshot`, `--heapsnapshot-signal`
// and `v8.writeHeapSnapshot` write): every node's type, name and self size, summed per kind of object and
// per owner, so that two snapshots of one process (before and after opening N sessions) give bytes per
// session by constructor and by who holds them. An owner is the first retainer that is not an internal
// link (a map, an array's backing store, a context): "Session.#inFlight → Map" tells more than "Map".

interface RawSnapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: readonly string[];
      readonly node_types: readonly [readonly string[], ...unknown[]];
      readonly edge_fields: readonly string[];
      readonly edge_types: readonly [readonly string[], ...unknown[]];
    };
    readonly node_count: number;
  };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

/** Bytes and objects under one label. */
export interface Tally {
  count: number;
  bytes: number;
}

export interface HeapSummary {
  /** Sum of every node's self size. */
  readonly total: number;
  /** By `type:name` (an object's name is its constructor's). */
  readonly byKind: Map<string, Tally>;
  /** By `owner → type:name`, the owner being the first retainer named by a property, an element or a variable. */
  readonly byOwner: Map<string, Tally>;
}

/** Kinds whose name is their content (a string's text, a number): grouped under their type alone. */
const CONTENT_NAMED = new Set(['string', 'concatenated string', 'sliced string', 'number', 'regexp', 'bigint']);

const bump = (into: Map<string, Tally>, key: string, bytes: number): void => {
  const t = into.get(key);
  if (t) {
    t.count++;
    t.bytes += bytes;
  } else {
    into.set(key, { count: 1, bytes });
  }
};

export function summarize(json: string): HeapSummary {
  const raw = JSON.parse(json) as RawSnapshot;
  const { meta } = raw.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nType = meta.node_fields.indexOf('type');
  const nName = meta.node_fields.indexOf('name');
  const nSize = meta.node_fields.indexOf('self_size');
  const nEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const { nodes, edges, strings } = raw;
  const count = nodes.length / nf;

  const kindOf = (i: number): string => {
    const type = nodeTypes[nodes[i * nf + nType] as number] as string;
    if (CONTENT_NAMED.has(type)) return type;
    const name = strings[nodes[i * nf + nName] as number] as string;
    return `${type}:${name.length > 60 ? `${name.slice(0, 57)}...` : name}`;
  };

  // First retainer of every node, by a named edge (property, element, context variable, internal with a
  // name), skipping weak edges; `owner[i]` = the retainer's index, `via[i]` = the edge's name.
  const owner = new Int32Array(count).fill(-1);
  const via: string[] = new Array<string>(count);
  let edge = 0;
  for (let i = 0; i < count; i++) {
    const n = nodes[i * nf + nEdges] as number;
    for (let k = 0; k < n; k++, edge += ef) {
      const to = (edges[edge + eTo] as number) / nf;
      if (owner[to] !== -1) continue;
      const type = edgeTypes[edges[edge + eType] as number] as string;
      if (type === 'weak' || type === 'shortcut') continue;
      const nameOrIndex = edges[edge + eName] as number;
      owner[to] = i;
      via[to] = type === 'element' || type === 'hidden' ? `[${type}]` : (strings[nameOrIndex] ?? String(nameOrIndex));
    }
  }
  // Internal holders (a Map's table, an array's store, a closure's context, a system object) are walked
  // through to the object that holds them, at most a few links up.
  const INTERNAL = new Set(['array', 'hidden', 'code', 'object shape']);
  const ownerLabel = (i: number): string => {
    let at = i;
    let path = via[at] ?? '?';
    for (let hops = 0; hops < 4; hops++) {
      const up = owner[at] as number;
      if (up < 0) break;
      const upType = nodeTypes[nodes[up * nf + nType] as number] as string;
      const upName = strings[nodes[up * nf + nName] as number] as string;
      if (!INTERNAL.has(upType) && !(upType === 'object' && (upName === 'system / Context' || upName.startsWith('system /')))) {
        return `${kindOf(up)}.${path}`;
      }
      path = `${via[up] ?? '?'}/${path}`;
      at = up;
    }
    return `…${path}`;
  };

  let total = 0;
  const byKind = new Map<string, Tally>();
  const byOwner = new Map<string, Tally>();
  for (let i = 0; i < count; i++) {
    const size = nodes[i * nf + nSize] as number;
    if (size === 0) continue;
    total += size;
    const kind = kindOf(i);
    bump(byKind, kind, size);
    bump(byOwner, `${ownerLabel(i)} → ${kind}`, size);
  }
  return { total, byKind, byOwner };
}

export interface Delta {
  readonly label: string;
  /** Objects and bytes added per session (after − before, ÷ sessions). */
  readonly count: number;
  readonly bytes: number;
}

/** after − before per label, ÷ `per`, largest first, those above `minBytes` per session. */
export function diff(before: Map<string, Tally>, after: Map<string, Tally>, per: number, minBytes = 8): Delta[] {
  const labels = new Set([...before.keys(), ...after.keys()]);
  const out: Delta[] = [];
  for (const label of labels) {
    const a = after.get(label) ?? { count: 0, bytes: 0 };
    const b = before.get(label) ?? { count: 0, bytes: 0 };
    const bytes = (a.bytes - b.bytes) / per;
    if (Math.abs(bytes) >= minBytes) out.push({ label, count: (a.count - b.count) / per, bytes });
  }
  return out.sort((x, y) => y.bytes - x.bytes);
}
