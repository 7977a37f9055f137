import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ComplexityPlugin from '@pothos/plugin-complexity';
import { Kind } from 'graphql';
import type { Context } from '../../resolvers/context.js';
import type { BigDecimal } from '../../db/cassandra/client.js';
import { AppError, ErrorCode } from '../../errors.js';
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
  };
}>({
  // Authentication is the use cases' own first step (requireViewer in src/resolvers/), declared once there.
  plugins: [RelayPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
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

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
