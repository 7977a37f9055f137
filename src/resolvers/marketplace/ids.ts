/** Item and purchase ids are timeuuids; anything else is refused before it reaches Cassandra. */
import { badInput } from '../../errors.js';
import { decodeCursor, encodeCursor } from '../../pagination.js';

const TIMEUUID = /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export const isTimeUuid = (value: unknown): value is string => typeof value === 'string' && TIMEUUID.test(value);

export function parseId(field: string, raw: string): string {
  const id = raw.trim().toLowerCase();
  if (!isTimeUuid(id)) throw badInput(field, `${field} is not a valid id`);
  return id;
}

/** Cursors of id-ordered pages (listings, histories): the last id seen. */
export const idCursor = (id: string) => encodeCursor({ id });

export function afterId(field: string, after: string | null | undefined): string | undefined {
  if (after == null) return undefined;
  return decodeCursor(field, after, (p): p is { id: string } => isTimeUuid(p.id)).id;
}
