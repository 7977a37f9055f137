/**
 * The cleanup that follows a room's deletion, and the job that finishes the
 * cleanups a request left unfinished (it died midway: a crash, a deploy, a
 * node that stopped answering).
 *
 * A deletion lists an intent in pending_room_cleanups (cql/010, cql/011)
 * before its LWT, confirms it with the deletion's time once the LWT applied,
 * and the cleanup removes the entry as its last step. The cleanup's deletes
 * carry a timestamp at or after the deletion and before a new room of the
 * same name (as far as the instances' clocks agree), and leave that room's
 * messages out by their ids (RoomMessageStore.dropRoom), so running one
 * again, or on two instances at once, is harmless and spares the new room.
 */
import type { Services } from '../services.js';
import type { RoomCleanup } from '../../db/rooms/room-cleanups.js';
import type { RoomRecord } from '../../db/rooms/rooms.js';
import { nextWriteTimestamp, writeTimestampMs, writeTimestampOf, type WriteTimestamp } from '../../db/cassandra/write-timestamp.js';
import { commitHorizonMs } from './model.js';
import { settleListedByDay } from '../shared/pending-by-day.js';
import { eachAtOnce } from '../shared/each-at-once.js';
import type { DroppedMessage } from '../../db/rooms/messages/room-messages.js';
import { Limits } from '../../limits.js';

/**
 * Lists the intent to delete `room`, whose lists and read state `logins`
 * hold it, before the deletion's LWT. Called again before each attempt with
 * the `earlier` intent, it replaces that entry's logins with the ones the
 * attempt conditions on.
 */
export async function listIntent(services: Services, room: RoomRecord, logins: string[], earlier?: RoomCleanup): Promise<RoomCleanup> {
  const intent = {
    roomName: room.name,
    deletedAt: earlier?.deletedAt ?? nextWriteTimestamp(services.db),
    logins: [...new Set(logins)],
    intentFor: room.createdAt,
  };
  await services.stores.roomCleanups.add(intent);
  return intent;
}

/** The deletion did not apply (the room was gone, or kept changing): its intent is dropped. */
export async function dropIntent(services: Services, intent: RoomCleanup): Promise<void> {
  await services.stores.roomCleanups.remove(intent);
}

/** The deletion applied at `deletedAt`: lists its cleanup at that time, then drops the intent. */
export async function confirmIntent(services: Services, intent: RoomCleanup, deletedAt: WriteTimestamp): Promise<RoomCleanup> {
  const cleanup = { ...intent, deletedAt, intentFor: null };
  await services.stores.roomCleanups.add(cleanup);
  await services.stores.roomCleanups.remove(intent);
  return cleanup;
}

/**
 * Drops what the deleted room left, as of `at`: its people's room lists, its
 * messages and their parts, copies, polls' votes and files, read state; then
 * unlists `listed`.
 */
export async function runCleanup(services: Services, listed: RoomCleanup, at: WriteTimestamp = listed.deletedAt): Promise<void> {
  const { stores, config } = services;
  const { roomName, logins } = listed;
  await stores.rooms.removeFromUsers(logins, roomName, at);
  await stores.roomMessages.dropRoom(
    roomName,
    at,
    commitHorizonMs(config.cassandra.requestTimeoutMs),
    () => stores.rooms.createdAtSerial(roomName),
    (messages) => dropWhatMessagesHold(services, messages),
  );
  await stores.readState.dropRoom(roomName, logins, at);
  await stores.roomCleanups.remove(listed);
}

/**
 * What a page of the deleted room's messages holds outside the room's
 * partitions: each poll's votes and each message's own files (a forwarded
 * copy's files are its original's, which keeps them), before the rows that
 * name them go, so a cleanup run again after a crash finds them still.
 *
 * The votes go at the current time, not the deletion's: their partitions are
 * this room's messages' alone (a room made again has other message ids), and a
 * vote that read the poll before the deletion may land after it (polls.ts
 * drops it when it sees the deletion; this catches the ones it did not see).
 * A file's bytes go before its row: a cleanup cut short between the two finds
 * the row again and drops the rest, where the other order would leave bytes
 * that nothing names.
 */
async function dropWhatMessagesHold(services: Services, messages: DroppedMessage[]): Promise<void> {
  const { stores } = services;
  const atOnce = Limits.room.cleanupWritesAtOnce;
  await eachAtOnce(messages.filter((m) => m.hasPoll), atOnce, (m) => stores.pollVotes.drop(m.roomName, m.messageId));
  // A file's id may be named by its own message and by forwarded copies of it in the same room.
  const namedBy = new Map<string, Set<string>>();
  for (const m of messages) for (const id of m.attachments) namedBy.set(id, (namedBy.get(id) ?? new Set()).add(m.messageId));
  if (namedBy.size === 0) return;
  const ids = [...namedBy.keys()];
  const records = [];
  // A page holds up to 1,000 messages of 10 files each: looked up in bounded IN lists.
  for (let from = 0; from < ids.length; from += Limits.room.cleanupBatch) {
    records.push(...(await stores.attachments.byIds(ids.slice(from, from + Limits.room.cleanupBatch))));
  }
  const own = records.filter((r) => r.messageId !== null && namedBy.get(r.id)?.has(r.messageId));
  await eachAtOnce(own, atOnce, async (record) => {
    await stores.fileBytes.drop(record.id);
    await stores.attachments.drop(record.id);
  });
}

/**
 * Whether an intent's deletion applied, from the room's row as it is now,
 * and if it did, the time its cleanup erases up to: null when the room the
 * intent was for (by its creation time) is still there: the LWT failed or
 * was never sent. Else the moment before a room of that name was created
 * again, or, with none, a time taken before the read, so a room created just
 * after it writes later than every delete of the cleanup.
 */
async function intentDeletionTime(services: Services, roomName: string, intentFor: Date): Promise<WriteTimestamp | null> {
  const now = nextWriteTimestamp(services.db);
  const createdAt = await services.stores.rooms.createdAtSerial(roomName);
  if (!createdAt) return now;
  if (createdAt.getTime() === intentFor.getTime()) return null;
  return writeTimestampOf(createdAt).subtract(1);
}

/**
 * Settles every listed entry older than the grace period (younger ones
 * belong to a request most likely still at it), from the last
 * Limits.room.cleanupRecoveryDays days and the next one (another instance's
 * clock may be ahead): runs each confirmed cleanup, and each intent whose
 * deletion applied; drops the intents whose deletion did not. A day that
 * cannot be read, or an entry that fails, is logged and left for the next
 * run. Returns how many entries it settled.
 */
export function finishPendingCleanups(services: Services): Promise<number> {
  const { stores, config } = services;
  return settleListedByDay<RoomCleanup>(services, {
    what: 'room cleanups',
    inDay: (day) => stores.roomCleanups.inDay(day),
    listedAtMs: (listed) => writeTimestampMs(listed.deletedAt),
    graceMs: config.rooms.cleanupRecoveryGraceMs,
    settle: async (listed) => {
      const at = listed.intentFor ? await intentDeletionTime(services, listed.roomName, listed.intentFor) : listed.deletedAt;
      if (at) await runCleanup(services, listed, at);
      else await stores.roomCleanups.remove(listed);
    },
    describe: (listed) => ({ roomName: listed.roomName }),
  });
}
