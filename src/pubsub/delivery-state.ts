/**
 * Whether this instance's events are being delivered, for a pub/sub engine on
 * Redis (one Redis, or a Redis Cluster): the watchers told of each loss and
 * return, and the notices of other instances' failed publishes
 * (missed-publishes.ts) turned into interruptions, unless this instance's own
 * interruption already covered them.
 */
import type { Logger } from 'pino';
import type { DeliveryWatcher } from './pubsub.js';

export class DeliveryState {
  private live = true;
  /** This instance's last loss of delivery and its end (ms), for the notices it covers (eventsMissed). */
  private lastInterruption = { lostAt: Infinity, restoredAt: -Infinity };
  private readonly watchers = new Set<DeliveryWatcher>();

  constructor(private readonly logger: Logger) {}

  get isLive(): boolean {
    return this.live;
  }

  /** While delivery is lost, since when (ms); undefined while it is live. */
  get lostSince(): number | undefined {
    return this.live ? undefined : this.lastInterruption.lostAt;
  }

  /**
   * Delivery lost (events may be missed from `since`, by default now) or back. Lost again while lost, from an
   * earlier time than known (a slot move found after the connection it closed): the watchers hear that time too.
   */
  set(live: boolean, since?: Date): void {
    if (!live && !this.live && since && since.getTime() < this.lastInterruption.lostAt) {
      this.lastInterruption.lostAt = since.getTime();
      for (const watcher of this.watchers) watcher.onDeliveryChange(false, since);
      return;
    }
    if (live === this.live) return;
    this.live = live;
    if (live) this.lastInterruption.restoredAt = Date.now();
    else this.lastInterruption = { lostAt: since?.getTime() ?? Date.now(), restoredAt: Infinity };
    this.logger.info({ live }, live ? 'pub/sub delivery restored' : 'pub/sub delivery lost');
    for (const watcher of this.watchers) watcher.onDeliveryChange(live, live ? undefined : since);
  }

  /**
   * Another instance's (or this one's) publishes made from `since` to `until` (ms) may not have been
   * delivered: every feed catches up from `since`.
   */
  eventsMissed(sinceMs: number, until: number | undefined): void {
    const since = new Date(sinceMs);
    const { lostAt, restoredAt } = this.lastInterruption;
    if (this.live && until !== undefined && sinceMs >= lostAt && until <= restoredAt) {
      // All made while this instance's own delivery was down: its feeds were told to catch up from before, once back.
      this.logger.debug({ since: since.toISOString() }, "publishes reported missed during this instance's own interruption");
      return;
    }
    this.logger.info({ since: since.toISOString() }, 'an instance reported publishes that may not have been delivered');
    for (const watcher of this.watchers) watcher.onDeliveryChange(false, since);
    // While delivery is down, the feeds are told it is back when it is.
    if (this.live) for (const watcher of this.watchers) watcher.onDeliveryChange(true);
  }

  watch(watcher: DeliveryWatcher): void {
    this.watchers.add(watcher);
  }

  unwatch(watcher: DeliveryWatcher): void {
    this.watchers.delete(watcher);
  }
}
