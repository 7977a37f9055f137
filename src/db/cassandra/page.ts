/**
 * The one page shape storage answers with, and the one place the extra row is
 * read: a store asks Cassandra for one row more than the page, and that row
 * only says whether more exist.
 */
export interface Page<T> {
  rows: T[];
  /** More rows exist beyond the page, in the direction it was read. */
  more: boolean;
}

/** How many rows to read for a page of `size`. */
export const lookAhead = (size: number) => size + 1;

/** A page of `size` from the `lookAhead(size)` rows read. */
export function pageOf<T>(rows: T[], size: number): Page<T> {
  return { rows: rows.slice(0, size), more: rows.length > size };
}
