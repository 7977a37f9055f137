/**
 * The viewer's rooms with their unread and mention badges, read from the
 * server's read state (exact counts, never counted here). Every room's feed is
 * followed, so a message in a room in the background brings its badge up to
 * date; opening the room marks it read and clears it.
 */
import { useCallback, useEffect, useRef } from 'react';
import { useQuery } from 'urql';
import type { Api } from './api.js';
import { MyRooms, RoomEvents } from './operations.js';

/** Fired when the viewer's read state changed here (a room marked read): the badges are read again. */
export const READ_STATE_CHANGED = 'parley:read-state';

export function RoomList({ api, openRoom, onOpen }: { api: Api; openRoom: string | null; onOpen: (room: string) => void }) {
  const [result, reexecute] = useQuery({ query: MyRooms, requestPolicy: 'network-only' });
  const rooms = result.data?.me?.chatRooms ?? [];
  const pending = useRef<ReturnType<typeof setTimeout>>(undefined);
  // Bursts of messages read the badges once.
  const refresh = useCallback(() => {
    clearTimeout(pending.current);
    pending.current = setTimeout(() => reexecute({ requestPolicy: 'network-only' }), 150);
  }, [reexecute]);

  useEffect(() => {
    window.addEventListener(READ_STATE_CHANGED, refresh);
    return () => window.removeEventListener(READ_STATE_CHANGED, refresh);
  }, [refresh]);

  const names = rooms.map((r) => r.name).join(',');
  useEffect(() => {
    const stops = names
      .split(',')
      .filter(Boolean)
      .map((roomName) =>
        api.follow(RoomEvents, () => ({ roomName, after: null }), (data) => {
          if (data.roomEvents.__typename === 'MessagePosted') refresh();
        }),
      );
    return () => stops.forEach((stop) => stop());
  }, [api, names, refresh]);

  return (
    <nav className="rooms">
      <h2>Rooms</h2>
      {result.error && <p className="error">{result.error.message}</p>}
      {rooms.map((room) => (
        <button key={room.id} className={room.name === openRoom ? 'room open' : 'room'} onClick={() => onOpen(room.name)} data-testid={`room-${room.name}`}>
          <span className="name">#{room.name}</span>
          {room.readState.mentionCount > 0 && (
            <span className="badge mention" data-testid={`mentions-${room.name}`}>
              @{room.readState.mentionCount}
            </span>
          )}
          {room.readState.unreadCount > 0 && (
            <span className="badge" data-testid={`unread-${room.name}`}>
              {room.readState.unreadCount}
              {room.readState.unreadCapped ? '+' : ''}
            </span>
          )}
        </button>
      ))}
    </nav>
  );
}
