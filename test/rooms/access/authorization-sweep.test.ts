/**
 * The authorization sweep, generated from the schema: every query, mutation and subscription that takes a room or a
 * message (an argument named for one) is called over HTTP (subscriptions over SSE) by an outsider, a former member
 * and a banned user of a room, on that room and on a message in it. Each must be refused or see nothing, unless
 * OPEN_TO_ANYONE says why a public room's field is for anyone. A field added to the schema is swept the day it is
 * added: a required argument this file has no value for fails the test, as does a field it cannot call. It selects
 * only __typename of what a field returns: the fields of a Room or Message an outsider may reach through an open
 * field are not swept here.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { buildSchema, getNamedType, isLeafType, isObjectType, isInterfaceType, isUnionType, type GraphQLField, type GraphQLNamedType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk, type GqlResult } from '../../testkit/http.js';
import { sseSubscribe } from '../../testkit/sse.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { post, roomWith } from '../../testkit/data/rooms.js';

const schema = buildSchema(readFileSync(new URL('../../../schema.graphql', import.meta.url), 'utf8'));

/** What makes a field one that reaches a room or a message: an argument of one of these names. */
const REACHING = /^(roomName|messageId|toRoom)$/;

/** Fields that reach a public room and are for anyone, with why. Everything else that reaches one refuses outsiders. */
const OPEN_TO_ANYONE: Record<string, string> = {
  'Query.room': 'every room is public: its name, creator and participants are listed (its history is not)',
  'Mutation.joinRoom': 'anyone joins a public room (a banned user is refused: swept below)',
  'Mutation.leaveRoom': 'answers false to whoever does not take part, changing nothing',
  'Mutation.requestToJoin':
    'anyone who sees a room may ask to join it: a public room answers BAD_USER_INPUT (join it), a room on request records it; a banned user is refused (BANNED: join-requests.test.ts)',
};

/** Who is swept, and the refusal codes each may be answered. */
const SWEPT = ['outsider', 'former member', 'banned'] as const;
const REFUSALS = ['FORBIDDEN', 'NOT_FOUND', 'BANNED'];

interface Stage {
  room: string;
  messageId: string;
  member: TestUser;
}

/** A value for each argument name a swept field may take. */
const VALUES: Record<string, (s: Stage) => unknown> = {
  roomName: (s) => s.room,
  messageId: (s) => s.messageId,
  toRoom: (s) => s.room,
  content: () => 'swept',
  reason: () => 'swept',
  emoji: () => '👍',
  login: (s) => s.member.login,
  minutes: () => 5,
  seconds: () => 5,
  moderator: () => true,
  ban: () => false,
  answers: () => [0],
  metadata: () => ({ swept: true }),
  visibility: () => 'PUBLIC',
  permissions: () => ['INVITE'],
  role: () => 'MODERATOR',
  maxUses: () => 5,
  expiresInMinutes: () => 60,
  token: () => 'AAAAAAAAAAAAAAAAAAAAAA',
  clientMessageId: () => randomUUID(),
  attachments: () => [],
  first: () => 5,
  last: () => 5,
  after: () => null,
  before: () => null,
  query: () => 'swept',
  expectedVersion: () => null,
  replyTo: () => null,
  poll: () => null,
  upTo: (s) => s.messageId,
  from: (s) => s.messageId,
};

/** The smallest selection of a type: a leaf needs none; an object, its __typename. */
const selectionOf = (type: GraphQLNamedType): string => (isLeafType(type) ? '' : isObjectType(type) || isInterfaceType(type) || isUnionType(type) ? ' { __typename }' : '');

const reaching = (operation: 'Query' | 'Mutation' | 'Subscription') =>
  Object.values(schema.getRootType(operation === 'Query' ? ('query' as never) : operation === 'Mutation' ? ('mutation' as never) : ('subscription' as never))!.getFields())
    .filter((field) => field.args.some((arg) => REACHING.test(arg.name)))
    .map((field) => ({ operation, field }));

const FIELDS = [...reaching('Query'), ...reaching('Mutation'), ...reaching('Subscription')];

/** The field's call as a document, with every argument it takes (required or not) that VALUES knows. */
function callOf(operation: string, field: GraphQLField<unknown, unknown>, stage: Stage) {
  const args = field.args.filter((arg) => arg.name in VALUES || String(arg.type).endsWith('!'));
  const unknown = args.filter((arg) => !(arg.name in VALUES)).map((arg) => arg.name);
  expect(unknown, `${operation}.${field.name}: arguments with no value in VALUES`).toEqual([]);
  const declared = args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const passed = args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const keyword = operation === 'Query' ? 'query' : operation === 'Mutation' ? 'mutation' : 'subscription';
  const doc = `${keyword}${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selectionOf(getNamedType(field.type))} }`;
  return { doc, variables: Object.fromEntries(args.map((arg) => [arg.name, VALUES[arg.name]!(stage)])) };
}

let app: App;
let owner: TestUser;
let member: TestUser;
let people: Record<(typeof SWEPT)[number], TestUser>;

beforeAll(async () => {
  app = await startApp({ redis: true });
  const [o, m, outsider, former, banned] = await Promise.all(Array.from({ length: 5 }, () => signUp(app)));
  [owner, member] = [o!, m!];
  people = { outsider: outsider!, 'former member': former!, banned: banned! };
});

