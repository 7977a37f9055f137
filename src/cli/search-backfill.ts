/**
 * `npm run search:backfill`: gives search terms to the room messages posted
 * before search existed (cql/008), against the configured cluster (the same
 * environment as `npm start`). Safe beside running instances, and to run
 * again: it rewrites nothing already indexed, and yields to edits, deletions
 * and hides (src/resolvers/rooms/messages/search-backfill.ts).
 */
import { createStores } from '../db/stores.js';
import { backfillSearchTerms } from '../resolvers/rooms/messages/search-backfill.js';
import { runOperatorCommand } from './operator-command.js';

/** A progress line every this many pages (of Limits.room.search.backfillPageRows messages). */
const PAGES_PER_PROGRESS_LINE = 20;

await runOperatorCommand({
  name: 'search backfill',
  again: 'running it again is safe',
  run: async (db, logger) => {
    let pages = 0;
    const done = await backfillSearchTerms(createStores(db), (progress) => {
      if (++pages % PAGES_PER_PROGRESS_LINE === 0) logger.info(progress, 'search backfill in progress');
    });
    return `${done.scanned} messages read, ${done.indexed} given their search terms, ${done.changedMeanwhile} changed meanwhile (left to that change)`;
  },
});
