/**
 * Writes a large room history straight through the message store (the same
 * code path postMessage ends in), many writes in flight at once: posting
 * 10,000 messages over HTTP would only measure HTTP. Reading is left to the API.
 */
import type { App } from '../../../src/app.js';
import { newMessage } from '../../../src/resolvers/rooms/model.js';
import type { RoomIncarnation } from '../../../src/db/rooms/messages/room-messages.js';
import type { ChatUser } from '../../../src/db/rooms/chat-user.js';
import type { MessageRecord } from '../../../src/db/rooms/messages/message-row.js';

export async function seedHistory(
  app: App,
  room: RoomIncarnation,
  author: ChatUser,
  times: Date[],
  { inFlight = 64, contentOf = (_at: Date, i: number) => `seed ${i}` } = {},
): Promise<MessageRecord[]> {
  const sorted = [...times].sort((a, b) => a.getTime() - b.getTime());
  // newMessage, as a post makes it: content, search terms and all.
  const messages = sorted.map((at, i) => newMessage(room, at, author, contentOf(at, i), false));
  let next = 0;
  const worker = async () => {
    while (next < messages.length) {
      const m = messages[next++]!;
      await app.services.stores.roomMessages.insert(room, m);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return messages;
}

/** `count` instants spread evenly over `days` days from `start`, leaving out the days `skip` says to. */
export function spreadOverDays(start: Date, days: number, count: number, skip: (day: number) => boolean = () => false): Date[] {
  const usable = Array.from({ length: days }, (_, d) => d).filter((d) => !skip(d));
  const DAY = 86_400_000;
  return Array.from({ length: count }, (_, i) => {
    const day = usable[i % usable.length]!;
    const within = Math.floor(i / usable.length) * 7_000; // 7 s apart inside a day
    return new Date(start.getTime() + day * DAY + 3_600_000 + within);
  });
}
