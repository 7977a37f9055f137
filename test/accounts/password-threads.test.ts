/** The threads that hash passwords (src/auth/scrypt-threads.ts): a hash always ends, answered or refused. */
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ScryptThreads } from '../../src/auth/scrypt-threads.js';
import { hashPassword, verifyPassword, type DeriveKey } from '../../src/auth/passwords.js';
import { withDeadline } from '../testkit/poll.js';

/** A cheap cost: these tests are about the threads, not the hash. */
const CHEAP = { N: 2 ** 10, r: 8, p: 1 };

/** `work`, or a failure after `ms`: a hash that never ends fails the test instead of stalling it. */
const within = <T>(work: Promise<T>, ms = 10_000) => withDeadline(work, ms, 'answer');

async function withThreads(test: (threads: ScryptThreads, derive: DeriveKey) => Promise<void>): Promise<void> {
  const threads = new ScryptThreads(1, 10, pino({ level: 'silent' }));
  try {
    await test(threads, threads.derive);
  } finally {
    await threads.close();
  }
}

describe('password hashing threads', () => {
  it('replaces a thread that ended while idle: the next hash is computed, not left waiting', () =>
    withThreads(async (threads, derive) => {
      const stored = await hashPassword('the password', CHEAP, derive);
      // The only thread ends between two hashes, as one that crashed right after answering would.
      const idle = (threads as unknown as { idle: Array<{ terminate(): Promise<number> }> }).idle;
      expect(idle).toHaveLength(1);
      await idle[0]!.terminate();
      await expect(within(verifyPassword('the password', stored, derive))).resolves.toBe(true);
      await expect(within(verifyPassword('another one', stored, derive))).resolves.toBe(false);
    }));

  it('refuses a hash scrypt cannot compute, and computes the next', () =>
    withThreads(async (_threads, derive) => {
      // N must be a power of two: a stored hash with N=3 cannot be checked.
      await expect(within(verifyPassword('x', 'scrypt$3$8$1$c2FsdHNhbHQ=$a2V5', derive))).rejects.toThrow(/N|power/i);
      const stored = await within(hashPassword('still works', CHEAP, derive));
      await expect(within(verifyPassword('still works', stored, derive))).resolves.toBe(true);
    }));

  it('refuses hashes once closed, those waiting for a thread included', async () => {
    const threads = new ScryptThreads(1, 10, pino({ level: 'silent' }));
    const derive = threads.derive;
    // Settled as they end, so a refusal that comes before it is looked at is not an unhandled one.
    const outcomes = Promise.allSettled([hashPassword('running', CHEAP, derive), hashPassword('waiting', CHEAP, derive)]);
    await threads.close();
    const [running, waiting] = await within(outcomes);
    expect(running).toMatchObject({ status: 'fulfilled', value: expect.stringMatching(/^scrypt\$/) });
    expect(waiting).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/closed/) }) });
    await expect(within(hashPassword('third', CHEAP, derive))).rejects.toThrow(/closed/);
  });
});
