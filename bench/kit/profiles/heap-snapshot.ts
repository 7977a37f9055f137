/**
 * Reading V8 heap snapshots (.heapsnapshot JSON): what one snapshot holds
 * beyond another, per unit (per subscription, say), by constructor and by the
 * package whose code made each closure (and its context): enough to say what
 * an idle subscription costs and which layer holds it.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface HeapTally {
  total: number;
  /** Count and self bytes by "<type> <name>" (strings and code lumped). */
  byConstructor: Map<string, [number, number]>;
  /** Count and self bytes of closures and their contexts, by the package (or file of ours) their code is in. */
  closuresByPackage: Map<string, [number, number]>;
}

/** The package a script URL belongs to: "@scope/name" or "name" under node_modules, else the path under the project. */
function packageOf(url: string): string {
  if (url === '(sliced string)' || url === '(concatenated string)') return '(a script whose name the snapshot does not keep)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  const ours = /\/(src|dist)\/(.*)$/.exec(url);
  if (ours) return `parley ${ours[2]!.replace(/^src\//, '')}`;
  return url.startsWith('node:') ? 'node (core)' : url || '(no script)';
}

export function tallyHeap(file: string): HeapTally {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const { node_fields: nf, node_types, edge_fields: ef, edge_types } = s.snapshot.meta;
  const types = node_types[0];
  const edgeTypes = edge_types[0];
  const N = nf.length;
  const E = ef.length;
  const [iType, iName, iSize, iEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => nf.indexOf(f)) as [number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f)) as [number, number, number];
  const count = s.nodes.length / N;
  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0, e = 0; n < count; n++) {
    firstEdge[n] = e;
    e += s.nodes[n * N + iEdges]! * E;
  }
  const edge = (node: number, name: string): number | undefined => {
    for (let e = firstEdge[node]!; e < firstEdge[node]! + s.nodes[node * N + iEdges]! * E; e += E) {
      const t = edgeTypes[s.edges[e + eType]!];
      if (t !== 'element' && t !== 'hidden' && s.strings[s.edges[e + eName]!] === name) return s.edges[e + eTo]! / N;
    }
    return undefined;
  };
  const nameOf = (node: number) => s.strings[s.nodes[node * N + iName]!]!;
  const bump = (map: Map<string, [number, number]>, key: string, size: number) => {
    const entry = map.get(key) ?? [0, 0];
    entry[0] += 1;
    entry[1] += size;
    map.set(key, entry);
  };
  const tally: HeapTally = { total: 0, byConstructor: new Map(), closuresByPackage: new Map() };
  const seenContexts = new Set<number>();
  for (let n = 0; n < count; n++) {
    const type = types[s.nodes[n * N + iType]!]!;
    const size = s.nodes[n * N + iSize]!;
    tally.total += size;
    const name = type.includes('string') ? '(string)' : type === 'code' ? '(code)' : nameOf(n).slice(0, 60);
    bump(tally.byConstructor, `${type} ${name}`, size);
    if (type !== 'closure') continue;
    // A bound function (fn.bind) counts with the function it binds; a closure without a script is V8's own (a
    // promise's resolving functions, an async function's await steps).
    const bound = edge(n, 'bound_function');
    const shared = edge(bound ?? n, 'shared');
    // V8 names the edge either way, by version and by how far the function was compiled.
    const script = shared === undefined ? undefined : (edge(shared, 'script_or_debug_info') ?? edge(shared, 'script'));
    const url = script === undefined ? '' : nameOf(edge(script, 'name') ?? script);
    const context = edge(n, 'context');
    const owner = `${script === undefined ? 'V8 builtins (promise resolvers, await steps)' : packageOf(url)}${bound === undefined ? '' : ' (bound functions)'}`;
    bump(tally.closuresByPackage, owner, size);
    // A context is counted with the first closure of the package that points at it (contexts are shared by a scope's closures).
    if (context !== undefined && nameOf(context) === 'system / Context' && !seenContexts.has(context)) {
      seenContexts.add(context);
      bump(tally.closuresByPackage, `${owner} (contexts)`, s.nodes[context * N + iSize]!);
    }
  }
  return tally;
}

/** Rows of [key, count per unit, bytes per unit] of what `after` holds beyond `before`, largest first. */
export function perUnit(before: Map<string, [number, number]>, after: Map<string, [number, number]>, units: number): Array<[string, number, number]> {
  return [...after]
    .map(([key, [c, b]]): [string, number, number] => {
      const [c0, b0] = before.get(key) ?? [0, 0];
      return [key, (c - c0) / units, (b - b0) / units];
    })
    .filter(([, , bytes]) => bytes > 0)
    .sort((a, b) => b[2] - a[2]);
}
