import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dir = new URL('../src/schema/', import.meta.url);

describe('the schema layer', () => {
  it('imports nothing from src/db but types: storage is reached through src/resolvers', () => {
    const offending: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      for (const m of source.matchAll(/^import\s+(type\s+)?[^;]*?from\s+'(\.\.\/db\/[^']+)'/gms)) {
        if (!m[1]) offending.push(`${file}: ${m[2]}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
