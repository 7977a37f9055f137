/**
 * What the message actions cost: their price in query complexity, and the statements each sends.
 */
import { describe, expect, it } from 'vitest';
import { AddReactionDocument, EditMessageDocument, PostReplyDocument } from '../../generated/graphql.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { post, roomWith } from '../../testkit/data/rooms.js';
import { recordCql } from '../../testkit/faults/cql-spy.js';
import { app, alice, bob } from './kit.js';

describe('cost of the new connections', () => {
  const nested = (size: number) =>
    `query ($roomName: String!) { room(roomName: $roomName) { messages(first: 50) { edges { node { id
      edits(first: ${size}) { edges { node { content } } }
      replies(first: ${size}) { edges { node { id } } } } } } } }`;

  it('prices edits and replies by page size and reactions by their limit, like every other list', async () => {
    const room = await roomWith(app, alice);
    await post(app, alice, room, 'priced');
    // 50 messages × (edits 50 + replies 50): over the default cost limit of 5,000.
    const refused = await gql(app, nested(50), { roomName: room }, alice.token);
    expect(codes(refused)).toEqual(['QUERY_TOO_COMPLEX']);
    expect((await gql(app, nested(10), { roomName: room }, alice.token)).errors).toBeUndefined();
    // Reactions are priced at 20 kinds, each with its first reactors (a query each): 200 × (1 + 6 + 21) tips it over.
    const page = (withReactions: boolean) => `query ($roomName: String!) { room(roomName: $roomName) { messages(first: 200) { edges { node {
      replies(first: 5) { edges { node { id } } } ${withReactions ? 'reactions { emoji firstReactors { login } }' : ''} } } } } }`;
    expect((await gql(app, page(false), { roomName: room }, alice.token)).errors).toBeUndefined();
    expect(codes(await gql(app, page(true), { roomName: room }, alice.token))).toEqual(['QUERY_TOO_COMPLEX']);
  });
});

describe('what each action costs in CQL', () => {
  /** The statements `run` sends, each shortened to its verb and table. */
  async function statementsOf(run: () => Promise<unknown>) {
    const spy = recordCql(app);
    try {
      await run();
    } finally {
      spy.stop();
    }
    const short = (cql: string) => {
      const [verb, second] = cql.trim().split(/\s+/);
      const table = verb === 'UPDATE' ? second : cql.match(/\b(?:FROM|INTO) (\w+)/)?.[1];
      return `${verb} ${table}`;
    };
    return spy.records.map((r) => `${r.kind === 'lwt' ? 'LWT ' : ''}${r.cql.map(short).join(' + ')}`);
  }

  it('an edit, a reaction, a new kind of reaction and a reply', async () => {
    const room = await roomWith(app, alice, [bob]);
    const m = await post(app, bob, room, 'cost me');
    // Warm: the instance has written this room's and author's bucket rows already.
    const edit = await statementsOf(() => gqlOk(app, EditMessageDocument, { messageId: m.id, content: 'cost me less' }, bob.token));
    expect(edit).toEqual([
      'SELECT chat_room_messages',
      'SELECT chat_rooms',
      'INSERT message_versions',
      'LWT UPDATE chat_room_messages',
      'UPDATE messages_by_author',
      // The answer's own fields: none read storage (mentions and counts are in the row).
    ]);
    const firstOfKind = await statementsOf(() => gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👀' }, alice.token));
    // The message and its room; the reactor's name; the new kind (LWT); the reaction. Then the answer's
    // reactions: counts, the viewer's own, and the first reactors of the one emoji.
    const answer = ['SELECT message_reactions', 'SELECT message_reactions', 'SELECT message_reactions'];
    expect(firstOfKind).toEqual([
      'SELECT chat_room_messages',
      'SELECT chat_rooms',
      'SELECT users',
      'LWT UPDATE chat_room_messages',
      'INSERT message_reactions',
      ...answer,
    ]);
    const again = await statementsOf(() => gqlOk(app, AddReactionDocument, { messageId: m.id, emoji: '👀' }, bob.token));
    expect(again).toEqual(['SELECT chat_room_messages', 'SELECT chat_rooms', 'SELECT users', 'INSERT message_reactions', ...answer]);
    // The room and the author's name; the parent; one logged batch; then the answer's replyTo (the parent again).
    const reply = await statementsOf(() => gqlOk(app, PostReplyDocument, { roomName: room, content: 'a reply', replyTo: m.id }, bob.token));
    expect(reply).toEqual([
      'SELECT chat_rooms',
      'SELECT users',
      'SELECT chat_room_messages',
      'INSERT chat_room_messages + INSERT message_replies + UPDATE chat_room_messages + INSERT messages_by_author',
      'SELECT chat_room_messages',
    ]);
  });
});
