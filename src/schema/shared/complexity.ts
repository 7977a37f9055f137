/**
 * What an operation costs, for the cost limit (MAX_COST). Cost follows the
 * work the server does, not the number of fields: a scalar is read with its
 * row (0), an object may need a lookup (1), and a page costs its size times
 * what is selected on each item, so nested pages multiply.
 */
import { getNamedType, getNullableType, isInterfaceType, isLeafType, isListType, isObjectType, type GraphQLField, type GraphQLSchema } from 'graphql';
import { Limits } from '../../limits.js';

/** Assumed length of a list whose size no argument bounds. */
const UNBOUNDED_LIST = 10;

const isConnection = (field: GraphQLField<unknown, never>) => getNamedType(field.type).name.endsWith('Connection');

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
  if (isConnection(field)) return connectionComplexity(args);
  // A connection's edges are already counted by the connection's page size.
  if (named.name.endsWith('Edge')) return { field: 0, multiplier: 1 };
  if (isListType(type)) return { field: 1, multiplier: UNBOUNDED_LIST };
  return isLeafType(named) ? 0 : 1;
}

/**
 * Gives each field that costs fieldComplexity and is not a page its cost as a
 * number. The complexity plugin reads a field's arguments (graphql-js's
 * getArgumentValues) before it calls a cost function, for every field of
 * every operation, and only a page's cost depends on them: a refused login
 * spent more time there than in its own resolver.
 */
export function fixedComplexities(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.extensions.complexity !== fieldComplexity || isConnection(field)) continue;
      (field.extensions as { complexity?: unknown }).complexity = fieldComplexity({}, undefined, field);
    }
  }
  return schema;
}
