/**
 * The seats backfill (`npm run seats:backfill`): gives every participant of a room written before seats
 * (cql/030_room_seats.cql) a seat, so the participant cap holds by the join's LWT in every room. It reads every room
 * name once in token order; each room whose seats are not in order (a participant without one, a seat without its
 * participant) is read at SERIAL and seated by one LWT asking its seats to be those read. A room that
 * changed meanwhile is read again and seated again, up to SEAT_ROUNDS times; past them it is left (and counted) to the
 * next join into it, which seats it the same way. After each page it records the token it got to, so a run that stops
 * midway is resumed from there; a run that reaches the end clears it. Running it again, or beside itself, seats
 * nothing twice: a room in order is left as it is.
 */
import { FIRST_TOKEN, type PartitionToken } from '../../db/cassandra/backfill-progress.js';
import type { RoomStore } from '../../db/rooms/rooms.js';
import type { SeatsBackfillStore } from '../../db/rooms/seats-backfill.js';
import { seatsInOrder } from '../../db/rooms/seats.js';
import { eachAtOnce } from '../shared/each-at-once.js';
import { Limits } from '../../limits.js';

const { pageRows, writesAtOnce } = Limits.room.seatsBackfill;

/** Seatings of one room that found it changed since its read, before it is left to its next join. */
const SEAT_ROUNDS = 10;

export interface SeatsBackfillProgress {
  /** Where this run started: null from the beginning, else the token an interrupted run recorded. */
  resumedFrom: string | null;
  /** Rooms read. */
  rooms: number;
  /** Rooms this run seated. */
  seated: number;
  /** Rooms that changed at every try: left to their next join. */
  leftToJoins: number;
  /** Pages done (each recorded as progress). */
  pages: number;
}

export interface SeatsBackfillOptions {
  /** Rooms per page: Limits.room.seatsBackfill.pageRows unless given. */
  pageRows?: number;
  /** Told after each page is seated and recorded. */
  onPage?: (progress: SeatsBackfillProgress) => void;
}

export async function backfillSeats(stores: { seatsBackfill: SeatsBackfillStore; rooms: RoomStore }, options: SeatsBackfillOptions = {}): Promise<SeatsBackfillProgress> {
  const { progress: recorded } = stores.seatsBackfill;
  const resumeAt: PartitionToken | null = await recorded.resumeToken();
  const progress: SeatsBackfillProgress = { resumedFrom: resumeAt?.toString() ?? null, rooms: 0, seated: 0, leftToJoins: 0, pages: 0 };
  for await (const page of stores.seatsBackfill.pages(resumeAt ?? FIRST_TOKEN, options.pageRows ?? pageRows)) {
    await eachAtOnce(page.names, writesAtOnce, async (name) => {
      const outcome = await seatRoom(stores.rooms, name);
      if (outcome === 'seated') progress.seated += 1;
      if (outcome === 'changing') progress.leftToJoins += 1;
    });
    if (page.lastToken) await recorded.save(page.lastToken);
    progress.rooms += page.names.length;
    progress.pages += 1;
    options.onPage?.({ ...progress });
  }
  await recorded.clear();
  return progress;
}

/** Seats the room until a read finds it in order: a seating can race a leave of someone it seated, read again. */
async function seatRoom(rooms: RoomStore, name: string): Promise<'in order' | 'seated' | 'changing'> {
  let seated = false;
  for (let round = 1; round <= SEAT_ROUNDS; round++) {
    const room = await rooms.byNameSerial(name);
    if (!room || seatsInOrder(room)) return seated ? 'seated' : 'in order';
    seated = (await rooms.seat(room)) || seated;
  }
  return 'changing';
}
