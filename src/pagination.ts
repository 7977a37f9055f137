/**
 * Cursor encoding and page shapes, in one place for every connection.
 *
 * A cursor is opaque to clients: base64url of a small JSON object whose shape
 * each access path chooses (a clustering key, a bucket, a driver paging state).
 * A cursor that does not decode gives BAD_USER_INPUT naming the argument.
 */
import { isDayBucket, isMonthBucket } from './buckets.js';
import { isTimeUuid } from './timeuuids.js';
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

/**
 * A position in a time-bucketed history (a room's day buckets, an author's or
 * a conversation's month buckets): the bucket and the timeuuid of the last
 * message seen.
 */
export interface HistoryPosition {
  bucket: number;
  id: string;
  /**
   * Only on the cursor of a room message that had not settled when it was
   * served (see catchUpSettleMs): the settled horizon then, in ms. Catching up
   * from such a cursor resumes from that horizon.
   */
  settled?: number;
  /** The history the cursor belongs to, when one resolver pages several (a conversation's key). */
  scope?: string;
}

export function encodeHistoryCursor(pos: HistoryPosition): string {
  return encodeCursor({
    b: pos.bucket,
    t: pos.id,
    ...(pos.settled === undefined ? {} : { s: pos.settled }),
    ...(pos.scope === undefined ? {} : { c: pos.scope }),
  });
}

/** Decodes a history cursor; its bucket must be a real day or month (as `buckets` says) and its id a timeuuid. */
export function decodeHistoryCursor(field: string, cursor: string, buckets: 'day' | 'month'): HistoryPosition {
  const isBucket = buckets === 'day' ? isDayBucket : isMonthBucket;
  const pos = decodeCursor(
    field,
    cursor,
    (p): p is { b: number; t: string; s?: number; c?: string } =>
      isBucket(p.b) &&
      isTimeUuid(p.t) &&
      (p.s === undefined || (Number.isSafeInteger(p.s) && (p.s as number) >= 0)) &&
      (p.c === undefined || typeof p.c === 'string'),
  );
  return {
    bucket: pos.b,
    // Lower case: the form ids are made and served in.
    id: pos.t.toLowerCase(),
    ...(pos.s === undefined ? {} : { settled: pos.s }),
    ...(pos.c === undefined ? {} : { scope: pos.c }),
  };
}

/**
 * A place in a newest-first search of a room's day buckets: below message
 * `id` of day `bucket`, or, with no id, below the whole day (where a page
 * that read its bound of days stopped, whether it found anything or not).
 */
export interface SearchPosition {
  bucket: number;
  id: string | null;
}

export function encodeSearchCursor(pos: SearchPosition): string {
  return encodeCursor({ sb: pos.bucket, ...(pos.id === null ? {} : { t: pos.id }) });
}

export function decodeSearchCursor(field: string, cursor: string): SearchPosition {
  const pos = decodeCursor(field, cursor, (p): p is { sb: number; t?: string } => isDayBucket(p.sb) && (p.t === undefined || isTimeUuid(p.t)));
  return { bucket: pos.sb, id: pos.t?.toLowerCase() ?? null };
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

/**
 * An edge whose cursor is encoded only when a client selects it: most pages
 * ask for nodes alone, and encoding 50 cursors nobody reads is wasted work.
 */
class LazyEdge<T> implements Edge<T> {
  #cursor: string | undefined;
  constructor(
    readonly node: T,
    private readonly cursorOf: (item: T) => string,
  ) {}
  get cursor(): string {
    return (this.#cursor ??= this.cursorOf(this.node));
  }
}

/**
 * endCursor is the last edge's cursor, unless `opts.endCursor` says where the
 * next page starts instead (a page that stopped past its last edge, or
 * before finding any).
 */
export function connection<T>(
  items: T[],
  cursorOf: (item: T) => string,
  opts: { hasNextPage: boolean; hasPreviousPage?: boolean; endCursor?: string },
): Connection<T> {
  const edges = items.map((node) => new LazyEdge(node, cursorOf));
  return {
    edges,
    pageInfo: {
      hasNextPage: opts.hasNextPage,
      hasPreviousPage: opts.hasPreviousPage ?? false,
      get startCursor() {
        return edges[0]?.cursor ?? null;
      },
      get endCursor() {
        return opts.endCursor ?? edges.at(-1)?.cursor ?? null;
      },
    },
  };
}
