/**
 * The search backfill: gives search terms to the messages posted before
 * search existed (cql/008), so search finds them as it finds the rest. It
 * reads every room message once and writes the terms of each visible,
 * undeleted, non-system message that has none, with an LWT that applies only
 * if the message is still the version read: an edit, a deletion or a hide
 * landing meanwhile wins. Messages of a room that is gone (its cleanup may
 * be pending) or was made again since are left alone: their rows are about
 * to be erased, and a write after the deletion would outlive the cleanup's
 * deletes. Running it again (after a failure, or twice at once) rewrites
 * nothing already indexed.
 */
import type { UnindexedCandidate } from '../../../db/rooms/messages/search-backfill.js';
import type { RoomStore } from '../../../db/rooms/rooms.js';
import type { Stores } from '../../../db/stores.js';
import { eachAtOnce } from '../../shared/each-at-once.js';
import { timeUuidMs } from '../../../timeuuids.js';
import { Limits } from '../../../limits.js';
import { messageTerms } from './search-terms.js';

const { backfillPageRows, backfillWritesAtOnce } = Limits.room.search;

export interface BackfillProgress {
  /** Messages read. */
  scanned: number;
  /** Messages given their terms. */
  indexed: number;
  /** Messages an edit, a deletion or a hide changed between the read and the write (left to it). */
  changedMeanwhile: number;
}

/** The terms a message should get, or none when it needs nothing (indexed, not searchable, or without words). */
function termsToWrite(m: UnindexedCandidate): string[] {
  if (m.indexed || !m.whole || m.systemMessage || m.deleted || m.hidden || !m.content) return [];
  return messageTerms(m.content, false);
}

/** Whether the message belongs to the room of its name as it stands now, by room (read once per run). */
function currentRooms(rooms: RoomStore): (m: UnindexedCandidate) => Promise<boolean> {
  const createdAt = new Map<string, Promise<Date | undefined>>();
  return async (m) => {
    let created = createdAt.get(m.roomName);
    if (!created) createdAt.set(m.roomName, (created = rooms.byName(m.roomName).then((room) => room?.createdAt)));
    const at = await created;
    return at !== undefined && timeUuidMs(m.messageId) >= at.getTime();
  };
}

export async function backfillSearchTerms(
  stores: Pick<Stores, 'searchBackfill' | 'rooms'>,
  onPage: (progress: BackfillProgress) => void = () => {},
): Promise<BackfillProgress> {
  const store = stores.searchBackfill;
  const progress: BackfillProgress = { scanned: 0, indexed: 0, changedMeanwhile: 0 };
  const inCurrentRoom = currentRooms(stores.rooms);
  for await (const page of store.pages(backfillPageRows)) {
    progress.scanned += page.length;
    const work = page.map((m) => ({ m, terms: termsToWrite(m) })).filter((w) => w.terms.length > 0);
    await eachAtOnce(work, backfillWritesAtOnce, async ({ m, terms }) => {
      if (!(await inCurrentRoom(m))) return;
      if (await store.index(m, terms)) progress.indexed += 1;
      else progress.changedMeanwhile += 1;
    });
    onPage({ ...progress });
  }
  return progress;
}
