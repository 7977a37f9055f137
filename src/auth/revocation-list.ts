/**
 * The live revoked tokens, held in memory by every instance so no request pays
 * a Cassandra read to check its token. Loaded at start from Cassandra and kept
 * current through the pub/sub channel every instance listens to.
 *
 * The memory is trusted only while it is in sync: loaded, and pub/sub
 * delivering since. While pub/sub is down (and until a reload after it is
 * back) a revocation announced by another instance may have been missed, so
 * each token is checked against Cassandra instead: a logged-out token is never
 * accepted, and if Cassandra does not answer either, the request is told to
 * retry (SERVICE_UNAVAILABLE) rather than let through.
 */
import type { DeliveryWatcher, Listener, PubSub } from '../pubsub/pubsub.js';
import type { RevocationStore } from '../db/accounts/revocations.js';
import { acceptedUntil } from './tokens.js';
import type { Logger } from 'pino';

/**
 * Events missed while this instance's Redis connection was down are caught up
 * by re-reading Cassandra this often (a handful of single-partition reads).
 */
const RELOAD_INTERVAL_MS = 30_000;

export const REVOCATIONS_CHANNEL = 'auth.revocations';

interface RevocationEvent {
  jti: string;
  expiresAt: string;
}

export class RevocationList {
  private readonly revoked = new Map<string, number>();
  private readonly onRevokeHandlers = new Set<(jti: string) => void>();
  private readonly unannounced: RevocationEvent[] = [];
  private readonly listener: Listener<RevocationEvent> = { onEvent: (e) => this.add(e.jti, new Date(e.expiresAt)) };
  private deliveryWatcher?: DeliveryWatcher;
  private sweeper?: NodeJS.Timeout;
  /** The memory holds every live revocation: loaded, and no pub/sub event missed since. */
  private inSync = false;
  /** Bumped when delivery drops, so a reload that began before the drop does not declare sync. */
  private epoch = 0;

  constructor(
    private readonly store: RevocationStore,
    private readonly pubsub: PubSub,
    private readonly logger: Logger,
  ) {}

  /** Subscribe first, then load, so a revocation published during the load is not missed. */
  async start(maxTokenLifetimeMs: number): Promise<void> {
    let deliveryLive = true;
    this.deliveryWatcher = {
      onDeliveryChange: (live) => {
        deliveryLive = live;
        this.epoch += 1;
        if (!live) {
          this.inSync = false;
          return;
        }
        this.announceMissed();
        this.reload(maxTokenLifetimeMs).catch((err) =>
          this.logger.warn({ err: (err as Error).message }, 'revocation reload failed; tokens are checked against storage meanwhile'),
        );
      },
    };
    this.pubsub.watchDelivery(this.deliveryWatcher);
    await this.pubsub.listen(REVOCATIONS_CHANNEL, this.listener);
    await this.reload(maxTokenLifetimeMs);
    this.sweeper = setInterval(() => {
      this.sweep();
      if (!deliveryLive) return;
      this.reload(maxTokenLifetimeMs).catch((err) => this.logger.warn({ err: (err as Error).message }, 'revocation reload failed'));
    }, RELOAD_INTERVAL_MS).unref();
  }

  /** Stored in Cassandra first (the source of truth), then announced; an announcement lost to a Redis outage is caught up by reload. */
  async revoke(jti: string, expiresAt: Date): Promise<void> {
    await this.store.revoke(jti, expiresAt, acceptedUntil(expiresAt));
    this.add(jti, expiresAt);
    await this.announce({ jti, expiresAt: expiresAt.toISOString() });
  }

  /**
   * An announcement that cannot be published now is published again when this
   * instance's pub/sub is back: another instance whose own connection never
   * dropped (so it trusts its memory) still hears of it within moments.
   */
  private async announce(event: RevocationEvent): Promise<void> {
    try {
      await this.pubsub.publish(REVOCATIONS_CHANNEL, event);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'revocation not announced yet; announced again when pub/sub is back');
      this.unannounced.push(event);
    }
  }

  private announceMissed(): void {
    for (const event of this.unannounced.splice(0)) void this.announce(event);
  }

  /** Reads every live revocation; the memory is in sync once one completes with delivery live throughout. */
  private async reload(maxTokenLifetimeMs: number): Promise<void> {
    const epoch = this.epoch;
    for (const { jti, expiresAt } of await this.store.loadLive(maxTokenLifetimeMs)) this.add(jti, expiresAt);
    if (epoch === this.epoch) this.inSync = true;
  }

  /** What memory says: revoked as far as this instance has heard (for per-event checks of open streams). */
  isRevoked(jti: string): boolean {
    return this.revoked.has(jti);
  }

  /** Whether a token is revoked, from memory while in sync, from storage while not. */
  async check(session: { jti: string; expiresAt: Date }): Promise<boolean> {
    if (this.revoked.has(session.jti)) return true;
    if (this.inSync) return false;
    const revoked = await this.store.isRevoked(session.jti, session.expiresAt);
    if (revoked) this.add(session.jti, session.expiresAt);
    return revoked;
  }

  /** Called with each newly revoked jti (used to close WebSockets that carry it). */
  onRevoke(handler: (jti: string) => void): () => void {
    this.onRevokeHandlers.add(handler);
    return () => this.onRevokeHandlers.delete(handler);
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    if (this.deliveryWatcher) this.pubsub.unwatchDelivery(this.deliveryWatcher);
    await this.pubsub.unlisten(REVOCATIONS_CHANNEL, this.listener);
  }

  private add(jti: string, expiresAt: Date): void {
    const until = acceptedUntil(expiresAt).getTime();
    if (until <= Date.now() || this.revoked.has(jti)) return;
    this.revoked.set(jti, until);
    for (const handler of this.onRevokeHandlers) handler(jti);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [jti, exp] of this.revoked) if (exp <= now) this.revoked.delete(jti);
  }
}
