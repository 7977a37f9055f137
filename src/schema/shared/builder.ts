import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ComplexityPlugin from '@pothos/plugin-complexity';
import { Kind, valueFromASTUntyped } from 'graphql';
import type { Context } from '../../resolvers/context.js';
import type { BigDecimal } from '../../db/cassandra/client.js';
import { AppError, ErrorCode, badInput } from '../../errors.js';
import { Limits } from '../../limits.js';
import { decodeGlobalId, globalId, type NodeType } from '../../resolvers/shared/global-ids.js';
import { fieldComplexity } from './complexity.js';
import { parseDateTime } from './date-time.js';

export const builder = new SchemaBuilder<{
  Context: Context;
  // Non-null unless a field says otherwise: the schema tells clients what can be missing.
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    /** Money: a decimal carried as a string ("19.99"), never a float. Declared in money.ts. */
    Decimal: { Input: string; Output: BigDecimal | string };
    ID: { Input: string; Output: string };
    /** Any JSON value; the use cases say which they take (custom data: an object, src/validation.ts validMetadata). */
    JSON: { Input: unknown; Output: unknown };
    /** A multipart request's file (Yoga's File), declared in rooms/attachments.ts. */
    File: { Input: unknown; Output: never };
  };
}>({
  // Authentication is the use cases' own first step (requireViewer in src/resolvers/), declared once there.
  plugins: [RelayPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Relay's object identification: src/resolvers/shared/global-ids.ts says what an id is.
    encodeGlobalID: (typename, key) => globalId(typename as NodeType, String(key)),
    decodeGlobalID: (id) => decodeGlobalId('id', id),
    nodeTypeOptions: { description: 'An object a client can read again by its id alone, with node(id:) or nodes(ids:)' },
    idFieldOptions: { description: 'Globally unique and opaque: node(id:) reads the object again' },
    nodeQueryOptions: {
      description:
        'Any object by its global id, with the same authorization as its own query: null where the object does not exist ' +
        'or the viewer may not see it (the two look the same). An id that is no object id at all is BAD_USER_INPUT (field id).',
    },
    nodesQueryOptions: {
      description: `Objects by their global ids, in the same order, each null as node(id:) would be; at most ${Limits.page.max} ids (BAD_USER_INPUT, field ids).`,
      complexity: (args: { ids?: unknown[] }) => ({ field: 1, multiplier: Math.max(1, Array.isArray(args.ids) ? args.ids.length : 1) }),
      resolve: (_root, args, _ctx, _info, resolveNodes) => {
        if (args.ids.length > Limits.page.max) throw badInput('ids', `ids holds at most ${Limits.page.max} ids`);
        return resolveNodes(args.ids);
      },
    },
  },
  complexity: {
    limit: (ctx) => ({ complexity: ctx.services.config.limits.maxCost }),
    fieldComplexity,
    complexityError: (kind, result) =>
      new AppError(
        ErrorCode.QUERY_TOO_COMPLEX,
        `Operation ${kind.toLowerCase()} ${result[kind === 'Complexity' ? 'complexity' : kind === 'Depth' ? 'depth' : 'breadth']} exceeds the limit of ${result[kind === 'Complexity' ? 'maxComplexity' : kind === 'Depth' ? 'maxDepth' : 'maxBreadth']}`,
        { limit: kind.toLowerCase() },
      ),
  },
});

builder.scalarType('DateTime', {
  description: 'An instant in time: an ISO 8601 date and time with Z or an offset, e.g. "2026-11-22T10:00:00Z"',
  serialize: (value) => new Date(value).toISOString(),
  parseValue: (value) => parseDateTime(value),
  parseLiteral: (ast) => parseDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('JSON', {
  description: 'A JSON value, as it is (custom data on messages and rooms: a JSON object of at most 4 KB)',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables ?? undefined),
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
