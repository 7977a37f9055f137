/**
 * A room's seats (cql/030_room_seats.cql): how the participant cap holds exactly under racing joins. Each participant
 * holds one numbered seat below the cap; a join takes a free one in the LWT that adds the participant, asking it to be
 * free (a set's size cannot be an LWT condition; one map element can). Every way out of a room frees the leaver's
 * seat in the LWT that takes them out, asking it to be the one read, so a seat freed twice never frees another's.
 *
 * Here: the CQL fragments the statements of rooms.ts and moderation.ts are made of, what each binds, and the seating
 * of a row written before seats (every participant given one, in one LWT: rooms.ts `seat`).
 */
import { randomInt } from 'node:crypto';
import { Limits } from '../../limits.js';

/** Seats are numbered from 0; a join takes one below this. */
const CAP = Limits.room.maxParticipants;

/** The seats a room has: one per participant it may hold. */
export interface SeatsOf {
  /** login → seat number, as stored (seat_of); `seats` holds the same pairs read the other way. */
  seatOf: Map<string, number>;
}

/** A room's seats and the participants who should hold them. */
export interface SeatedRoom extends SeatsOf {
  participants: ReadonlyArray<{ login: string }>;
}

/** A join's change: the joiner takes seat k. Binds takeSeat(k, login). */
export const TAKE_SEAT = 'seats[?] = ?, seat_of[?] = ?';
export const takeSeat = (seat: number, login: string): unknown[] => [seat, login, login, seat];

/** A join's condition: seat k is free, and the joiner holds none (two joins of one person take one seat). */
export const IF_SEAT_FREE = 'seats[?] = null AND seat_of[?] = null';
export const ifSeatFree = (seat: number, login: string): unknown[] => [seat, login];

/** A way out's change: the leaver's seat, as read, is freed (none read: nothing but seat_of's absent key). */
export const FREE_SEAT = 'seats = seats - ?, seat_of = seat_of - ?';
export function freeSeatOf(room: SeatsOf, ...logins: string[]): unknown[] {
  const seats = logins.map((login) => room.seatOf.get(login)).filter((seat): seat is number => seat !== undefined);
  // A map's keys to discard bind as a list.
  return [seats, logins];
}

/** A way out's condition: the leaver's seat is still the one read (null: still none). */
export const IF_SEAT_AS_READ = 'seat_of[?] = ?';
export const ifSeatAsRead = (room: SeatsOf, login: string): unknown[] => [login, room.seatOf.get(login) ?? null];

/**
 * Whether every participant holds a seat and every seat a participant (a row written before seats does not), and no
 * seat at or above the cap is held while one below it is free (a room past the cap from before seats, which has lost
 * people since: seating moves those holders down before anyone joins, so a join never takes a seat beside them).
 */
export function seatsInOrder(room: SeatedRoom): boolean {
  const logins = new Set(room.participants.map((p) => p.login));
  if (logins.size !== room.seatOf.size || ![...logins].every((login) => room.seatOf.has(login))) return false;
  const seats = [...room.seatOf.values()];
  return seats.every((seat) => seat < CAP) || seats.filter((seat) => seat < CAP).length === CAP;
}

/** A free seat below the cap, at random (so racing joins seldom ask for the same one); null when none is free. */
export function freeSeat(room: SeatsOf): number | null {
  if (room.seatOf.size >= CAP) return null;
  const taken = new Set(room.seatOf.values());
  const free: number[] = [];
  for (let seat = 0; seat < CAP; seat++) if (!taken.has(seat)) free.push(seat);
  return free.length === 0 ? null : free[randomInt(free.length)]!;
}

/**
 * Every participant seated, as one whole assignment: a participant keeps a seat below the cap, a seat of someone who
 * does not take part (left by an instance without seats) is freed, and each participant without one (or holding one
 * at or above the cap) takes the lowest free number. A room past the cap from before seats has seats numbered from the
 * cap up, moved down as people leave: nobody joins it until it holds fewer than the cap.
 */
export function seating(room: SeatedRoom): { seats: Record<number, string>; seatOf: Record<string, number> } {
  const logins = [...new Set(room.participants.map((p) => p.login))].sort();
  const kept = new Map<string, number>();
  const taken = new Set<number>();
  for (const login of logins) {
    const seat = room.seatOf.get(login);
    // Two people on one seat would be a fault of a writer: the first keeps it, the other is seated anew.
    if (seat === undefined || seat >= CAP || taken.has(seat)) continue;
    kept.set(login, seat);
    taken.add(seat);
  }
  let next = 0;
  for (const login of logins) {
    if (kept.has(login)) continue;
    while (taken.has(next)) next++;
    kept.set(login, next);
    taken.add(next);
  }
  const seats: Record<number, string> = {};
  const seatOf: Record<string, number> = {};
  for (const [login, seat] of kept) {
    seats[seat] = login;
    seatOf[login] = seat;
  }
  return { seats, seatOf };
}
