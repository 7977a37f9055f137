/**
 * The cleanup that follows a room's deletion, and the job that finishes the
 * cleanups a request left unfinished (it died midway: a crash, a deploy, a
 * node that stopped answering). The deletion lists its cleanup in
 * pending_room_cleanups (cql/010) as soon as its LWT applies; the cleanup
 * removes the entry as its last step. Every cleanup write carries the
 * deletion's timestamp, so running one again, or on two instances at once,
 * is harmless and never erases a new room of the same name.
 */
import type { Services } from '../../services.js';
import { dayBucket } from '../../buckets.js';
import type { RoomCleanup } from '../../db/rooms/room-cleanups.js';
import { writeTimestampMs, type WriteTimestamp } from '../../db/cassandra/write-timestamp.js';
import { commitHorizonMs } from './model.js';
import { Limits } from '../../limits.js';

/** Lists the cleanup of a room just deleted (at `deletedAt`), whose lists and read state `logins` hold it. */
export async function listCleanup(services: Services, roomName: string, deletedAt: WriteTimestamp, logins: string[]): Promise<RoomCleanup> {
  const cleanup = { roomName, deletedAt, logins: [...new Set(logins)] };
  await services.stores.roomCleanups.add(cleanup);
  return cleanup;
}

/** Drops what the deleted room left: its people's room lists, its messages and their parts and copies, read state. */
export async function runCleanup(services: Services, cleanup: RoomCleanup): Promise<void> {
  const { stores, config } = services;
  const { roomName, deletedAt, logins } = cleanup;
  await stores.rooms.removeFromUsers(logins, roomName, deletedAt);
  await stores.roomMessages.dropRoom(roomName, deletedAt, commitHorizonMs(config.cassandra.requestTimeoutMs));
  await stores.readState.dropRoom(roomName, logins, deletedAt);
  await stores.roomCleanups.remove(cleanup);
}

/**
 * Runs every listed cleanup older than the grace period (younger ones belong
 * to a request most likely still at it), from the last
 * Limits.room.cleanupRecoveryDays days and the next one (another instance's
 * clock may be ahead). A day that cannot be read, or a cleanup that fails, is
 * logged and left for the next run. Returns how many cleanups it finished.
 */
export async function finishPendingCleanups(services: Services): Promise<number> {
  const { stores, clock, logger, config } = services;
  const now = clock.now().getTime();
  let finished = 0;
  for (let back = Limits.room.cleanupRecoveryDays; back >= -1; back--) {
    const day = dayBucket(new Date(now - back * 86_400_000));
    let pending: RoomCleanup[];
    try {
      pending = await stores.roomCleanups.inDay(day);
    } catch (err) {
      logger.error({ err, day }, 'could not read a day of pending room cleanups; skipped until the next run');
      continue;
    }
    for (const cleanup of pending) {
      const ageMs = now - writeTimestampMs(cleanup.deletedAt);
      if (ageMs < config.rooms.cleanupRecoveryGraceMs) continue;
      try {
        await runCleanup(services, cleanup);
        finished += 1;
      } catch (err) {
        logger.error({ err, roomName: cleanup.roomName }, 'a deleted room could not be cleaned up; tried again on the next run');
      }
    }
  }
  return finished;
}
