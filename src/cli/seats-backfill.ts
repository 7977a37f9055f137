/**
 * `npm run seats:backfill`: seats the participants of rooms written before seats (cql/030_room_seats.cql), so the
 * participant cap holds by the join's LWT in every room, against the configured cluster (the same environment as
 * `npm start`). Safe beside running instances, and to run again; a run that stopped midway is resumed where it got
 * to (src/resolvers/rooms/seats-backfill.ts).
 */
import { RoomStore } from '../db/rooms/rooms.js';
import { SeatsBackfillStore } from '../db/rooms/seats-backfill.js';
import { backfillSeats } from '../resolvers/rooms/seats-backfill.js';
import { runOperatorCommand } from './operator-command.js';

/** A progress line every this many pages (of Limits.room.seatsBackfill.pageRows rooms). */
const PAGES_PER_PROGRESS_LINE = 20;

await runOperatorCommand({
  name: 'seats backfill',
  again: 'running it again resumes where it stopped',
  run: async (db, logger) => {
    const done = await backfillSeats(
      { seatsBackfill: new SeatsBackfillStore(db), rooms: new RoomStore(db) },
      { onPage: (progress) => progress.pages % PAGES_PER_PROGRESS_LINE === 0 && logger.info(progress, 'seats backfill in progress') },
    );
    const from = done.resumedFrom === null ? 'from the start' : `resumed at token ${done.resumedFrom}`;
    return `${done.rooms} rooms read, ${done.seated} seated, ${done.leftToJoins} changing at every try (left to their next join), ${from}`;
  },
});
