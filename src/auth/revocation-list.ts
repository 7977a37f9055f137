/**
 * The live revoked tokens, held in memory by every instance so no request pays
 * a Cassandra read to check its token. Loaded at start from Cassandra and kept
 * current through the pub/sub channel every instance listens to.
 */
import type { PubSub, Unsubscribe } from '../pubsub/pubsub.js';
import type { RevocationStore } from '../db/revocations.js';
import { CLOCK_TOLERANCE_SECONDS } from './tokens.js';
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
  private unsubscribe?: Unsubscribe;
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly store: RevocationStore,
    private readonly pubsub: PubSub,
    private readonly logger: Logger,
  ) {}

  /** Subscribe first, then load, so a revocation published during the load is not missed. */
  async start(maxTokenLifetimeMs: number): Promise<void> {
    this.unsubscribe = await this.pubsub.listen<RevocationEvent>(REVOCATIONS_CHANNEL, (e) =>
      this.add(e.jti, new Date(e.expiresAt)),
    );
    await this.reload(maxTokenLifetimeMs);
    this.sweeper = setInterval(() => {
      this.sweep();
      this.reload(maxTokenLifetimeMs).catch((err) => this.logger.warn({ err: (err as Error).message }, 'revocation reload failed'));
    }, RELOAD_INTERVAL_MS).unref();
  }

  /** Stored in Cassandra first (the source of truth), then announced; an announcement lost to a Redis outage is caught up by reload. */
  async revoke(jti: string, expiresAt: Date): Promise<void> {
    await this.store.revoke(jti, expiresAt, this.keepUntil(expiresAt));
    this.add(jti, expiresAt);
    await this.pubsub
      .publish(REVOCATIONS_CHANNEL, { jti, expiresAt: expiresAt.toISOString() } satisfies RevocationEvent)
      .catch((err) => this.logger.warn({ err: (err as Error).message }, 'revocation not announced; other instances catch up by reload'));
  }

  private async reload(maxTokenLifetimeMs: number): Promise<void> {
    for (const { jti, expiresAt } of await this.store.loadLive(maxTokenLifetimeMs)) this.add(jti, expiresAt);
  }

  /** A token is accepted until exp + the verifier's clock tolerance, so its revocation must live as long. */
  private keepUntil(expiresAt: Date): Date {
    return new Date(expiresAt.getTime() + CLOCK_TOLERANCE_SECONDS * 1000);
  }

  isRevoked(jti: string): boolean {
    return this.revoked.has(jti);
  }

  /** Called with each newly revoked jti (used to close WebSockets that carry it). */
  onRevoke(handler: (jti: string) => void): () => void {
    this.onRevokeHandlers.add(handler);
    return () => this.onRevokeHandlers.delete(handler);
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await this.unsubscribe?.();
  }

  private add(jti: string, expiresAt: Date): void {
    const until = this.keepUntil(expiresAt).getTime();
    if (until <= Date.now() || this.revoked.has(jti)) return;
    this.revoked.set(jti, until);
    for (const handler of this.onRevokeHandlers) handler(jti);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [jti, exp] of this.revoked) if (exp <= now) this.revoked.delete(jti);
  }
}
