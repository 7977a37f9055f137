/** Item and purchase keys are timeuuids; anything else is refused before it reaches Cassandra. */
import { badInput } from '../../errors.js';
import { keyOf } from '../shared/global-ids.js';
import { isTimeUuid } from '../../timeuuids.js';
import { decodeCursor, encodeCursor } from '../../pagination.js';

/** The key of an item's or a purchase's id, global or the bare timeuuid served before ids were global. */
export function parseId(field: string, typename: 'Item' | 'Purchase', raw: string): string {
  // Lower case: the canonical form, so ids compare (and key loaders) as strings.
  const id = keyOf(field, typename, raw.trim()).toLowerCase();
  if (!isTimeUuid(id)) throw badInput(field, `${field} is not a valid id`);
  return id;
}

/** Cursors of id-ordered pages (listings, histories): the last id seen. */
export const idCursor = (id: string) => encodeCursor({ id });

export function afterId(field: string, after: string | null | undefined): string | undefined {
  if (after == null) return undefined;
  return decodeCursor(field, after, (p): p is { id: string } => isTimeUuid(p.id)).id;
}
