/**
 * A mutation run under an idempotency key, as the use cases see it: the ids
 * of the records it creates come from the key's seed (written once, by the
 * key's first claim), so a run again after an unknown outcome finds the
 * record the first run may have written instead of writing a second one.
 */
import { createHash } from 'node:crypto';
import { TimeUuid } from '../../db/cassandra/client.js';

export interface KeyedRun {
  /** Whose key it is (a login, or ANONYMOUS_VIEWER). */
  readonly viewer: string;
  readonly key: string;
  /** This attempt's own timeuuid (the claim it holds). */
  readonly attempt: TimeUuid;
  /** The key's seed: the first attempt's timeuuid, the same in every attempt. */
  readonly seed: TimeUuid;
  /** Records created so far in this run: the n-th takes the n-th id derived from the seed. */
  records: number;
}

/** Where a context carries its keyed run: a symbol, so nothing else in the context can name it. */
const KEYED_RUN = Symbol('keyed run');

type Carrier = { [KEYED_RUN]?: KeyedRun };

export function attachKeyedRun(ctx: object, run: KeyedRun): void {
  (ctx as Carrier)[KEYED_RUN] = run;
}

export function keyedRunOf(ctx: object): KeyedRun | undefined {
  return (ctx as Carrier)[KEYED_RUN];
}

/**
 * The id of the next record a mutation creates: outside a keyed run, `fresh()`;
 * in one, the seed for its first record and, for each later one (a mutation
 * operation of several fields runs them in order, the same order every time),
 * the seed's time with other node bits, so each run gives each record the same id.
 */
export function recordIdFor(ctx: object, fresh: () => TimeUuid): TimeUuid {
  const run = keyedRunOf(ctx);
  if (!run) return fresh();
  const n = run.records++;
  if (n === 0) return run.seed;
  const { date, ticks } = run.seed.getDatePrecision();
  const node = createHash('sha256').update(`${run.seed.toString()}/${n}`).digest().subarray(0, 6);
  // The driver's typings lack getClockId (the seed's clock sequence, kept so only the node bits differ).
  const clock = (run.seed as unknown as { getClockId(): Buffer }).getClockId();
  return TimeUuid.fromDate(date, ticks, node, clock);
}

/**
 * A client id (a clientMessageId, a clientPurchaseId) for the next record a
 * keyed run creates, for use cases that already dedupe by one: null outside a
 * keyed run. 'key:' and 40 hex digits, within Limits.clientId.
 */
export function clientIdFor(ctx: object): string | null {
  const run = keyedRunOf(ctx);
  if (!run) return null;
  const n = run.records++;
  return `key:${createHash('sha256').update(`${run.key}\u0000${n}`).digest('hex').slice(0, 40)}`;
}

/**
 * The creation time of a record named by its caller (a room): `now`, or in a
 * keyed run the seed's time, so a run again recognizes the record the first
 * run made by its creator and creation time.
 */
export function recordTimeFor(ctx: object, now: Date): Date {
  return keyedRunOf(ctx)?.seed.getDate() ?? now;
}
