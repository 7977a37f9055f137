/**
 * Who has seen a room message: the participants (its author aside) whose read
 * marker is at or past it. It comes from the markers' copy by room
 * (room_readers): one read per room and request, whatever the page of
 * messages or the number of participants, and no write per message per
 * reader. RoomReadUpdated tells a room's subscribers, coalesced, whose
 * markers moved, so a client reads seenBy again for what it shows.
 */
import type { Context } from '../context.js';
import type { MessageRecord } from '../../db/rooms/messages/message-row.js';
import type { UserRecord } from '../../db/accounts/users.js';
import type { RoomHead } from '../../db/rooms/rooms.js';
import { forbidden } from '../../errors.js';
import { timeTicksOf } from '../../timeuuids.js';
import { connection, decodeCursor, encodeCursor, type Connection } from '../../pagination.js';
import { pageSize } from '../../validation.js';
import { isPossibleLogin } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { isParticipant } from './access/access.js';
import { personAsUser } from './people.js';
import { roomLoader, roomPeopleLoader, roomReadersLoader } from './reads.js';
import { userLoader } from '../accounts/reads.js';
import { carries } from './live/feed.js';

export interface SeenBy extends Connection<UserRecord> {
  /** Everyone who has seen it, not just this page. */
  count: number;
}

const encodeSeenByCursor = (u: UserRecord) => encodeCursor({ l: u.login });

/** Those who have seen the message, in login order, a page at a time. Participants and the author only. */
export async function seenBy(ctx: Context, message: MessageRecord, first: number | null | undefined, after: string | null | undefined): Promise<SeenBy> {
  const viewer = requireViewer(ctx);
  const size = pageSize('first', first);
  const from = after ? decodeCursor('after', after, (p): p is { l: string } => typeof p.l === 'string' && isPossibleLogin(p.l)).l : null;
  const room = await roomLoader(ctx).load(message.roomName);
  if (!room || (!isParticipant(room, viewer.login) && message.author.login !== viewer.login)) {
    throw forbidden('Only participants see who has read the messages of a room');
  }
  const [readers, people] = await Promise.all([roomReadersLoader(ctx).load(room.name), roomPeopleLoader(ctx).load(room.name)]);
  // A marker of this incarnation of the room (not one left by a room of the same name deleted before) at or past the message.
  const seenFrom = timeTicksOf(message.messageId);
  const createdAt = BigInt(room.createdAt.getTime()) * 10_000n;
  const seen = people.filter((p) => {
    const marker = readers.get(p.login);
    return p.login !== message.author.login && marker !== undefined && marker >= createdAt && marker >= seenFrom;
  });
  // The order distinctPeople gives (localeCompare): the cursor's login, then those after it.
  const start = from === null ? 0 : seen.findIndex((p) => p.login.localeCompare(from) > 0);
  const rest = start < 0 ? [] : seen.slice(start);
  const page = rest.slice(0, size).map((p) => personAsUser(ctx, p));
  return { ...connection(page, encodeSeenByCursor, { hasNextPage: rest.length > size }), count: seen.length };
}

/** Someone's marker moved in this room: its subscribers hear it once per window, with every reader who moved in it. */
export function readMarkerMoved(ctx: Context, room: RoomHead, login: string): void {
  const { rooms } = ctx.services;
  // A feed that carries no read-state events (a livestream's): nothing to gather.
  if (!carries(room.kind, 'RoomReadUpdated')) return;
  const roomName = room.name;
  rooms.coalescedEvents.add(`reads\u0000${roomName}`, login, async (readers) => {
    await rooms.sequencer.take(room).publish([{ kind: 'RoomReadUpdated', roomName, readers }]);
  });
}

/** The users a RoomReadUpdated names (one who has since closed their account is left out). */
export async function movedReaders(ctx: Context, logins: string[]): Promise<UserRecord[]> {
  const users = await userLoader(ctx).loadMany(logins);
  return users.filter((u): u is UserRecord => !!u && !(u instanceof Error));
}
