import * as search from '../../resolvers/rooms/messages/search.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { connectionComplexity } from '../shared/complexity.js';
import { MessageConnection } from './message.js';

const { search: limits } = Limits.room;

builder.queryFields((t) => ({
  searchMessages: t.field({
    type: MessageConnection,
    description:
      "A room's messages holding every word of the query, newest first, for its participants. Case-insensitive; " +
      'words are runs of letters, digits and combining marks (anything else separates them, and compatibility forms ' +
      `such as fullwidth letters match their plain ones); words longer than ${limits.maxTermLength} characters match on ` +
      `their first ${limits.maxTermLength}, and a message is found by its first ${limits.maxTermsPerMessage} different ` +
      'words. Edits are found by their current content; hidden, deleted and system messages are never found. A page ' +
      `reads at most ${limits.bucketsPerPage} days of the room: when it reaches that bound before it is full it returns ` +
      'what it found (possibly nothing) with hasNextPage true and an endCursor to continue from, past its last edge. ' +
      `Page size ${Limits.page.default} by default, at most ${Limits.page.max}.`,
    args: {
      roomName: t.arg.string({ required: true }),
      query: t.arg.string({
        required: true,
        description: `1–${limits.maxQueryTerms} different words, at most ${limits.queryMaxLength} characters`,
      }),
      first: t.arg.int(),
      after: t.arg.string({ description: 'pageInfo.endCursor of the previous page (or an edge cursor)' }),
    },
    // A page may read up to bucketsPerPage day partitions whatever its size: priced as that many lookups.
    complexity: (args) => connectionComplexity(args, limits.bucketsPerPage),
    resolve: (_root, args, ctx) => search.searchMessages(ctx, args),
  }),
}));
