/**
 * Paging through time-bucketed partitions: continue inside the cursor's
 * bucket, then list the next non-empty buckets from a bucket table (so empty
 * days or months cost nothing) and read each until the page is full. Shared
 * by a room's history (day buckets) and an author's messages (month buckets).
 */
export type Direction = 'older' | 'newer';

export interface BucketRead<R> {
  rows: R[];
  /** How many rows Cassandra returned, before dropping unusable ones. */
  fetched: number;
  /** The clustering key of the last row returned, to continue in this bucket. */
  lastId: string | null;
}

export interface BucketedSource<R> {
  /** Up to `limit` bucket numbers in [lo, hi]: newest first when walking older, oldest first when walking newer. */
  buckets(lo: number, hi: number, dir: Direction, limit: number): Promise<number[]>;
  /** Up to `limit` rows of one bucket in walk order, strictly beyond `after` when given. */
  read(bucket: number, dir: Direction, after: string | null, limit: number): Promise<BucketRead<R>>;
}

export interface WalkOptions {
  dir: Direction;
  /** Continue after this row (exclusive). */
  from: { bucket: number; id: string } | null;
  /** Bucket range to consider, inclusive. */
  lo: number;
  hi: number;
  /** Rows wanted (ask for one more than the page to learn whether another page exists). */
  want: number;
}

/** Buckets listed per query: most pages need one or two; sparse rooms get several per round trip. */
const BUCKETS_PER_LISTING = 8;

export async function walkBuckets<R>(source: BucketedSource<R>, opts: WalkOptions): Promise<R[]> {
  const { dir, from, want } = opts;
  const out: R[] = [];

  const drain = async (bucket: number, after: string | null) => {
    let cursor = after;
    while (out.length < want) {
      const need = want - out.length;
      const read = await source.read(bucket, dir, cursor, need);
      out.push(...read.rows);
      // Fewer rows than asked: the bucket has no more in this direction.
      if (read.fetched < need || read.lastId === null) return;
      cursor = read.lastId;
    }
  };

  let { lo, hi } = opts;
  if (from) {
    await drain(from.bucket, from.id);
    if (dir === 'older') hi = Math.min(hi, from.bucket - 1);
    else lo = Math.max(lo, from.bucket + 1);
  }
  while (out.length < want && lo <= hi) {
    const buckets = await source.buckets(lo, hi, dir, BUCKETS_PER_LISTING);
    for (const bucket of buckets) {
      await drain(bucket, null);
      if (out.length >= want) break;
    }
    if (buckets.length < BUCKETS_PER_LISTING) break;
    const last = buckets.at(-1)!;
    if (dir === 'older') hi = last - 1;
    else lo = last + 1;
  }
  return out;
}
