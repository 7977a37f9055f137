/**
 * The rules of idempotency keys: what a valid key is, whose it is, and what a
 * request carrying one gets: the run (the key claimed, or taken over from an
 * attempt that ended without a final answer), the first answer again, or a
 * refusal (the key used for other arguments, or still running).
 */
import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { AppError, ErrorCode } from '../../errors.js';
import { Limits } from '../../limits.js';
import { newTimeUuid } from '../../timeuuids.js';
import type { Clock } from '../../clock.js';
import type { IdempotencyKeyStore, IdempotencyRecord } from '../../db/idempotency/idempotency-keys.js';
import type { KeyedRun } from './run.js';

/** Whose key an anonymous caller's is (register, login): not a login (logins are lowercase letters, digits, '_'). */
export const ANONYMOUS_VIEWER = '*';

/** Where a key may be given: the HTTP header, or the GraphQL request's extensions (any transport). */
export const KEY_HEADER = 'Idempotency-Key';
export const KEY_EXTENSION = 'idempotencyKey';

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

const keyError = (field: string, message: string) =>
  new AppError(ErrorCode.BAD_USER_INPUT, message, { field, http: { status: 400 } });

/**
 * The key a request carries, or undefined for none: from the header or from
 * extensions.idempotencyKey (the same key in both is fine; two different ones are refused).
 */
export function requestedKey(header: string | null | undefined, extension: unknown): string | undefined {
  if (extension !== undefined && extension !== null && typeof extension !== 'string') {
    throw keyError(`extensions.${KEY_EXTENSION}`, `extensions.${KEY_EXTENSION} must be a string`);
  }
  const fromHeader = header ?? undefined;
  const fromExtension = extension ?? undefined;
  if (fromHeader !== undefined && fromExtension !== undefined && fromHeader !== fromExtension) {
    throw keyError(KEY_HEADER, `The ${KEY_HEADER} header and extensions.${KEY_EXTENSION} differ: send one key`);
  }
  const key = fromHeader ?? fromExtension;
  if (key === undefined) return undefined;
  const field = fromHeader !== undefined ? KEY_HEADER : `extensions.${KEY_EXTENSION}`;
  const { min, max } = Limits.idempotency.key;
  if (key.length < min || key.length > max) throw keyError(field, `${field} must be ${min}–${max} characters`);
  if (!PRINTABLE_ASCII.test(key)) throw keyError(field, `${field} must be printable ASCII without spaces (a UUID, say)`);
  return key;
}

/** What a request sent: its operation (as printed, so layout does not count) and its variables, hashed. */
export function fingerprintOf(operationText: string, operationName: string | null | undefined, variables: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([operationName ?? null, operationText, canonical(variables ?? {})]))
    .digest('base64url');
}

/** JSON values with object keys in order, so the same variables hash the same whatever order they came in. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = canonical((value as Record<string, unknown>)[key]);
  return sorted;
}

export const keyReused = () =>
  new AppError(
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    `This ${KEY_HEADER} was used for another operation or other variables: use a new key for a new request`,
    { field: KEY_HEADER, http: { status: 422 } },
  );

export const keyInUse = () =>
  new AppError(ErrorCode.IDEMPOTENCY_KEY_IN_USE, `A request with this ${KEY_HEADER} is still running: retry with the same key to get its answer`, {
    field: KEY_HEADER,
    retryAfter: 1,
    http: { status: 409 },
  });

/**
 * The largest answer kept under a key, as UTF-8 JSON: a mutation's answer is
 * an object or two (a purchase, a message, a room), and a key's row is read on
 * every retry, so a large one (a mutation that also selects a page of
 * messages) is not copied into it. Above this, the row keeps a marker of the
 * answer's size, and a retry is told so (keptAnswerTooLarge).
 */
export const MAX_KEPT_ANSWER_BYTES = 64 * 1024;

export const keptAnswerTooLarge = (bytes: number) =>
  new AppError(
    ErrorCode.IDEMPOTENCY_RESPONSE_TOO_LARGE,
    `The request with this ${KEY_HEADER} ran, but its answer (${bytes} bytes) was over ${MAX_KEPT_ANSWER_BYTES} bytes and was not kept: query what it changed`,
    { field: KEY_HEADER, maxBytes: MAX_KEPT_ANSWER_BYTES, http: { status: 422 } },
  );

/**
 * Mutations that end the caller's own session: once one applied, its token is
 * refused before any key is read, so its retry's kept answer is looked up by
 * the token's login (IdempotencyKeys.keptAnswer) instead.
 */
export const SESSION_ENDING_MUTATIONS: ReadonlySet<string> = new Set(['logout', 'logoutEverywhere']);

export type Begun = { run: KeyedRun } | { replay: string };

export class IdempotencyKeys {
  constructor(
    private readonly store: IdempotencyKeyStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Claims `key` for a run of the operation `fingerprint` names, or answers
   * the stored answer of its first run; refuses a key used for another
   * operation, or one still running after Limits.idempotency.waitMs.
   */
  async begin(viewer: string, key: string, fingerprint: string): Promise<Begun> {
    const { retentionSeconds, waitMs, pollMs } = Limits.idempotency;
    const deadline = Date.now() + waitMs;
    let record: IdempotencyRecord | undefined;
    for (;;) {
      if (!record) {
        const now = this.clock.now();
        const attempt = newTimeUuid(now, 'microsecond');
        const claimed = await this.store.claim(viewer, key, fingerprint, attempt, now, retentionSeconds);
        if (claimed.claimed) return { run: { viewer, key, attempt, seed: attempt, records: 0 } };
        record = claimed.record;
      }
      const begun = record && (await this.fromRecord(viewer, key, fingerprint, record));
      if (begun) return begun;
      if (Date.now() >= deadline) throw keyInUse();
      await delay(pollMs);
      record = await this.store.read(viewer, key);
    }
  }

  /** The answer kept under the key for the operation `fingerprint` names, if there is one (a plain read). */
  async keptAnswer(viewer: string, key: string, fingerprint: string): Promise<string | undefined> {
    const record = await this.store.read(viewer, key);
    return record?.fingerprint === fingerprint && record.response !== null ? record.response : undefined;
  }

  /** What a key that has a row gives: its answer, a takeover, a refusal, or undefined to look again shortly. */
  private async fromRecord(viewer: string, key: string, fingerprint: string, record: IdempotencyRecord): Promise<Begun | undefined> {
    if (record.fingerprint !== fingerprint) throw keyReused();
    if (record.response !== null) return { replay: record.response };
    const now = this.clock.now();
    if (record.attempt !== null && !this.leaseOver(record, now)) return undefined;
    const attempt = newTimeUuid(now, 'microsecond');
    const took = await this.store.takeOver(viewer, key, record.attempt, attempt, now, Limits.idempotency.retentionSeconds);
    return took ? { run: { viewer, key, attempt, seed: record.seed, records: 0 } } : undefined;
  }

  private leaseOver(record: IdempotencyRecord, now: Date): boolean {
    const started = record.attemptStartedAt?.getTime() ?? 0;
    return now.getTime() - started > Limits.idempotency.leaseSeconds * 1000;
  }

  /**
   * Ends a run: a final answer is kept for the key's retention (a retry gets
   * it again); any other (the outcome unknown, or nothing done and worth
   * retrying) releases the key, so the same key runs again.
   */
  async finish(run: KeyedRun, answer: { final: true; response: string } | { final: false }): Promise<void> {
    if (answer.final) await this.store.complete(run.viewer, run.key, run.attempt, answer.response, Limits.idempotency.retentionSeconds);
    else await this.store.release(run.viewer, run.key, run.attempt);
  }
}
