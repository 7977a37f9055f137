/**
 * Tokens whose signature and claims were verified, remembered until they
 * expire. A token is immutable, so a second verification can only differ by
 * time: expiry is re-checked on every hit, with the same tolerance as jose.
 * Revocation is not cached here; authenticate() checks it on every request.
 */
import { Limits } from '../limits.js';

export class VerifiedTokens<S extends { expiresAt: Date }> {
  // A Map iterates in insertion order: its first key is the oldest, dropped when full.
  private readonly sessions = new Map<string, S>();

  constructor(
    private readonly toleranceMs: number,
    private readonly capacity: number = Limits.verifiedTokenCacheSize,
  ) {}

  /** The session of a token verified before and not yet expired, or undefined. */
  get(token: string, nowMs: number): S | undefined {
    const session = this.sessions.get(token);
    if (!session) return undefined;
    if (session.expiresAt.getTime() + this.toleranceMs <= nowMs) {
      this.sessions.delete(token);
      return undefined;
    }
    return session;
  }

  remember(token: string, session: S): void {
    if (this.sessions.size >= this.capacity) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(token, session);
  }

  get size(): number {
    return this.sessions.size;
  }
}
