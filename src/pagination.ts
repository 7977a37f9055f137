/**
 * Cursor encoding and page shapes, in one place for every connection.
 *
 * A cursor is opaque to clients: base64url of a small JSON object whose shape
 * each access path chooses (a clustering key, a bucket, a driver paging state).
 * A cursor that does not decode gives BAD_USER_INPUT naming the argument.
 */
import { badInput } from './errors.js';

const VERSION = 1;

export function encodeCursor(position: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify({ v: VERSION, ...position })).toString('base64url');
}

export function decodeCursor<T extends Record<string, unknown>>(
  field: string,
  cursor: string,
  isValid: (position: Record<string, unknown>) => position is T,
): T {
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badInput(field, `${field} is not a valid cursor`);
  }
  if (!position || typeof position !== 'object' || (position as { v?: unknown }).v !== VERSION || !isValid(position as Record<string, unknown>)) {
    throw badInput(field, `${field} is not a valid cursor`);
  }
  return position as T;
}

export interface Edge<T> {
  cursor: string;
  node: T;
}

/** The shape Pothos' relay plugin resolves a connection from. */
export interface Connection<T> {
  edges: Edge<T>[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

export function connection<T>(
  items: T[],
  cursorOf: (item: T) => string,
  opts: { hasNextPage: boolean; hasPreviousPage?: boolean; endCursor?: string | null },
): Connection<T> {
  const edges = items.map((node) => ({ cursor: cursorOf(node), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: opts.hasNextPage,
      hasPreviousPage: opts.hasPreviousPage ?? false,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: opts.endCursor !== undefined ? opts.endCursor : (edges.at(-1)?.cursor ?? null),
    },
  };
}
