/**
 * The live revoked tokens, held in memory by every instance so no request pays
 * a Cassandra read to check its token. Loaded at start from Cassandra and kept
 * current through the pub/sub channel every instance listens to.
 */
import type { PubSub, Unsubscribe } from '../pubsub/pubsub.js';
import type { RevocationStore } from '../db/revocations.js';

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
  ) {}

  /** Subscribe first, then load, so a revocation published during the load is not missed. */
  async start(maxTokenLifetimeMs: number): Promise<void> {
    this.unsubscribe = await this.pubsub.listen<RevocationEvent>(REVOCATIONS_CHANNEL, (e) =>
      this.add(e.jti, new Date(e.expiresAt)),
    );
    for (const { jti, expiresAt } of await this.store.loadLive(maxTokenLifetimeMs)) this.add(jti, expiresAt);
    this.sweeper = setInterval(() => this.sweep(), 60_000).unref();
  }

  async revoke(jti: string, expiresAt: Date): Promise<void> {
    await this.store.revoke(jti, expiresAt);
    this.add(jti, expiresAt);
    await this.pubsub.publish(REVOCATIONS_CHANNEL, { jti, expiresAt: expiresAt.toISOString() } satisfies RevocationEvent);
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
    if (expiresAt.getTime() <= Date.now() || this.revoked.has(jti)) return;
    this.revoked.set(jti, expiresAt.getTime());
    for (const handler of this.onRevokeHandlers) handler(jti);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [jti, exp] of this.revoked) if (exp <= now) this.revoked.delete(jti);
  }
}
