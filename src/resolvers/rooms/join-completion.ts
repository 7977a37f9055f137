/**
 * A join is whole with its system message ("… joins the room") and the
 * newcomer's read marker at it. The join itself is an LWT on the room's row;
 * those two are writes to other partitions after it, and the request can die
 * or lose its node in between. So a join is listed in pending_room_joins
 * (cql/016) before its LWT, the message's id is recorded there before the
 * message is written, and the entry goes once both are written.
 * completeJoin does that last part, for the request and for the job alike;
 * the job (finishPendingJoins) takes the entries a request left, once no
 * request can still be working on them; one whose join never applied also
 * takes the room back off the user's list, which the request added first.
 */
import type { Services } from '../../services.js';
import type { RoomRecord } from '../../db/rooms/rooms.js';
import type { PendingJoin } from '../../db/rooms/pending-joins.js';
import { dayBucket } from '../../buckets.js';
import { Limits } from '../../limits.js';
import { timeUuidDate } from '../../db/cassandra/timeuuids.js';
import { nextWriteTimestamp } from '../../db/cassandra/write-timestamp.js';
import { chatUser, newMessage, type ChatUser } from './model.js';
import { postTime } from './system-messages.js';
import { readUpToJoin } from './read-state.js';

/**
 * Puts the room on the user's list and lists `login`'s join of `roomName`, both before its LWT: the list's entry
 * first (a deletion that commits after the join sees the new participant and removes it; one lost to the
 * deletion is taken back by the request, or by the job), at a timestamp the listing keeps.
 */
export async function listJoin(services: Services, roomName: string, login: string): Promise<PendingJoin> {
  const listEntryAt = nextWriteTimestamp(services.db);
  await services.stores.rooms.addToUser(login, roomName, listEntryAt);
  const listed: PendingJoin = { roomName, login, listedAt: services.clock.now(), messageId: null, listEntryAt };
  await services.stores.pendingJoins.add(listed);
  return listed;
}

/** The join did not apply (the room is gone, or bans them): nothing to complete. */
export async function dropJoin(services: Services, listed: PendingJoin): Promise<void> {
  await services.stores.pendingJoins.remove(listed);
}

/**
 * Writes what follows the join of `person` (applied) to `room`: the system message, unless the one recorded
 * in `listed` is stored already, and the read marker at it; then unlists the join. Of two at it at once (the
 * request and a job, or two jobs), one writes the message: the one whose claim of the entry holds.
 */
export async function completeJoin(services: Services, room: RoomRecord, person: ChatUser, listed: PendingJoin): Promise<void> {
  const { stores } = services;
  let messageId = listed.messageId;
  if (!messageId || !(await stores.roomMessages.byKey(room.name, dayBucket(timeUuidDate(messageId)), messageId))) {
    const turn = services.rooms.sequencer.take(room.name);
    const message = newMessage(room, postTime(services, room), person, `${person.firstname} ${person.lastname} joins the room`, true);
    let claimed: boolean;
    try {
      claimed = await stores.pendingJoins.claimMessage(listed, message.messageId);
      if (claimed) await stores.roomMessages.insert(room, message);
    } catch (err) {
      turn.cancel();
      throw err;
    }
    if (!claimed) {
      turn.cancel();
      return; // another is completing it
    }
    await turn.publish([
      { kind: 'ParticipantJoined', roomName: room.name, user: person },
      { kind: 'MessagePosted', roomName: room.name, message },
    ]);
    messageId = message.messageId;
  }
  // A newcomer has read everything up to their join: history before it is not "unread".
  await readUpToJoin(services, room, person.login, messageId);
  await stores.pendingJoins.remove(listed);
}

/**
 * A join that never applied (or whose user is gone from the room since): the room leaves the user's list at the
 * timestamp its entry was added with, so a later join, which adds it again, keeps it.
 */
async function dropNeverApplied(services: Services, listed: PendingJoin): Promise<void> {
  await services.stores.rooms.removeFromUsers([listed.login], listed.roomName, listed.listEntryAt);
  await dropJoin(services, listed);
}

/**
 * Completes the joins that requests listed and left unfinished: each entry older than the grace (no request
 * still works on it), settled against the room as it is now, read at SERIAL. A participant gets what follows
 * the join; an entry whose join never applied, or whose user has left since, is dropped. Returns how many it
 * settled.
 */
export async function finishPendingJoins(services: Services): Promise<number> {
  const { stores, clock, logger } = services;
  const now = clock.now().getTime();
  let settled = 0;
  for (let back = Limits.room.cleanupRecoveryDays; back >= -1; back--) {
    const day = dayBucket(new Date(now - back * 86_400_000));
    let pending: PendingJoin[];
    try {
      pending = await stores.pendingJoins.inDay(day);
    } catch (err) {
      logger.error({ err, day }, 'could not read a day of pending joins; skipped until the next run');
      continue;
    }
    for (const listed of pending) {
      if (now - listed.listedAt.getTime() < Limits.room.joinCompletionGraceMs) continue;
      try {
        const room = await stores.rooms.byNameSerial(listed.roomName);
        const person = room?.participants.find((p) => p.login === listed.login);
        if (room && person) await completeJoin(services, room, chatUser(person), listed);
        else await dropNeverApplied(services, listed);
        settled += 1;
      } catch (err) {
        logger.error({ err, roomName: listed.roomName }, 'a join could not be completed; tried again on the next run');
      }
    }
  }
  return settled;
}
