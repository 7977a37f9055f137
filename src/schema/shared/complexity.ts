/**
 * What an operation costs, for the cost limit (MAX_COST). Cost follows the
 * work the server does, not the number of fields: a scalar is read with its
 * row (0), an object may need a lookup (1), and a page costs its size times
 * what is selected on each item, so nested pages multiply.
 */
import { getNamedType, getNullableType, isLeafType, isListType, type GraphQLField } from 'graphql';
import { Limits } from '../../limits.js';

/** Assumed length of a list whose size no argument bounds. */
const UNBOUNDED_LIST = 10;

/**
 * A page: its size times what is selected on each item, plus `field` for
 * reading it (more than 1 where one page costs many queries, e.g. search).
 */
export function connectionComplexity(args: Record<string, unknown>, field = 1) {
  const size = typeof args.first === 'number' ? args.first : typeof args.last === 'number' ? args.last : Limits.page.default;
  return { field, multiplier: Math.max(1, size) };
}

export function fieldComplexity<C>(args: Record<string, unknown>, _ctx: C, field: GraphQLField<unknown, C>) {
  const type = getNullableType(field.type);
  const named = getNamedType(field.type);
  if (named.name.endsWith('Connection')) return connectionComplexity(args);
  // A connection's edges are already counted by the connection's page size.
  if (named.name.endsWith('Edge')) return { field: 0, multiplier: 1 };
  if (isListType(type)) return { field: 1, multiplier: UNBOUNDED_LIST };
  return isLeafType(named) ? 0 : 1;
}
