/** Bounded concurrency for use cases that touch many rows, so one request or job never floods storage. */

/** Runs `fn` over `items`, `atOnce` at a time; after a failure no other item starts, and the first failure rejects. */
export async function eachAtOnce<T>(items: readonly T[], atOnce: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const results = await Promise.allSettled(
    Array.from({ length: Math.min(atOnce, items.length) }, async () => {
      try {
        while (!failed && next < items.length) await fn(items[next++]!);
      } catch (err) {
        failed = true;
        throw err;
      }
    }),
  );
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}
