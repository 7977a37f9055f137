/**
 * A change of a room's membership (a join, a leave, a removal, a ban) is whole with its system message ("…
 * joins the room") and, for a join, the newcomer's read marker at it. The change is a write to the room's row
 * (an LWT or a batch); those are writes to other partitions after it, and the request can die or lose its node
 * in between. So the change is listed in pending_room_notices (cql/016) before its write, the message's id is
 * claimed there before the message is written, and the entry goes once all is written. completeNotice does that
 * last part, for the request and for the job alike; the job (finishPendingNotices) takes the entries a request
 * left, once no request can still be working on them, and settles each against the room as it is now: the change
 * applied, it is completed; it did not, the entry is dropped (and a join's entry in the user's list, which the
 * request added first, taken back).
 */
import type { Services } from '../services.js';
import type { RoomRecord } from '../../db/rooms/rooms.js';
import type { NoticeKind, PendingNotice } from '../../db/rooms/pending-notices.js';
import { dayBucket } from '../../buckets.js';
import { Limits } from '../../limits.js';
import { newTimeUuid, timeUuidDate } from '../../timeuuids.js';
import { nextWriteTimestamp } from '../../db/cassandra/write-timestamp.js';
import { chatUser, newMessage } from './model.js';
import type { RoomEvent } from './live/feed.js';
import { postTime } from './messages/system-messages.js';
import { readUpToJoin } from './read-state.js';
import { settleListedByDay } from '../shared/pending-by-day.js';
import type { ChatUser } from '../../db/rooms/chat-user.js';

/**
 * Puts the room on the user's list and lists `login`'s join of `roomName`, both before its LWT: the list's entry
 * first (a deletion that commits after the join sees the new participant and removes it; one lost to the
 * deletion is taken back by the request, or by the job), at a timestamp the listing keeps.
 */
export async function listJoin(services: Services, roomName: string, login: string): Promise<PendingNotice> {
  const listEntryAt = nextWriteTimestamp(services.db);
  await services.stores.rooms.addToUser(login, roomName, listEntryAt);
  return listNotice(services, { roomName, login, kind: 'join', listEntryAt });
}

/** Lists a leave, a removal or a ban (`byLogin`: the moderator's) before its write. */
export async function listNotice(
  services: Services,
  change: { roomName: string; login: string; kind: NoticeKind; listEntryAt?: PendingNotice['listEntryAt']; byLogin?: string },
): Promise<PendingNotice> {
  const listed: PendingNotice = {
    roomName: change.roomName,
    login: change.login,
    kind: change.kind,
    listedAt: services.clock.now(),
    messageId: null,
    listEntryAt: change.listEntryAt ?? null,
    byLogin: change.byLogin ?? null,
  };
  await services.stores.pendingNotices.add(listed);
  return listed;
}

/** The change did not apply: nothing to complete. */
export async function dropNotice(services: Services, listed: PendingNotice): Promise<void> {
  await services.stores.pendingNotices.remove(listed);
}

/** The system message of a change, and the events it is published with. */
function noticeOf(roomName: string, kind: NoticeKind, person: ChatUser, by: ChatUser | null): { text: string; events: RoomEvent[] } {
  const name = `${person.firstname} ${person.lastname}`;
  switch (kind) {
    case 'join':
      return { text: `${name} joins the room`, events: [{ kind: 'ParticipantJoined', roomName, user: person }] };
    case 'leave':
      return { text: `${name} leaves the room`, events: [{ kind: 'ParticipantLeft', roomName, user: person }] };
    case 'removal':
    case 'ban': {
      const banned = kind === 'ban';
      const text = `${name} was ${banned ? 'banned from' : 'removed from'} the room`;
      return { text, events: [{ kind: 'ParticipantRemoved', roomName, user: person, by: by ?? person, banned }] };
    }
  }
}

/**
 * Writes what follows the change `listed` (applied) of `person` in `room`: the system message, unless the one
 * recorded is stored already, and for a join the read marker at it; then unlists it. Of two at it at once (the
 * request and a job, or two jobs), one writes the message: the one whose claim of the entry holds.
 */
