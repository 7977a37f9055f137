/**
 * The room_readers backfill: copies the read markers written before
 * cql/017 into room_readers, the copy by room that Message.seenBy reads, so
 * those readers show there as the rest do. It reads every marker
 * (room_read_markers) once in token order and writes each one's copy USING
 * TIMESTAMP of the marker's own write, as the live path does
 * (src/db/rooms/read-state.ts): a marker that moves while the backfill runs
 * has its newer copy written at its newer write time, which the backfill's
 * older copy can never overwrite, whichever lands last. After each page it
 * records the token where it got to, so a run that stops midway is resumed
 * from there; a run that reaches the end clears it. Running it again, or
 * twice at once, writes the same cells at the same timestamps: nothing
 * changes.
 *
 * A marker of a deleted room whose cleanup is pending is copied too, below
 * the deletion's time: the cleanup's delete of the room's copies, stamped at
 * the deletion, shadows it.
 */
import { FIRST_TOKEN, type PartitionToken, type ReadersBackfillStore } from '../../db/rooms/readers-backfill.js';
import { eachAtOnce } from '../shared/each-at-once.js';
import { Limits } from '../../limits.js';

const { pageRows, writesAtOnce } = Limits.room.readersBackfill;

export interface ReadersBackfillProgress {
  /** Where this run started: null from the beginning, else the token an interrupted run recorded. */
  resumedFrom: string | null;
  /** Markers read (and copied). */
  copied: number;
  /** Pages done (each recorded as progress). */
  pages: number;
  /** The token last recorded: where a run that stops now is resumed (null: none recorded yet). */
  reached: string | null;
}

export interface ReadersBackfillOptions {
  /** Markers per page: Limits.room.readersBackfill.pageRows unless given. */
  pageRows?: number;
  /** Told after each page is copied and recorded. */
  onPage?: (progress: ReadersBackfillProgress) => void;
}

export async function backfillRoomReaders(
  stores: { readersBackfill: ReadersBackfillStore },
  options: ReadersBackfillOptions = {},
): Promise<ReadersBackfillProgress> {
  const store = stores.readersBackfill;
  const resumeAt: PartitionToken | null = await store.resumeToken();
  const progress: ReadersBackfillProgress = { resumedFrom: resumeAt?.toString() ?? null, copied: 0, pages: 0, reached: null };
  for await (const page of store.pages(resumeAt ?? FIRST_TOKEN, options.pageRows ?? pageRows)) {
    await eachAtOnce(page.markers, writesAtOnce, (marker) => store.copy(marker));
    // The last partition of the page may go on in the next page: a run resumed from here reads it again whole.
    if (page.lastToken) {
      await store.saveProgress(page.lastToken);
      progress.reached = page.lastToken.toString();
    }
    progress.copied += page.markers.length;
    progress.pages += 1;
    options.onPage?.({ ...progress });
  }
  await store.clearProgress();
  return progress;
}
