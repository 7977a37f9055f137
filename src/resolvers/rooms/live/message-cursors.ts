/**
 * The cursors a client catches up or resumes from in a room's history, and
 * where each starts. One rule for history pages, live events and feed
 * interruptions: a message later than the settled horizon (see
 * catchUpSettleMs) may still be overtaken by the slower write of an earlier
 * id, or, posted on another instance, reach a live feed after a later one.
 * Its cursor remembers the horizon, and catching up or resuming from it
 * starts there: the client may get a few messages of the last half minute
 * again (clients key messages by id), and never misses one.
 */
import type { Services } from '../../services.js';
import { maxTimeUuid, timeUuidDate } from '../../../timeuuids.js';
import { dayBucket } from '../../../buckets.js';
import { encodeHistoryCursor, type HistoryPosition } from '../../../pagination.js';
import { catchUpSettleMs } from '../model.js';

/** The settled horizon now: every message with an earlier id has committed, or never will. */
export function settledHorizon(services: Pick<Services, 'clock' | 'config'>): Date {
  return new Date(services.clock.now().getTime() - catchUpSettleMs(services.config.cassandra.requestTimeoutMs));
}

/** A message's cursor, served when the settled horizon is `settledUpTo`. */
export function messageCursor(message: { bucket: number; messageId: string }, settledUpTo: Date): string {
  const unsettled = timeUuidDate(message.messageId) > settledUpTo;
  return encodeHistoryCursor({ bucket: message.bucket, id: message.messageId, settled: unsettled ? settledUpTo.getTime() : undefined });
}

/** A cursor for everything that may have committed after `at`: the horizon of that moment. */
export function catchUpCursorBefore(at: Date, settleMs: number): string {
  return encodeHistoryCursor(positionAt(new Date(at.getTime() - settleMs)));
}

/** Where catching up (or resuming) from a cursor starts: the horizon it remembers, when its message was later. */
export function catchUpFrom(from: HistoryPosition): HistoryPosition {
  if (from.settled === undefined || timeUuidDate(from.id).getTime() <= from.settled) return { bucket: from.bucket, id: from.id };
  return positionAt(new Date(from.settled));
}

/** Right after every message made up to `at`. */
function positionAt(at: Date): HistoryPosition {
  return { bucket: dayBucket(at), id: maxTimeUuid(at).toString() };
}
