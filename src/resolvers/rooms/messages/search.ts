/**
 * Search within a room, for its participants: the messages holding every term
 * of the query (search-terms.ts says what a term is), newest first. A page
 * reads at most Limits.room.search.bucketsPerPage days of the room: one that
 * reaches the bound before it is full still answers, with what it found,
 * hasNextPage and an endCursor below the last day it read (even with no
 * edges), so a rare term is found page by page at a bounded cost each.
 */
import type { Context } from '../../context.js';

import { connection, decodeSearchCursor, encodeSearchCursor, type Connection } from '../../../pagination.js';
import { pageSize } from '../../../validation.js';
import { requireViewer } from '../../shared/guards.js';
import { requireParticipation } from '../access/access.js';
import { validRoomName } from '../validation.js';
import { queryTerms } from './search-terms.js';
import type { MessageRecord } from '../../../db/rooms/messages/message-row.js';

export interface SearchArgs {
  roomName: string;
  query: string;
  first?: number | null;
  after?: string | null;
}

/**
 * Hidden and deleted messages never match. Hiding and deletion clear their
 * terms, but an edit racing a hide can write terms back, so results are
 * checked as well. (System messages have no terms: see messageTerms.)
 */
const searchable = (m: MessageRecord) => m.visible && !m.deleted;

const cursorOf = (m: MessageRecord) => encodeSearchCursor({ bucket: m.bucket, id: m.messageId });

export async function searchMessages(ctx: Context, args: SearchArgs): Promise<Connection<MessageRecord>> {
  requireViewer(ctx);
  const name = validRoomName('roomName', args.roomName);
  const terms = queryTerms('query', args.query);
  const size = pageSize('first', args.first);
  const from = args.after ? decodeSearchCursor('after', args.after) : null;
  const room = await requireParticipation(ctx, name);
  // A cursor of an earlier room of the same name finds nothing: every read stops at this room's creation.
  const page = await ctx.services.stores.messageSearch.page(room, terms, from, size, searchable);
  const resume = page.stoppedAfter === null ? undefined : encodeSearchCursor({ bucket: page.stoppedAfter, id: null });
  return connection(page.rows, cursorOf, { hasNextPage: page.more || resume !== undefined, endCursor: resume });
}
