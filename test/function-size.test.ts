/**
 * How large a function in src/ may grow: at most 100 lines, counted from its signature to its closing brace, so
 * that each one can be read on a screen or two. A longer one is split by job (a factory's closures become a class's
 * methods or functions of their own) rather than allowed here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const MAX_LINES = 100;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Every function of the file with a body (declarations, methods, arrows, accessors) longer than `max` lines. */
export function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = (node as { name?: ts.Node }).name ?? (node.parent as { name?: ts.Node } | undefined)?.name;
      const name = named?.getText(source) ?? '(anonymous)';
      if (last - first + 1 > max) found.push(`${relative(SRC, file)}:${first + 1} ${name}, ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function size', () => {
  it(`keeps every function in src/ within ${MAX_LINES} lines`, () => {
    const long = sourceFiles(SRC).flatMap((file) => longFunctions(file, readFileSync(file, 'utf8'), MAX_LINES));
    expect(long).toEqual([]);
  });

  it('counts a function from its signature to its closing brace, nested ones too', () => {
    const body = (lines: number) => Array.from({ length: lines }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = `export function outer() {\n${body(50)}\n  const inner = () => {\n${body(99)}\n  };\n}\n`;
    expect(longFunctions(join(SRC, 'x.ts'), text, MAX_LINES)).toEqual(['x.ts:1 outer, 153 lines', 'x.ts:52 inner, 101 lines']);
  });
});
