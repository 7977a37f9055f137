/**
 * Strict ISO 8601 for the DateTime scalar. `new Date(text)` alone accepts "1"
 * (2001-01-01), rolls "2099-02-30" over to March and reads "12/31/2026" in the
 * server's local time: a date a client did not mean is worse than an error.
 */
import { GraphQLError } from 'graphql';

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export function parseDateTime(value: unknown): Date {
  const m = typeof value === 'string' ? ISO.exec(value) : null;
  const date = m ? new Date(value as string) : undefined;
  // The calendar fields must survive the round trip (no 30 February, no hour 25).
  const [, y, mo, d, h, mi, sec] = m ?? [];
  const exact =
    date &&
    !Number.isNaN(date.getTime()) &&
    (() => {
      const offsetMs = m![7] === 'Z' ? 0 : offsetOf(m![7]!);
      const local = new Date(date.getTime() + offsetMs);
      return (
        local.getUTCFullYear() === Number(y) &&
        local.getUTCMonth() + 1 === Number(mo) &&
        local.getUTCDate() === Number(d) &&
        local.getUTCHours() === Number(h) &&
        local.getUTCMinutes() === Number(mi) &&
        local.getUTCSeconds() === Number(sec ?? 0)
      );
    })();
  if (!exact) {
    throw new GraphQLError('DateTime must be an ISO 8601 date and time with Z or an offset, e.g. "2026-11-22T10:00:00Z"');
  }
  return date;
}

function offsetOf(text: string): number {
  const sign = text.startsWith('-') ? -1 : 1;
  const [hours, minutes] = text.slice(1).split(':').map(Number);
  return sign * (hours! * 60 + minutes!) * 60_000;
}