/** A new room the swept people are outside of, each in their way, with a message of the member's. */
async function stage(): Promise<Stage> {
  const room = await roomWith(app, owner, [member, people['former member'], people.banned]);
  await gqlOk(app, 'mutation($r: String!) { leaveRoom(roomName: $r) }' as never, { r: room } as never, people['former member'].token);
  await gqlOk(app, 'mutation($r: String!, $l: String!) { removeParticipant(roomName: $r, login: $l, ban: true) { name } }' as never, { r: room, l: people.banned.login } as never, owner.token);
  const messageId = (await post(app, member, room, 'in the room')).id;
  return { room, messageId, member };
}

/**
 * stage(), then the room made private: the swept people are outside it, each in their way. The messages in it are
 * the member's; the room's name and ids stay the same when it is then deleted, so an answer about the private room
 * and one about no room at all are compared as they come.
 */
async function privateStage(): Promise<Stage> {
  const s = await stage();
  await gqlOk(app, 'mutation($r: String!) { setRoomVisibility(roomName: $r, visibility: PRIVATE) { name } }' as never, { r: s.room } as never, owner.token);
  return s;
}

const deleteRoomOf = (s: Stage) => gqlOk(app, 'mutation($r: String!) { deleteRoom(roomName: $r) }' as never, { r: s.room } as never, owner.token);

/** What a swept person is answered by a field: its first event for a subscription, the whole answer otherwise. */
async function answerTo(operation: string, field: GraphQLField<unknown, unknown>, s: Stage, who: TestUser): Promise<unknown> {
  const { doc, variables } = callOf(operation, field, s);
  if (operation !== 'Subscription') return gql(app, doc as never, variables as never, who.token);
  const sub = await sseSubscribe(app, doc, variables, who.token);
  const first = await sub.next();
  sub.close();
  return first;
}

/** Whether an answer refuses, or tells nothing: a refusal code, or a null or empty answer. */
function refusedOrEmpty(answer: GqlResult<Record<string, unknown>>, name: string): boolean {
  if (answer.errors?.length) return codes(answer).every((code) => REFUSALS.includes(String(code)));
  const value = answer.data?.[name];
  return value === null || value === false || (Array.isArray(value) && value.length === 0);
}

describe('the authorization sweep', () => {
  it('finds the fields that reach a room or a message, and every open one still exists', () => {
    expect(FIELDS.length).toBeGreaterThan(20);
    const names = new Set(FIELDS.map(({ operation, field }) => `${operation}.${field.name}`));
    expect(Object.keys(OPEN_TO_ANYONE).filter((name) => !names.has(name))).toEqual([]);
  });

  it.each(FIELDS.map(({ operation, field }) => [`${operation}.${field.name}`, operation, field] as const))(
    '%s: refused to an outsider, a former member and a banned user, or open to anyone for a reason',
    async (name, operation, field) => {
      if (name in OPEN_TO_ANYONE && name !== 'Mutation.joinRoom') return;
      const s = await stage();
      for (const who of SWEPT) {
        if (name === 'Mutation.joinRoom' && who !== 'banned') continue;
        const { doc, variables } = callOf(operation, field, s);
        if (operation === 'Subscription') {
          const sub = await sseSubscribe(app, doc, variables, people[who].token);
          const first = await sub.next();
          sub.close();
          expect(first.errors?.length, `${name} as ${who}: ${JSON.stringify(first)}`).toBeGreaterThan(0);
          expect(first.errors!.filter((e) => !REFUSALS.includes(String(e.extensions?.code))), `${name} as ${who}`).toEqual([]);
          continue;
        }
        const answer = (await gql(app, doc as never, variables as never, people[who].token)) as GqlResult<Record<string, unknown>>;
        expect(refusedOrEmpty(answer, field.name), `${name} as ${who}: ${JSON.stringify(answer)}`).toBe(true);
      }
    },
  );

  it.each(FIELDS.map(({ operation, field }) => [`${operation}.${field.name}`, operation, field] as const))(
    '%s: a private room answers an outsider, a former member and a banned user exactly as no room at all',
    async (_name, operation, field) => {
      const s = await privateStage();
      const asPrivate = [];
      for (const who of SWEPT) asPrivate.push(await answerTo(operation, field, s, people[who]));
      await deleteRoomOf(s);
      const asNone = [];
      for (const who of SWEPT) asNone.push(await answerTo(operation, field, s, people[who]));
      expect(asPrivate).toEqual(asNone);
    },
  );

  it('node(id:) answers for a private room and its message exactly as for none', async () => {
    const s = await privateStage();
    const doc = 'query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }';
    const relay = await gqlOk(app, 'query($r: String!) { room(roomName: $r) { id } }' as never, { r: s.room } as never, owner.token);
    const ids = { ids: [(relay as { room: { id: string } }).room.id, s.messageId] };
    const ask = () => Promise.all(SWEPT.map((who) => gql(app, doc as never, ids as never, people[who].token)));
    const asPrivate = await ask();
    expect(asPrivate.map((answer) => answer.data)).toEqual(SWEPT.map(() => ({ nodes: [null, null] })));
    await deleteRoomOf(s);
    expect(await ask()).toEqual(asPrivate);
  });
});
