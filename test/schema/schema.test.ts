// The committed schema.graphql and generated files match the code, and docs/api.md documents every code a client can be sent.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate } from '@graphql-codegen/cli';
import { printedSchema } from '../../src/schema/print.js';
import codegenConfig from '../../codegen.js';
import { ErrorCode, LimitName, NotEditableReason, RateLimitReason } from '../../src/errors.js';
import { TokenRefusal } from '../../src/auth/authenticate.js';

describe('committed artifacts', () => {
  it('schema.graphql matches the code-first schema (run `npm run schema:print`)', () => {
    expect(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8')).toBe(printedSchema());
  });

  it('test/generated matches codegen output (run `npm run codegen`)', async () => {
    const outputs = (await generate({ ...codegenConfig, silent: true }, false)) as Array<{ filename: string; content: string }>;
    expect(outputs.length).toBeGreaterThan(0);
    for (const { filename, content } of outputs) {
      expect(readFileSync(new URL(`../../${filename}`, import.meta.url), 'utf8'), filename).toBe(content);
    }
  });
});

describe('the API guide (docs/api.md)', () => {
  it('documents every error code, reason and limit a client can be sent', () => {
    const guide = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const documented = new Set([...guide.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));
    const sent = [ErrorCode, RateLimitReason, LimitName, NotEditableReason, TokenRefusal].flatMap((values) => Object.values(values));
    expect(sent.filter((value) => !documented.has(value))).toEqual([]);
    expect([...documented].filter((value) => !sent.includes(value as never))).toEqual([]);
  });
});
