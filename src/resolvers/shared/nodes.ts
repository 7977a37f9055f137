/**
 * What node(id:) and nodes(ids:) answer for each id: the object, with the same
 * authorization as its type's own query, and null where that query would
 * refuse (FORBIDDEN) or find nothing (NOT_FOUND, or a key no object can have):
 * an object the viewer may not see looks exactly like one that does not exist.
 */
import { AppError, ErrorCode } from '../../errors.js';

const HIDDEN: ReadonlySet<string> = new Set([ErrorCode.FORBIDDEN, ErrorCode.NOT_FOUND, ErrorCode.BAD_USER_INPUT]);

export async function visibleOrNull<T>(load: () => Promise<T | null>): Promise<T | null> {
  try {
    return await load();
  } catch (err) {
    if (err instanceof AppError && HIDDEN.has(err.code)) return null;
    throw err;
  }
}

/** Each key's object, or null where visibleOrNull says so; the loads run side by side (DataLoaders batch them). */
export function eachVisibleOrNull<K, T>(keys: readonly K[], load: (key: K) => Promise<T | null>): Array<Promise<T | null>> {
  return keys.map((key) => visibleOrNull(() => load(key)));
}
