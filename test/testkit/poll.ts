/**
 * Waiting in tests, always against a deadline: `eventually` polls a condition, `withDeadline` bounds one awaited
 * event (a feed's next event over graphql-ws or SSE, a hash). Neither ever sleeps for a fixed time.
 */

/** Polls until `check` returns a truthy value or the deadline passes. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 25, what = 'condition' } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Settles as `work` does, or rejects once `ms` have passed, saying what was awaited (after calling `onTimeout`, to
 * release what the wait held). The timer never outlives the wait.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string, onTimeout?: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new Error(`no ${what} within ${ms} ms`));
    }, ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
