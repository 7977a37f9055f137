/**
 * Relay's object identification, as a Relay app uses it: relay-compiler
 * compiles @refetchable fragments (relay/documents.ts) against schema.graphql
 * into refetch queries through Query.node, and relay-runtime runs them
 * against a real app: a fragment read again by its id alone shows the
 * object's new state, a node the viewer may not see is null, and nodes(ids:)
 * reads every kind of object at once.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Environment,
  Network,
  RecordSource,
  Store,
  fetchQuery,
  getSelector,
  type GraphQLTaggedNode,
  type OperationType,
  type ReaderFragment,
} from 'relay-runtime';
import type { App } from '../../src/app.js';
import { projectPath } from '../../src/project-root.js';
import { startApp, stopApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { messageKey, post, roomWith } from '../testkit/data/rooms.js';
import { encodeMessageId } from '../../src/resolvers/rooms/ids.js';
import { timeUuidDate } from '../../src/timeuuids.js';
import { TimeUuid } from '../../src/db/cassandra/client.js';
import { signUpMany, type TestUser } from '../testkit/data/users.js';
import { createItem } from '../testkit/data/marketplace.js';
import { send } from '../testkit/data/messenger.js';
import { globalIdOf, keyOf } from '../testkit/ids.js';
import { BuyItemDocument, EditMessageDocument, ItemDocument, JoinRoomDocument } from '../generated/graphql.js';
import messageFragment from './relay/__generated__/documentsMessage.graphql.js';
import messageQuery, { type documentsMessageQuery } from './relay/__generated__/documentsMessageQuery.graphql.js';
import messageRefetch, { type documentsMessageRefetchQuery } from './relay/__generated__/documentsMessageRefetchQuery.graphql.js';
import roomFragment from './relay/__generated__/documentsRoom.graphql.js';
import roomQuery, { type documentsRoomQuery } from './relay/__generated__/documentsRoomQuery.graphql.js';
import roomRefetch, { type documentsRoomRefetchQuery } from './relay/__generated__/documentsRoomRefetchQuery.graphql.js';
import nodesQuery, { type documentsNodesQuery } from './relay/__generated__/documentsNodesQuery.graphql.js';

let app: App;
let author: TestUser;
let member: TestUser;
let outsider: TestUser;

beforeAll(async () => {
  app = await startApp();
  [author, member, outsider] = await signUpMany(app, 3, 'relay');
});
afterAll(() => stopApp(app));

/** A Relay environment of one signed-in user: its network is GraphQL over HTTP to the app, as in a browser. */
function environmentOf(user: TestUser): Environment {
  return new Environment({
    network: Network.create(async (params, variables) => {
      const res = await fetch(`${app.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
        body: JSON.stringify({ query: params.text, variables }),
      });
      return res.json();
    }),
    store: new Store(new RecordSource()),
  });
}

const run = <T extends OperationType>(env: Environment, query: GraphQLTaggedNode, variables: T['variables']) =>
  fetchQuery<T>(env, query, variables, { fetchPolicy: 'network-only' }).toPromise() as Promise<T['response']>;

/** The id of a message that does not exist, of the same shape as `id`'s: its room and day, another timeuuid. */
function absentMessageLike(id: string): string {
  const key = messageKey(id);
  const absent = encodeMessageId({ ...key, messageId: TimeUuid.fromDate(timeUuidDate(key.messageId)).toString() });
  expect(absent).not.toBe(id);
  return absent;
}

/** What a component using the fragment renders from the environment's store. */
function readFragment<D>(env: Environment, fragment: ReaderFragment, ref: unknown): D {
  return env.lookup(getSelector(fragment, ref) as never).data as D;
}

describe("Relay's object identification", () => {
  it('relay-compiler accepts the schema and its artifacts are current', () => {
    // --validate: exits non-zero when compiling would change what is committed (a @refetchable needs Node and node(id:)).
    execFileSync(projectPath('node_modules', 'relay-compiler', 'linux-x64', 'relay'), ['--validate', '--output', 'quiet-with-errors'], {
      cwd: projectPath('test', 'schema', 'relay'),
    });
  });

  it('refetches a message through node: a @refetchable fragment shows its edit', async () => {
    const room = await roomWith(app, author, [member]);
    const posted = await post(app, author, room, 'first version');
    const env = environmentOf(member);
    const first = await run<documentsMessageQuery>(env, messageQuery, { messageId: posted.id });
    const before = readFragment<{ id: string; content: string; version: number }>(env, messageFragment, first.message);
    expect(before).toMatchObject({ id: posted.id, content: 'first version', version: 0 });

    await gqlOk(app, EditMessageDocument, { messageId: posted.id, content: 'second version' }, author.token);
    const refetched = await run<documentsMessageRefetchQuery>(env, messageRefetch, { id: before.id });
    expect(refetched.node).not.toBeNull();
    // The store is normalized by id: the fragment the first query gave now reads the refetched state.
    expect(readFragment(env, messageFragment, first.message)).toMatchObject({ id: posted.id, content: 'second version', version: 1 });
  });

  it('refetches a room through node: a @refetchable fragment shows a new participant', async () => {
    const room = await roomWith(app, author);
    const env = environmentOf(author);
    const first = await run<documentsRoomQuery>(env, roomQuery, { roomName: room });
    const before = readFragment<{ id: string; name: string; participantCount: number }>(env, roomFragment, first.room);
    expect(before).toMatchObject({ id: globalIdOf('Room', room), name: room, participantCount: 1 });

    await gqlOk(app, JoinRoomDocument, { roomName: room }, member.token);
    await run<documentsRoomRefetchQuery>(env, roomRefetch, { id: before.id });
    expect(readFragment(env, roomFragment, first.room)).toMatchObject({ name: room, participantCount: 2 });
  });

  it('answers null for a node the viewer may not see, exactly as for one that does not exist', async () => {
    const room = await roomWith(app, author);
    const posted = await post(app, author, room, 'participants only');
    const outsiderEnv = environmentOf(outsider);
    const hidden = await run<documentsMessageRefetchQuery>(outsiderEnv, messageRefetch, { id: posted.id });
    expect(hidden.node).toBeNull();
    // message(messageId:) refuses the outsider outright; node does not tell the message exists.
    expect(codes(await gql(app, 'query($id: ID!) { message(messageId: $id) { id } }', { id: posted.id }, outsider.token))).toEqual(['FORBIDDEN']);
    // A missing object of the same shape: a message id in the same room and day that no message has.
    const absentId = absentMessageLike(posted.id);
    expect((await run<documentsMessageRefetchQuery>(outsiderEnv, messageRefetch, { id: absentId })).node).toBeNull();
    const missing = await gql(app, 'query($id: ID!) { node(id: $id) { __typename id } }', { id: absentId }, outsider.token);
    const forbidden = await gql(app, 'query($id: ID!) { node(id: $id) { __typename id } }', { id: posted.id }, outsider.token);
    expect(forbidden).toEqual(missing);
    expect(forbidden).toMatchObject({ data: { node: null } });
    expect(forbidden.errors).toBeUndefined();
    // And the same through nodes(ids:), side by side.
    const both = await gql(app, 'query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }', { ids: [posted.id, absentId] }, outsider.token);
    expect(both).toEqual({ status: 200, data: { nodes: [null, null] } });
  });

  it('reads users, items, purchases, conversations and direct messages with nodes(ids:), each as its own query authorizes', async () => {
    const item = await createItem(app, author, { offeredUnits: 5 });
    const purchase = (await gqlOk(app, BuyItemDocument, { itemId: item.id, quantity: 1 }, member.token)).buyItem;
    const dm = await send(app, member, author, 'hello through node');
    const conversationId = globalIdOf('Conversation', [member.login, author.login].sort().join(':'));
    const ids = [globalIdOf('User', author.login), item.id, purchase.id, conversationId, dm.id];

    const mine = await run<documentsNodesQuery>(environmentOf(member), nodesQuery, { ids });
    expect(mine.nodes).toEqual([
      { __typename: 'User', id: ids[0], login: author.login },
      { __typename: 'Item', id: item.id, name: item.name },
      { __typename: 'Purchase', id: purchase.id, quantity: 1 },
      { __typename: 'Conversation', id: conversationId, partner: { login: author.login } },
      { __typename: 'DirectMessage', id: dm.id, content: 'hello through node' },
    ]);
    // The outsider sees users and items, as user(login:) and item(itemId:) show them, but not the others' purchase or conversation.
    const theirs = await run<documentsNodesQuery>(environmentOf(outsider), nodesQuery, { ids });
    expect(theirs.nodes.map((n) => n?.__typename ?? null)).toEqual(['User', 'Item', null, null, null]);
  });

  it('refuses an id that is no object id, and more ids than a page holds, naming the argument', async () => {
    const bad = await gql(app, 'query($id: ID!) { node(id: $id) { id } }', { id: 'not an id' }, author.token);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
    const many = Array.from({ length: 201 }, (_, i) => globalIdOf('User', `user${i}`));
    const tooMany = await gql(app, 'query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: many }, author.token);
    expect(tooMany.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'ids' });
  });

  it("keeps taking the ids served before ids were global: a bare item id, and the global one's key", async () => {
    const item = await createItem(app, author);
    const bare = keyOf(item.id);
    expect(bare).toMatch(/^[0-9a-f-]{36}$/);
    expect((await gqlOk(app, ItemDocument, { itemId: bare }, member.token)).item?.id).toBe(item.id);
    expect((await gqlOk(app, ItemDocument, { itemId: item.id }, member.token)).item?.id).toBe(item.id);
    // A global id of another type where an item's is expected is refused, not read as an item.
    expect((await gql(app, ItemDocument, { itemId: globalIdOf('Purchase', bare) }, member.token)).errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'itemId',
    });
  });
});
