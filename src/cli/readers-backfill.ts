/**
 * `npm run readers:backfill`: copies the read markers written before
 * cql/017 into room_readers, so Message.seenBy lists those readers, against
 * the configured cluster (the same environment as `npm start`). Safe beside
 * running instances, and to run again; a run that stopped midway is resumed
 * where it got to (src/resolvers/rooms/readers-backfill.ts).
 */
import { ReadersBackfillStore } from '../db/rooms/readers-backfill.js';
import { backfillRoomReaders } from '../resolvers/rooms/readers-backfill.js';
import { runOperatorCommand } from './operator-command.js';

/** A progress line every this many pages (of Limits.room.readersBackfill.pageRows markers). */
const PAGES_PER_PROGRESS_LINE = 20;

await runOperatorCommand({
  name: 'readers backfill',
  again: 'running it again resumes where it stopped',
  run: async (db, logger) => {
    const done = await backfillRoomReaders(
      { readersBackfill: new ReadersBackfillStore(db) },
      { onPage: (progress) => progress.pages % PAGES_PER_PROGRESS_LINE === 0 && logger.info(progress, 'readers backfill in progress') },
    );
    const from = done.resumedFrom === null ? 'from the start' : `resumed at token ${done.resumedFrom}`;
    return `${done.copied} read markers copied to room_readers, ${from}`;
  },
});
