/**
 * The buckets this instance has already recorded in a bucket table (the
 * seed's buffered map). A post writes the bucket row only the first time this
 * instance sees the bucket; the insert is idempotent, so two instances both
 * writing it is harmless. Bounded: the oldest entries are forgotten first, and
 * forgetting only costs one more idempotent insert.
 */
export class RecentBuckets {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity = 50_000) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    if (this.keys.has(key)) return;
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      // Sets iterate in insertion order: the first key is the oldest.
      const oldest = this.keys.values().next().value as string;
      this.keys.delete(oldest);
    }
  }
}
