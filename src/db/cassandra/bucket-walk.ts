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

/** Up to `want` rows of one bucket from `after`: more reads only when dropped rows left the first one short. */
async function readBucket<R>(source: BucketedSource<R>, bucket: number, dir: Direction, after: string | null, want: number): Promise<R[]> {
  const out: R[] = [];
  let cursor = after;
  while (out.length < want) {
    const need = want - out.length;
    const read = await source.read(bucket, dir, cursor, need);
    out.push(...read.rows);
    // Fewer rows than asked: the bucket has no more in this direction.
    if (read.fetched < need || read.lastId === null) break;
    cursor = read.lastId;
  }
  return out;
}

export async function walkBuckets<R>(source: BucketedSource<R>, opts: WalkOptions): Promise<R[]> {
  const { dir, from, want } = opts;
  const out: R[] = [];

  const drain = async (bucket: number, after: string | null) => {
    out.push(...(await readBucket(source, bucket, dir, after, want - out.length)));
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

export interface BoundedWalkOptions extends Omit<WalkOptions, 'from'> {
  /** Continue after this row (exclusive), or with no id after the whole bucket. */
  from: { bucket: number; id: string | null } | null;
  /** Buckets read at most, the cursor's own included. */
  maxBuckets: number;
  /** Buckets read in parallel. */
  atOnce: number;
}

export interface BoundedWalk<R> {
  rows: R[];
  /**
   * Set when the bound stopped the walk short of `want` rows while more
   * buckets remain: the last bucket it read, which it read to the end.
   */
  stoppedAfter: number | null;
}

/**
 * A walk that reads at most `maxBuckets` buckets, for reads that may find
 * nothing in most of them (search): it lists them in one query (one more than
 * it may read, to learn whether the bound cut it short) and reads them in
 * batches of 1, 2, 4... up to `atOnce` in parallel. A page that finds little
 * costs a bounded number of queries and few round trips; one that fills from
 * its first bucket reads that bucket alone, so a common term does not read a
 * whole batch of buckets past the page's end.
 */
export async function walkBucketsBounded<R>(source: BucketedSource<R>, opts: BoundedWalkOptions): Promise<BoundedWalk<R>> {
  const { dir, from, want, atOnce } = opts;
  const out: R[] = [];
  let { lo, hi } = opts;
  let budget = opts.maxBuckets;
  let last: number | null = null;
  if (from) {
    if (from.id !== null) {
      out.push(...(await readBucket(source, from.bucket, dir, from.id, want)));
      budget -= 1;
    }
    last = from.bucket;
    if (dir === 'older') hi = Math.min(hi, from.bucket - 1);
    else lo = Math.max(lo, from.bucket + 1);
  }
  if (out.length >= want || lo > hi) return { rows: out, stoppedAfter: null };
  const listed = await source.buckets(lo, hi, dir, Math.max(budget, 0) + 1);
  const toRead = listed.slice(0, Math.max(budget, 0));
  for (let i = 0, width = 1; i < toRead.length && out.length < want; i += width, width = Math.min(width * 2, atOnce)) {
    const need = want - out.length;
    const batch = toRead.slice(i, i + width);
    // In walk order, whatever order they answer in.
    for (const rows of await Promise.all(batch.map((bucket) => readBucket(source, bucket, dir, null, need)))) out.push(...rows);
    last = batch.at(-1)!;
  }
  const cut = out.length < want && listed.length > toRead.length;
  return { rows: out, stoppedAfter: cut ? last : null };
}
