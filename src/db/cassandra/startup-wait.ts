/**
 * Start-up against a cluster that cannot serve yet. An orchestrator starts
 * Parley beside Cassandra: the nodes may not answer, gossip may not have
 * settled (a node still sees its peers as down and answers Unavailable at
 * LOCAL_QUORUM), or one node may be down for good. None of these is a reason
 * to exit: each step of the start is tried again, backing off, for a bounded
 * time (CASSANDRA_STARTUP_TIMEOUT_MS), and the reason it waits is told to
 * whoever asks (`/ready`). A mistake the operator must fix (bad credentials, a
 * CQL error, an edited migration) fails the start at once.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isStorageUnavailable } from './client.js';
import { SchemaDisagreementError } from './migrate.js';

/** Told, at each failed attempt, why the start is still waiting (src/server/http/starting.ts shows it on /ready). */
export type StartupProgress = (reason: string) => void;

/** The start gave up: storage did not become able to serve within the configured time. */
export class StorageNotReadyError extends Error {
  override name = 'StorageNotReadyError';
}

const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 5000;

/** Errors after which the same step may well succeed in a moment. */
function isTransient(err: unknown): boolean {
  return isStorageUnavailable(err) || err instanceof SchemaDisagreementError;
}

/**
 * Runs `step` until it succeeds, while it fails for a reason that passes, for
 * at most `timeoutMs` in all; then rethrows as StorageNotReadyError, naming the
 * last reason. Other errors are rethrown at once.
 */
export async function untilStorageServes<T>(
  what: string,
  step: () => Promise<T>,
  opts: { timeoutMs: number; logger: Logger; progress?: StartupProgress },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let pause = FIRST_PAUSE_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (!isTransient(err)) throw err;
      const reason = `${what}: ${(err as Error).message}`;
      if (Date.now() + pause > deadline) {
        throw new StorageNotReadyError(
          `Cassandra could not serve within ${Math.round(opts.timeoutMs / 1000)} s (CASSANDRA_STARTUP_TIMEOUT_MS): ${reason}`,
        );
      }
      opts.logger.warn({ attempt, reason, retryInMs: pause }, 'Cassandra cannot serve yet; trying again');
      opts.progress?.(reason);
      await delay(pause);
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    }
  }
}
