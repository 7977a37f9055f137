/**
 * An instance whose publish failed tells every instance, once Redis takes the
 * notice. A failed publish may have reached nobody, and the subscribers that
 * missed its event are on instances whose own connection to Redis may never
 * have dropped: nothing else would tell them to catch up. Each instance hears
 * the notice as a delivery interruption from the time the first failed
 * publish was made (PubSub.watchDelivery), so every live feed there tells its
 * subscriber to catch up from storage, where the event's write already is.
 *
 * One notice covers every failure before it was sent, whatever the channel:
 * failures are outages, rare, and telling every feed is cheaper to get right
 * than tracking channels; an instance of a version before notices does not
 * listen to their channel and is not disturbed by them.
 */
import type { Logger } from 'pino';

/** The pub/sub channel of notices, under the deployment's prefix. */
export const MISSED_CHANNEL = 'pubsub.missed';

/**
 * What a notice says: publishes made from `since` to `until` (ms since the epoch) may not have been
 * delivered. `until` lets an instance whose own delivery was down all that time skip it (DeliveryState.eventsMissed).
 */
export interface MissedNotice {
  since: number;
  until: number;
}

/** How soon a notice that could not be sent is tried again, while the publisher connection is up. */
const RETRY_MS = 1000;

/** The publisher connection (or the cluster), as far as notices need it: sending waits for it to be ready. */
export interface NoticeConnection {
  readonly status: string;
  once(event: 'ready', listener: () => void): unknown;
}

export class MissedPublishes {
  /** The earliest and the latest failed publish not yet in a notice, or undefined. */
  private since: number | undefined;
  private until = 0;
  /**
   * The notice made and not yet known to have reached Redis, as it travels (stamped once): a notice that
   * timed out may still be delivered, so it is sent again as it was, and instances drop the repeat.
   */
  private unsent: { since: number; stamped: unknown } | undefined;
  private sending: Promise<void> | undefined;
  private waiting = false;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    /** The notice as it travels: stamped by the publishing instance (event-stamps.ts). */
    private readonly stamp: (notice: MissedNotice) => unknown,
    private readonly send: (stamped: unknown) => Promise<unknown>,
    private readonly connection: NoticeConnection,
    private readonly logger: Logger,
  ) {}

  /** A publish made at `madeAt` (ms) failed: its event may have reached nobody. */
  failed(madeAt: number): void {
    if (this.since === undefined || madeAt < this.since) this.since = madeAt;
    if (madeAt > this.until) this.until = madeAt;
    this.trySend();
  }

  /**
   * Stops, after one last try, within `timeoutMs`, to send what is owed while the connection is ready
   * (an instance shutting down during a Redis blip still tells the others).
   */
  async close(timeoutMs: number): Promise<void> {
    clearTimeout(this.retry);
    this.retry = undefined;
    if (this.connection.status === 'ready') this.trySend();
    this.closed = true;
    if (!this.sending) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.sending, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Sends the notice owed, once the connection is ready; one at a time. */
  private trySend(): void {
    if (this.closed || this.sending || this.waiting || this.retry) return;
    if (!this.unsent && this.since !== undefined) {
      // Failures from now on need a notice of their own: this one may reach subscribers before their events' writes.
      this.unsent = { since: this.since, stamped: this.stamp({ since: this.since, until: this.until }) };
      this.since = undefined;
      this.until = 0;
    }
    const notice = this.unsent;
    if (!notice) return;
    if (this.connection.status !== 'ready') {
      // Sent when the connection is back, not queued behind it: a queued notice could fail in turn, and a retry pile up.
      this.waiting = true;
      this.connection.once('ready', () => {
        this.waiting = false;
        this.trySend();
      });
      return;
    }
    this.sending = this.send(notice.stamped).then(
      () => {
        this.sending = undefined;
        this.unsent = undefined;
        this.logger.warn({ since: new Date(notice.since).toISOString() }, 'told every instance that publishes since may not have been delivered');
        this.trySend();
      },
      (err: Error) => {
        this.sending = undefined;
        if (this.closed) return;
        this.logger.warn({ err: err.message }, 'could not yet tell other instances of failed publishes; trying again');
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.trySend();
        }, RETRY_MS);
        this.retry.unref();
      },
    );
  }
}

/** A notice as it arrives (JSON from another instance), or undefined for anything else; `until` is unknown when absent. */
export function missedSpan(notice: unknown): { since: number; until: number | undefined } | undefined {
  const { since, until } = (notice as Partial<MissedNotice> | null) ?? {};
  if (typeof since !== 'number' || !Number.isFinite(since)) return undefined;
  return { since, until: typeof until === 'number' && Number.isFinite(until) ? until : undefined };
}
