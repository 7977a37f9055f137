import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate } from '@graphql-codegen/cli';
import { printedSchema } from '../src/schema/print.js';
import codegenConfig from '../codegen.js';

describe('committed artifacts', () => {
  it('schema.graphql matches the code-first schema (run `npm run schema:print`)', () => {
    expect(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8')).toBe(printedSchema());
  });

  it('test/generated matches codegen output (run `npm run codegen`)', async () => {
    const outputs = (await generate({ ...codegenConfig, silent: true }, false)) as Array<{ filename: string; content: string }>;
    expect(outputs.length).toBeGreaterThan(0);
    for (const { filename, content } of outputs) {
      expect(readFileSync(new URL(`../${filename}`, import.meta.url), 'utf8'), filename).toBe(content);
    }
  });
});
