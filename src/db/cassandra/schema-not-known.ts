/**
 * A keyspace or table the coordinator does not know (yet): on a cluster, a node learns a schema change some time
 * after the node that made it, so right after a CREATE another node may still answer this (code 8704, Invalid).
 * The start waits it out (startup-wait.ts); a migration never takes it for a statement refused as written.
 */
import cassandra from 'cassandra-driver';

const { errors, types } = cassandra;

export function isSchemaNotKnownYet(err: unknown): boolean {
  return (
    err instanceof errors.ResponseError &&
    err.code === types.responseErrorCodes.invalid &&
    /\b(keyspace|table)\b.*\bdoes not exist\b|\bunconfigured table\b/i.test(err.message)
  );
}
