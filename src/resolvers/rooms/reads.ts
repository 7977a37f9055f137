/**
 * The rooms domain's per-request reads, each a DataLoader made on first use: one batch per kind of row and request
 * (or live event), nothing cached across them. A live event's are shared by every subscriber executing it
 * (contextForEvent), which is sound because each is keyed by what it reads, never by who asks.
 */
import DataLoader from 'dataloader';
import type { RoomRecord } from '../../db/rooms/rooms.js';
import type { MessageRecord } from '../../db/rooms/messages/message-row.js';
import type { ChatUser } from '../../db/rooms/chat-user.js';
import type { Context } from '../context.js';
import { timeTicksOf } from '../../timeuuids.js';
import { byKey, groupBy, perRequest } from '../shared/per-request.js';
import { distinctPeople } from './people.js';

/** The key of a room message in messageLoader and pollVotesLoader. */
export const roomMessageKey = (roomName: string, messageId: string) => `${roomName}\u0000${messageId}`;

export interface ViewerReactionsKey {
  message: MessageRecord;
  emojis: string[];
  login: string;
}

const ROOMS = Symbol('rooms');
const MESSAGES = Symbol('messages');
const READERS = Symbol('room readers');
const PEOPLE = Symbol('room people');
const MARKERS = Symbol('read markers');
const VIEWER_REACTIONS = Symbol('viewer reactions');
const POLL_VOTES = Symbol('poll votes');

/** Rooms by stored (lowercase, valid) name: callers pass names read from storage or validated. */
export function roomLoader(ctx: Context): DataLoader<string, RoomRecord | null> {
  return perRequest(ctx, ROOMS, ({ rooms }) => byKey((names: readonly string[]) => rooms.byNames(names), (room) => room.name));
}

/**
 * Room messages by roomMessageKey(room, id): those of one room are read together, one query per day bucket
 * (replies' parents on a thread page), and the rooms side by side (the last-read messages of a room list).
 */
export function messageLoader(ctx: Context): DataLoader<string, MessageRecord | null> {
  return perRequest(
    ctx,
    MESSAGES,
    ({ roomMessages }) =>
      new DataLoader<string, MessageRecord | null>(
        async (keys) => {
          const byRoom = groupBy(keys, (key) => key.split('\u0000') as [string, string]);
          const found = new Map<string, MessageRecord>();
          await Promise.all(
            [...byRoom].map(async ([room, ids]) => {
              for (const [id, message] of await roomMessages.byIds(room, ids)) found.set(roomMessageKey(room, id), message);
            }),
          );
          return keys.map((key) => found.get(key) ?? null);
        },
        { maxBatchSize: 100 },
      ),
  );
}

/**
 * Every participant's read marker in a room, by login, as its time in ticks (100 ns): one read per room for a
 * whole page of seenBy, and each marker parsed once.
 */
export function roomReadersLoader(ctx: Context): DataLoader<string, Map<string, bigint>> {
  const ticksOf = (markers: Map<string, string>) => new Map([...markers].map(([login, id]) => [login, timeTicksOf(id)]));
  return perRequest(ctx, READERS, ({ readState }) => new DataLoader((rooms: readonly string[]) => Promise.all(rooms.map(async (room) => ticksOf(await readState.readersOf(room))))));
}

/** A room's participants, one entry per login in login order (distinctPeople), worked out once per request. */
export function roomPeopleLoader(ctx: Context): DataLoader<string, ChatUser[]> {
  return perRequest(
    ctx,
    PEOPLE,
    () =>
      new DataLoader(async (names: readonly string[]) =>
        (await roomLoader(ctx).loadMany(names)).map((room) => (room && !(room instanceof Error) ? distinctPeople(room.participants) : [])),
      ),
  );
}

/** A user's read markers in every room, by room name: one read for a whole room list. */
export function readMarkersLoader(ctx: Context): DataLoader<string, Map<string, string | null>> {
  return perRequest(ctx, MARKERS, ({ readState }) => new DataLoader((logins: readonly string[]) => Promise.all(logins.map((login) => readState.markers(login)))));
}

/** Which of a message's emoji a user reacted with: one read per message and request. */
export function viewerReactionsLoader(ctx: Context): DataLoader<ViewerReactionsKey, Set<string>, string> {
  return perRequest(
    ctx,
    VIEWER_REACTIONS,
    ({ reactions }) =>
      new DataLoader((keys: readonly ViewerReactionsKey[]) => Promise.all(keys.map((k) => reactions.mine(k.message, k.emojis, k.login))), {
        cacheKeyFn: (k) => `${roomMessageKey(k.message.roomName, k.message.messageId)}\u0000${k.login}`,
      }),
  );
}

/**
 * Every vote of a poll by roomMessageKey(room, id), each voter's answers by login: one read of the votes partition
 * gives the counts and every viewer's own answers. A vote or retraction clears its poll's key.
 */
export function pollVotesLoader(ctx: Context): DataLoader<string, Map<string, number[]>> {
  return perRequest(
    ctx,
    POLL_VOTES,
    ({ pollVotes }) =>
      new DataLoader((keys: readonly string[]) =>
        Promise.all(
          keys.map((key) => {
            const [room, id] = key.split('\u0000') as [string, string];
            return pollVotes.votes(room, id);
          }),
        ),
      ),
  );
}
