/**
 * src/server/http/regular-answer.ts writes what graphql-yoga's processRegularResult
 * writes, without building each error again: over generated results (errors
 * with and without locations, paths, internal extensions, original errors of
 * every kind; data or none; result extensions), both must give the same
 * status, headers and body, byte for byte.
 */
import fc from 'fast-check';
import { GraphQLError, Source, type ExecutionResult } from 'graphql';
import { processRegularResult } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { regularAnswer } from '../../src/server/http/regular-answer.js';

const SOURCE = new Source('query Q($a: Int) {\n  me { login }\n  room(roomName: "x") {\n    name\n  }\n}\n');

class Captured {
  constructor(
    readonly body: string,
    readonly init: { status: number; headers: Record<string, string> },
  ) {}
}
const CAPTURE = { Response: Captured } as unknown as Parameters<typeof processRegularResult>[1];

function yogaAnswer(result: ExecutionResult, mediaType: string) {
  const { body, init } = processRegularResult(result, CAPTURE, mediaType) as unknown as Captured;
  return { status: init.status, headers: init.headers, body };
}

const http = fc.record(
  {
    status: fc.constantFrom(400, 401, 403, 404, 413, 429, 500, 503),
    headers: fc.dictionary(fc.constantFrom('Allow', 'Retry-After', 'X-Thing'), fc.constantFrom('GET, POST', '1', 'yes'), { maxKeys: 2 }),
    spec: fc.boolean(),
  },
  { requiredKeys: [] },
);
const extensions = fc.record(
  {
    code: fc.constantFrom('BAD_USER_INPUT', 'RATE_LIMITED', 'INTERNAL_SERVER_ERROR', 'GRAPHQL_VALIDATION_FAILED'),
    field: fc.constantFrom('login', 'input.name'),
    retryAfter: fc.integer({ min: 1, max: 60 }),
    http,
    unexpected: fc.boolean(),
  },
  { requiredKeys: [] },
);
const path = fc.option(fc.array(fc.oneof(fc.constantFrom('me', 'room', 'login'), fc.nat(5)), { minLength: 1, maxLength: 3 }), { nil: undefined });
const positions = fc.option(fc.array(fc.nat(SOURCE.body.length - 1), { minLength: 1, maxLength: 2 }), { nil: undefined });

const plainError = fc.record({ message: fc.string({ maxLength: 20 }), extensions: fc.option(extensions, { nil: undefined }) }).map(({ message, extensions: ext }) =>
  Object.assign(new Error(message), ext === undefined ? {} : { extensions: ext }),
);

const { graphqlError } = fc.letrec<{ graphqlError: GraphQLError }>((tie) => ({
  graphqlError: fc
    .record({
      message: fc.string({ maxLength: 20 }),
      path,
      positions,
      extensions: fc.option(extensions, { nil: undefined }),
      original: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(undefined), plainError, tie('graphqlError')),
    })
    .map(
      ({ message, path: p, positions: at, extensions: ext, original }) =>
        new GraphQLError(message, { path: p, source: at ? SOURCE : undefined, positions: at, extensions: ext, originalError: original as Error | undefined }),
    ),
}));

const result = fc.record(
  {
    data: fc.oneof(fc.constant(null), fc.constant({ me: null }), fc.constant({ me: { login: 'alice' } })),
    errors: fc.array(fc.oneof({ weight: 5, arbitrary: graphqlError }, { weight: 1, arbitrary: plainError }), { maxLength: 3 }),
    extensions: fc.record({ http, other: fc.constant(1) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<ExecutionResult>;

describe('regularAnswer', () => {
  it('answers every result as Yoga\'s regular result processor does', () => {
    fc.assert(
      fc.property(result, fc.constantFrom('application/json', 'application/graphql-response+json'), (r, mediaType) => {
        expect(regularAnswer(r, mediaType)).toEqual(yogaAnswer(r, mediaType));
      }),
      { numRuns: 2000 },
    );
  });
});