export async function completeNotice(services: Services, room: RoomRecord, person: ChatUser, listed: PendingNotice, by: ChatUser | null = null): Promise<void> {
  const { stores } = services;
  let messageId = listed.messageId;
  // A livestream's watchers come and go without a system message. A join publishes nothing, and the newcomer's marker
  // is the join's time; a leave is published for the leaver's own feed to end (the others' feeds skip it).
  if (room.kind === 'LIVESTREAM' && (listed.kind === 'join' || listed.kind === 'leave')) {
    if (listed.kind === 'join') await readUpToJoin(services, room, person.login, newTimeUuid(listed.listedAt < room.createdAt ? room.createdAt : listed.listedAt).toString());
    else await services.rooms.sequencer.take(room).publish(noticeOf(room.name, 'leave', person, by).events);
    await stores.pendingNotices.remove(listed);
    return;
  }
  if (!messageId || !(await stores.roomMessages.byKey(room.name, dayBucket(timeUuidDate(messageId)), messageId))) {
    const { text, events } = noticeOf(room.name, listed.kind, person, by);
    const turn = services.rooms.sequencer.take(room);
    const message = newMessage(room, postTime(services, room), person, text, true);
    let claimed: boolean;
    try {
      claimed = await stores.pendingNotices.claimMessage(listed, message.messageId);
      if (claimed) await stores.roomMessages.insert(room, message);
    } catch (err) {
      turn.cancel();
      throw err;
    }
    if (!claimed) {
      turn.cancel();
      return; // another is completing it
    }
    await turn.publish([...events, { kind: 'MessagePosted', roomName: room.name, message }]);
    messageId = message.messageId;
  }
  // A newcomer has read everything up to their join: history before it is not "unread".
  if (listed.kind === 'join') await readUpToJoin(services, room, person.login, messageId);
  await stores.pendingNotices.remove(listed);
}

/** Whether the change `listed` shows in the room as it is now. */
function applied(room: RoomRecord | undefined, listed: PendingNotice): boolean {
  const participates = room?.participants.some((p) => p.login === listed.login) ?? false;
  switch (listed.kind) {
    case 'join':
      return participates;
    case 'leave':
    case 'removal':
      return room !== undefined && !participates;
    case 'ban':
      return room?.banned.has(listed.login) ?? false;
  }
}

/** A person as the room or, gone from it, their account shows them. */
async function personOf(services: Services, room: RoomRecord, login: string): Promise<ChatUser | undefined> {
  const inRoom = room.participants.find((p) => p.login === login);
  if (inRoom) return chatUser(inRoom);
  const user = await services.stores.users.byLogin(login);
  return user && chatUser(user);
}

/**
 * Completes the changes that requests listed and left unfinished: each entry older than the grace (no request
 * still works on it), settled against the room as it is now, read at SERIAL. Returns how many it settled.
 */
export function finishPendingNotices(services: Services): Promise<number> {
  const { stores } = services;
  return settleListedByDay<PendingNotice>(services, {
    what: 'room notices',
    inDay: (day) => stores.pendingNotices.inDay(day),
    listedAtMs: (listed) => listed.listedAt.getTime(),
    graceMs: Limits.room.noticeCompletionGraceMs,
    settle: async (listed) => {
      const room = await stores.rooms.byNameSerial(listed.roomName);
      const person = room && applied(room, listed) ? await personOf(services, room, listed.login) : undefined;
      if (room && person) {
        const by = listed.byLogin ? ((await personOf(services, room, listed.byLogin)) ?? null) : null;
        await completeNotice(services, room, person, listed, by);
        return;
      }
      // Never applied (or undone since). A join's entry in the user's list goes at the timestamp it was added
      // with, so a later join, which adds it again, keeps it.
      if (listed.kind === 'join' && listed.listEntryAt) await stores.rooms.removeFromUsers([listed.login], listed.roomName, listed.listEntryAt);
      await dropNotice(services, listed);
    },
    describe: (listed) => ({ roomName: listed.roomName, kind: listed.kind }),
  });
}
