/**
 * Where code may reach: the layers' rules, checked on the source text, so a
 * change that breaks one fails here rather than in review.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

interface Import {
  target: string;
  typeOnly: boolean;
}

/** The relative imports (and re-exports) of a file, resolved to source paths. */
function importsOf(file: string): Import[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^;]*?\s+from\s+)?'(\.{1,2}\/[^']+)'/gms)].map((m) => ({
    target: resolve(dirname(file), m[2]!.replace(/\.js$/, '.ts')),
    typeOnly: Boolean(m[1]),
  }));
}

const files = sourceFiles(SRC);
const rel = (path: string) => relative(SRC, path);
const inLayer = (path: string, layer: string) => rel(path).startsWith(`${layer}/`);

describe('the layers', () => {
  it('schema imports nothing from src/db but types: storage is reached through src/resolvers', () => {
    const offending = files
      .filter((f) => inLayer(f, 'schema'))
      .flatMap((f) => importsOf(f).filter((i) => !i.typeOnly && inLayer(i.target, 'db')).map((i) => `${rel(f)} → ${rel(i.target)}`));
    expect(offending).toEqual([]);
  });

  it('storage imports nothing from src/resolvers or src/schema, not even types', () => {
    const offending = files
      .filter((f) => inLayer(f, 'db'))
      .flatMap((f) => importsOf(f).filter((i) => inLayer(i.target, 'resolvers') || inLayer(i.target, 'schema')).map((i) => `${rel(f)} → ${rel(i.target)}`));
    expect(offending).toEqual([]);
  });

  it('has no import cycle in src/ (type-only imports aside)', () => {
    const graph = new Map(files.map((f) => [f, importsOf(f).filter((i) => !i.typeOnly).map((i) => i.target)]));
    const cycles: string[] = [];
    const done = new Set<string>();
    const path: string[] = [];
    const visit = (file: string) => {
      if (done.has(file)) return;
      const at = path.indexOf(file);
      if (at >= 0) {
        cycles.push([...path.slice(at), file].map(rel).join(' → '));
        return;
      }
      path.push(file);
      for (const next of graph.get(file) ?? []) visit(next);
      path.pop();
      done.add(file);
    };
    for (const file of files) visit(file);
    expect(cycles).toEqual([]);
  });

  it('keeps no module-level mutable state in src/ but the named few: per-instance state lives in Services, per-request in Context', () => {
    // A variable, or a container that is not typed read-only (constant literals, `as const`, are not state).
    const MUTABLE = /^(?:export\s+)?(?:let|var)\s|^(?:export\s+)?const\s+\w+(?::(?!\s*Readonly)[^=]+)?\s*=\s*new\s+(?:Map|Set|WeakMap|WeakSet|Array)\b/;
    /** Each is process-wide on purpose; the reason stands beside it in its file. */
    const ALLOWED = new Set<string>([
      // The timeuuid generator's clock and node bits: ids must be unique and ordered across the whole process.
      'timeuuids.ts: let lastRequestedMs = Number.NEGATIVE_INFINITY;',
      'timeuuids.ts: let issuedMs = Number.NEGATIVE_INFINITY;',
      'timeuuids.ts: let issuedTicks = 0;',
      'timeuuids.ts: let nodeBits = drawNodeBits();',
      // A process runs one of each: the CLI's connection, main's config, and the tracer's one registration.
      'cli/search-backfill.ts: let db: Database | undefined;',
      'main.ts: let config: Config;',
      'observability/tracing.ts: let asyncContextRegistered = false;',
    ]);
    const offending = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => [line, i + 1] as const)
        .filter(([line]) => MUTABLE.test(line))
        .map(([line]) => `${rel(f)}: ${line.trim()}`),
    );
    expect(offending.filter((line) => !ALLOWED.has(line))).toEqual([]);
  });

  it('keeps the kernel (the files at the top of src/, pubsub/, presence/) below the layers: it imports nothing from them, not even types', () => {
    const kernel = (f: string) => (!rel(f).includes('/') && !['app.ts', 'main.ts'].includes(rel(f))) || ['pubsub', 'presence'].some((dir) => inLayer(f, dir));
    const above = ['auth', 'db', 'resolvers', 'schema', 'server', 'observability', 'cli', 'local-node'];
    const offending = files
      .filter(kernel)
      .flatMap((f) => importsOf(f).filter((i) => above.some((layer) => inLayer(i.target, layer))).map((i) => `${rel(f)} → ${rel(i.target)}`));
    expect(offending).toEqual([]);
  });

  it('keeps the context free of domains: resolvers/context.ts imports nothing from a domain folder or storage, not even types (each domain makes its own per-request reads)', () => {
    const context = files.find((f) => rel(f) === 'resolvers/context.ts')!;
    const domainOrStorage = (target: string) => inLayer(target, 'db') || (inLayer(target, 'resolvers') && rel(target).split('/').length > 2);
    expect(importsOf(context).filter((i) => domainOrStorage(i.target)).map((i) => rel(i.target))).toEqual([]);
  });

  it('keeps files free of domains: src/{db,resolvers,schema}/files import nothing from rooms, accounts, the messenger or the marketplace, not even types (rooms depend on files, one way)', () => {
    const layers = ['db', 'resolvers', 'schema'];
    const domains = ['rooms', 'accounts', 'messenger', 'marketplace'];
    const inFiles = (path: string) => layers.some((layer) => inLayer(path, `${layer}/files`));
    const inDomain = (path: string) => layers.some((layer) => domains.some((domain) => inLayer(path, `${layer}/${domain}`)));
    /** Every relative module a file names: its imports and re-exports, and `import('…')` in code or in a type. */
    const referencesOf = (file: string) => [
      ...importsOf(file).map((i) => i.target),
      ...[...readFileSync(file, 'utf8').matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)].map((m) => resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts'))),
    ];
    const filesPart = files.filter(inFiles);
    expect(filesPart.map(rel)).toEqual(expect.arrayContaining(['db/files/file-bytes.ts', 'resolvers/files/uploads.ts']));
    const offending = filesPart.flatMap((f) => referencesOf(f).filter(inDomain).map((target) => `${rel(f)} → ${rel(target)}`));
    expect(offending).toEqual([]);
  });

  it('leaves src/server to what assembles an instance: app.ts, main.ts, cli/, observability/ and server/ itself', () => {
    const assembling = (f: string) => ['app.ts', 'main.ts'].includes(rel(f)) || ['server', 'cli', 'observability'].some((layer) => inLayer(f, layer));
    const offending = files
      .filter((f) => !assembling(f))
      .flatMap((f) => importsOf(f).filter((i) => inLayer(i.target, 'server')).map((i) => `${rel(f)} → ${rel(i.target)}`));
    expect(offending).toEqual([]);
  });
});
