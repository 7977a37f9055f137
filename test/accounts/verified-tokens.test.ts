// The verified-token cache: a token checked once is trusted until it expires, and no longer.
import { describe, expect, it } from 'vitest';
import { VerifiedTokens } from '../../src/auth/verified-tokens.js';

describe('the verified-token cache', () => {
  const session = (expiresAtMs: number) => ({ expiresAt: new Date(expiresAtMs) });

  it('serves a token until its expiry plus the tolerance, then forgets it', () => {
    const cache = new VerifiedTokens<{ expiresAt: Date }>(5_000);
    cache.remember('t', session(10_000));
    expect(cache.get('t', 14_999)).toBeDefined();
    expect(cache.get('t', 15_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the oldest token when full', () => {
    const cache = new VerifiedTokens<{ expiresAt: Date }>(0, 2);
    for (const t of ['a', 'b', 'c']) cache.remember(t, session(60_000));
    expect([cache.get('a', 0), cache.get('b', 0), cache.get('c', 0)].map(Boolean)).toEqual([false, true, true]);
  });
});
