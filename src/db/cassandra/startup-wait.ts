/**
 * Start-up against a cluster that cannot serve yet. An orchestrator starts
 * Parley beside Cassandra: the nodes may not answer, gossip may not have
 * settled (a node still sees its peers as down and answers Unavailable at
 * LOCAL_QUORUM), a node may not know a keyspace or table that another node
 * just created, or one node may be down for good. None of these is a reason to
 * exit: each step of the start is tried again, backing off, for a bounded time
 * (CASSANDRA_STARTUP_TIMEOUT_MS), and the reason it waits is told to whoever
 * asks (`/ready`). A mistake the operator must fix (bad credentials, an unknown
 * data center, a CQL error, an edited migration) fails the start at once.
 * Either way src/server/startup-failure.ts makes the failure one line that says what to fix.
 */
import { setTimeout as delay } from 'node:timers/promises';
import cassandra from 'cassandra-driver';
import type { Logger } from 'pino';
import { isStorageUnavailable } from './client.js';
import { SchemaDisagreementError } from './migrate.js';
import { isSchemaNotKnownYet } from './schema-not-known.js';

const { errors, types } = cassandra;

/** Told, at each failed attempt, why the start is still waiting (src/server/http/starting.ts shows it on /ready). */
export type StartupProgress = (reason: string) => void;

/** The start gave up: storage did not become able to serve within the configured time. */
export class StorageNotReadyError extends Error {
  override name = 'StorageNotReadyError';
}

/** Migrations off: cql/ is not all applied yet (another instance or a job is applying it, or must). */
export class SchemaNotAppliedYetError extends Error {
  override name = 'SchemaNotAppliedYetError';
}

const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 5000;

/** Answers that no wait will change: the operator must fix a setting (credentials, data center, permissions). */
function isMistake(err: unknown): boolean {
  if (err instanceof errors.AuthenticationError || err instanceof errors.ArgumentError) return true;
  return (
    err instanceof errors.ResponseError &&
    (err.code === types.responseErrorCodes.badCredentials || err.code === types.responseErrorCodes.unauthorized)
  );
}

/** The nodes the driver tried, each with what it answered. */
function innerErrorsOf(err: cassandra.errors.NoHostAvailableError): Array<[string, unknown]> {
  return Object.entries(err.innerErrors ?? {});
}

/**
 * Errors after which the same step may well succeed in a moment, the cluster still settling: no node answers
 * yet (unless every node tried answered a mistake), too few replicas up, a timeout, a schema disagreement, or a
 * keyspace or table not known yet (or, migrations off, cql/ not all applied yet).
 */
export function isSettling(err: unknown): boolean {
  if (err instanceof SchemaDisagreementError || err instanceof SchemaNotAppliedYetError || isSchemaNotKnownYet(err)) return true;
  if (err instanceof errors.NoHostAvailableError) {
    const inner = innerErrorsOf(err);
    return inner.length === 0 || !inner.every(([, e]) => isMistake(e));
  }
  return isStorageUnavailable(err);
}

/** The first line of a message, without the stack trace that some driver messages carry. */
function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

/** What an error of the driver (or of the start) says, in one line, without stack traces. */
export function describeStorageError(err: unknown): string {
  if (err instanceof errors.NoHostAvailableError) {
    const inner = innerErrorsOf(err);
    if (inner.length === 0) return firstLine(err.message);
    const answers = inner.map(([host, e]) => `${host}: ${firstLine(e instanceof Error ? e.message : String(e))}`);
    return `no Cassandra node could serve (${answers.join('; ')})`;
  }
  return firstLine(err instanceof Error ? err.message : String(err));
}

/** What the operator can do when the start gave up waiting, by the last reason it waited for. */
function fixFor(err: unknown, migrates: boolean): string {
  if (isSchemaNotKnownYet(err) || err instanceof SchemaNotAppliedYetError) {
    return migrates
      ? 'check that every node agrees on the schema (nodetool describecluster)'
      : 'CASSANDRA_MIGRATE is off: apply cql/ first (or start one instance with CASSANDRA_MIGRATE=true)';
  }
  if (err instanceof SchemaDisagreementError) return 'check that every node agrees on the schema (nodetool describecluster)';
  if (err instanceof errors.NoHostAvailableError || err instanceof errors.OperationTimedOutError) {
    return 'check that Cassandra runs and that CASSANDRA_CONTACT_POINTS names its nodes';
  }
  return 'check that a quorum of replicas is up (nodetool status) and CASSANDRA_REPLICATION';
}

/** A mistake the operator must fix, in one line that names the setting; undefined for any other error. */
export function describeStorageMistake(err: unknown): string | undefined {
  let mistake = err;
  if (err instanceof errors.NoHostAvailableError) {
    // Every node tried answered a mistake (else isSettling holds): the first says which.
    if (isSettling(err)) return undefined;
    mistake = innerErrorsOf(err)[0]![1];
  }
  if (!isMistake(mistake)) return undefined;
  const said = describeStorageError(mistake);
  const code = (mistake as { code?: number }).code;
  if (mistake instanceof errors.AuthenticationError || code === types.responseErrorCodes.badCredentials) {
    return `Cassandra refused the credentials: set or fix CASSANDRA_USERNAME and CASSANDRA_PASSWORD (${said})`;
  }
  if (code === types.responseErrorCodes.unauthorized) return `the Cassandra user (CASSANDRA_USERNAME) lacks a permission: grant it (${said})`;
  if (/localDataCenter/.test(said)) return `fix CASSANDRA_LOCAL_DC: ${said}`;
  return `a Cassandra setting is wrong: ${said}`;
}

/**
 * Runs `step` until it succeeds, while it fails for a reason that passes, for
 * at most `timeoutMs` in all; then rethrows as StorageNotReadyError, naming the
 * last reason and what to check. Other errors are rethrown at once.
 */
export async function untilStorageServes<T>(
  what: string,
  step: () => Promise<T>,
  opts: { timeoutMs: number; logger: Logger; progress?: StartupProgress; migrates?: boolean },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let pause = FIRST_PAUSE_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (!isSettling(err)) throw err;
      const reason = `${what}: ${describeStorageError(err)}`;
      if (Date.now() + pause > deadline) {
        throw new StorageNotReadyError(
          `Cassandra could not serve within ${Math.round(opts.timeoutMs / 1000)} s (CASSANDRA_STARTUP_TIMEOUT_MS): ${reason}; ${fixFor(err, opts.migrates ?? true)}`,
        );
      }
      opts.logger.warn({ attempt, reason, retryInMs: pause }, 'Cassandra cannot serve yet; trying again');
      opts.progress?.(reason);
      await delay(pause);
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    }
  }
}
