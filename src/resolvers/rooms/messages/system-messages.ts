/**
 * The server's own messages in a room ("… joins the room", "… was removed"),
 * and when any message is posted.
 */
import type { Services } from '../../services.js';
import { newMessage } from '../model.js';
import type { RoomIncarnation } from '../../../db/rooms/messages/room-messages.js';
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { RoomEvent } from '../live/feed.js';
import type { ChatUser } from '../../../db/rooms/chat-user.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';

/**
 * When a message is posted: now, but never before its room was created, so a
 * server whose clock lags cannot post below the room's history floor.
 */
export function postTime(services: Services, room: RoomIncarnation): Date {
  const now = services.clock.now();
  return now < room.createdAt ? room.createdAt : now;
}

/** Posts a system message ("... leaves the room") and publishes `before` and the message, in that order. */
export async function postSystemMessage(
  services: Services,
  room: RoomRecord,
  person: ChatUser,
  text: string,
  before: RoomEvent,
): Promise<MessageRecord> {
  const at = postTime(services, room);
  const turn = services.rooms.sequencer.take(room);
  const message = newMessage(room, at, person, text, true);
  try {
    await services.stores.roomMessages.insert(room, message);
  } catch (err) {
    turn.cancel();
    await services.rooms.sequencer.take(room).publish([before]);
    throw err;
  }
  await turn.publish([before, { kind: 'MessagePosted', roomName: room.name, message }]);
  return message;
}

