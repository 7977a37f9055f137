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

  it('keeps no module-level mutable state in src/resolvers: per-instance state lives in Services, per-request in Context', () => {
    const MUTABLE = /^(?:export\s+)?(?:let|var)\s|^(?:export\s+)?const\s+\w+(?:\s*:[^=]+)?\s*=\s*(?:new\s+(?:Map|Set|WeakMap|WeakSet|Array)\b|\[|\{)/;
    const offending = files
      .filter((f) => inLayer(f, 'resolvers'))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .map((line, i) => [line, i + 1] as const)
          .filter(([line]) => MUTABLE.test(line))
          .map(([line, n]) => `${rel(f)}:${n}: ${line.trim()}`),
      );
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
