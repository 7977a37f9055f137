/**
 * Every mutation retried with its Idempotency-Key after a timeout that hid a
 * success: the first write it sends to Cassandra applies, and its answer is
 * replaced by the driver's timeout (as when a coordinator applied it and
 * died). The same key then answers once, and the same again: the records a
 * creating mutation makes are counted in CQL (one), and the key's row holds
 * the answer. The cases are checked against schema.graphql's Mutation type,
 * so a new mutation fails here until it has one. Then the outcomes a single
 * lost answer does not reach: register's account made but unanswered, a
 * logout retried with the token it revoked, buyItem's answer never recorded.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import cassandra from 'cassandra-driver';
import type { App } from '../../src/app.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk, type GqlResult } from '../testkit/http.js';
import { cqlRow, cqlRows } from '../testkit/cql.js';
import { signUp, signUpMany, uniqueLogin, type TestUser } from '../testkit/data/users.js';
import { itemInput } from '../testkit/data/marketplace.js';
import { uniqueRoomName } from '../testkit/data/rooms.js';
import { dayBucket, monthBucket } from '../../src/buckets.js';
import { keyOf } from '../testkit/ids.js';

let app: App;
beforeAll(async () => {
  app = await startApp();
});

interface Call {
  doc: string;
  variables: Record<string, unknown>;
  token?: string;
  /** Records of the kind the mutation creates, counted in CQL: one after every retry. */
  records?: () => Promise<number>;
  /** Sends nothing to Cassandra (nothing to time out). */
  noWrite?: boolean;
  /** Ends the caller's own session: a retry with its key still answers the first answer, and nothing else takes the token. */
  endsSession?: boolean;
}

type Setup = () => Promise<Call>;

const ROOM = 'name';
const MSG = 'id content';

async function people(n: number) {
  return signUpMany(app, n, 'retry');
}

async function roomOf(owner: TestUser, members: TestUser[] = []) {
  const name = uniqueRoomName('retry');
  await gqlOk(app, `mutation($n: String!) { createRoom(input: {name: $n}) { name } }` as never, { n: name } as never, owner.token);
  for (const m of members) await gqlOk(app, `mutation($n: String!) { joinRoom(roomName: $n) { name } }` as never, { n: name } as never, m.token);
  return name;
}

/** A room on request of `owner`'s, with a request of `asker`'s waiting. */
async function knockRoomOf(owner: TestUser, asker?: TestUser): Promise<string> {
  const n = await roomOf(owner);
  await gqlOk(app, 'mutation($n: String!) { setRoomVisibility(roomName: $n, visibility: ON_REQUEST) { name } }' as never, { n } as never, owner.token);
  if (asker) await gqlOk(app, 'mutation($n: String!) { requestToJoin(roomName: $n) { requesterLogin } }' as never, { n } as never, asker.token);
  return n;
}

async function postIn(user: TestUser, room: string, content = 'hello'): Promise<string> {
  const data = (await gqlOk(app, `mutation($r: String!, $c: String!) { postMessage(roomName: $r, content: $c) { id } }` as never, { r: room, c: content } as never, user.token)) as {
    postMessage: { id: string };
  };
  return data.postMessage.id;
}

async function pollIn(user: TestUser, room: string): Promise<string> {
  const data = (await gqlOk(
    app,
    `mutation($r: String!) { postPoll(input: {roomName: $r, question: "lunch?", answers: ["yes", "no"]}) { id } }` as never,
    { r: room } as never,
    user.token,
  )) as { postPoll: { id: string } };
  return data.postPoll.id;
}

const countWhere = async (query: string, params: unknown[], keep: (row: cassandra.types.Row) => boolean = () => true) =>
  (await cqlRows(app, query, params)).filter(keep).length;

/** Every mutation of the schema: what it needs, and its call. */
const CASES: Record<string, Setup> = {
  register: async () => {
    const login = uniqueLogin('reg');
    const input = { login, password: 'correct horse battery', firstname: 'A', lastname: 'B', email: `${login}@example.test` };
    return {
      doc: 'mutation($input: RegisterInput!) { register(input: $input) { token user { login } } }',
      variables: { input },
      records: () => countWhere('SELECT login FROM users WHERE login = ?', [login]),
    };
  },
  login: async () => {
    const [u] = await people(1);
    return { doc: 'mutation($l: String!, $p: String!) { login(login: $l, password: $p) { token user { login } } }', variables: { l: u!.login, p: u!.password } };
  },
  logout: async () => ({ doc: 'mutation { logout }', variables: {}, token: (await signUp(app)).token, endsSession: true }),
  logoutEverywhere: async () => ({ doc: 'mutation { logoutEverywhere }', variables: {}, token: (await signUp(app)).token, endsSession: true }),
  changePassword: async () => {
    const u = await signUp(app);
    return {
      doc: 'mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) }',
      variables: { c: u.password, n: 'another horse battery staple' },
      token: u.token,
    };
  },
  updateProfile: async () => ({
    doc: 'mutation { updateProfile(input: {bio: "hi"}) { login bio } }',
    variables: {},
    token: (await signUp(app)).token,
  }),
  createRoom: async () => {
    const u = await signUp(app);
    const name = uniqueRoomName('new');
    return {
      doc: `mutation($n: String!) { createRoom(input: {name: $n}) { ${ROOM} } }`,
      variables: { n: name },
      token: u.token,
      records: () => countWhere('SELECT creation_date FROM chat_rooms WHERE room_name = ?', [name], (r) => r.creation_date != null),
    };
  },
  joinRoom: async () => {
    const [a, b] = await people(2);
    return { doc: `mutation($n: String!) { joinRoom(roomName: $n) { ${ROOM} } }`, variables: { n: await roomOf(a!) }, token: b!.token };
  },
  leaveRoom: async () => {
    const [a, b] = await people(2);
    return { doc: 'mutation($n: String!) { leaveRoom(roomName: $n) }', variables: { n: await roomOf(a!, [b!]) }, token: b!.token };
  },
  deleteRoom: async () => {
    const [a] = await people(1);
    return { doc: 'mutation($n: String!) { deleteRoom(roomName: $n) }', variables: { n: await roomOf(a!) }, token: a!.token };
  },
  removeParticipant: async () => {
    const [a, b] = await people(2);
    return {
      doc: `mutation($n: String!, $l: String!) { removeParticipant(roomName: $n, login: $l, ban: true) { ${ROOM} } }`,
      variables: { n: await roomOf(a!, [b!]), l: b!.login },
      token: a!.token,
    };
  },
  unbanFromRoom: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!, [b!]);
    await gqlOk(app, `mutation($n: String!, $l: String!) { removeParticipant(roomName: $n, login: $l, ban: true) { name } }` as never, { n, l: b!.login } as never, a!.token);
    return { doc: `mutation($n: String!, $l: String!) { unbanFromRoom(roomName: $n, login: $l) { ${ROOM} } }`, variables: { n, l: b!.login }, token: a!.token };
  },
  muteParticipant: async () => {
    const [a, b] = await people(2);
    return {
      doc: `mutation($n: String!, $l: String!) { muteParticipant(roomName: $n, login: $l, minutes: 5) { ${ROOM} } }`,
      variables: { n: await roomOf(a!, [b!]), l: b!.login },
      token: a!.token,
    };
  },
  setRoomModerator: async () => {
    const [a, b] = await people(2);
    return {
      doc: `mutation($n: String!, $l: String!) { setRoomModerator(roomName: $n, login: $l, moderator: true) { ${ROOM} } }`,
      variables: { n: await roomOf(a!, [b!]), l: b!.login },
      token: a!.token,
    };
  },
  setSlowMode: async () => {
    const [a] = await people(1);
    return { doc: `mutation($n: String!) { setSlowMode(roomName: $n, seconds: 10) { ${ROOM} } }`, variables: { n: await roomOf(a!) }, token: a!.token };
  },
  setRoomMetadata: async () => {
    const [a] = await people(1);
    return { doc: `mutation($n: String!) { setRoomMetadata(roomName: $n, metadata: {theme: "dark"}) { ${ROOM} } }`, variables: { n: await roomOf(a!) }, token: a!.token };
  },
  setRoomMemberPermissions: async () => {
    const [a] = await people(1);
    return { doc: `mutation($n: String!) { setRoomMemberPermissions(roomName: $n, permissions: [INVITE]) { ${ROOM} } }`, variables: { n: await roomOf(a!) }, token: a!.token };
  },
  setRoomVisibility: async () => {
    const [a] = await people(1);
    return { doc: `mutation($n: String!) { setRoomVisibility(roomName: $n, visibility: PRIVATE) { ${ROOM} } }`, variables: { n: await roomOf(a!) }, token: a!.token };
  },
  setRoomRole: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!, [b!]);
    return { doc: `mutation($n: String!, $l: String!) { setRoomRole(roomName: $n, login: $l, role: ADMIN) { ${ROOM} } }`, variables: { n, l: b!.login }, token: a!.token };
  },
  transferRoomOwnership: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!, [b!]);
    return { doc: `mutation($n: String!, $l: String!) { transferRoomOwnership(roomName: $n, login: $l) { ${ROOM} } }`, variables: { n, l: b!.login }, token: a!.token };
  },
  inviteToRoom: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!);
    return {
      doc: 'mutation($n: String!, $l: String!) { inviteToRoom(roomName: $n, login: $l) { inviteeLogin } }',
      variables: { n, l: b!.login },
      token: a!.token,
      records: () => countWhere('SELECT status FROM room_invitations WHERE invitee_login = ? AND room_name = ?', [b!.login, n]),
    };
  },
  acceptInvitation: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!);
    await gqlOk(app, 'mutation($n: String!, $l: String!) { inviteToRoom(roomName: $n, login: $l) { inviteeLogin } }' as never, { n, l: b!.login } as never, a!.token);
    return { doc: `mutation($n: String!) { acceptInvitation(roomName: $n) { ${ROOM} } }`, variables: { n }, token: b!.token };
  },
  declineInvitation: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!);
    await gqlOk(app, 'mutation($n: String!, $l: String!) { inviteToRoom(roomName: $n, login: $l) { inviteeLogin } }' as never, { n, l: b!.login } as never, a!.token);
    return { doc: 'mutation($n: String!) { declineInvitation(roomName: $n) }', variables: { n }, token: b!.token };
  },
  revokeInvitation: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!);
    await gqlOk(app, 'mutation($n: String!, $l: String!) { inviteToRoom(roomName: $n, login: $l) { inviteeLogin } }' as never, { n, l: b!.login } as never, a!.token);
    return { doc: 'mutation($n: String!, $l: String!) { revokeInvitation(roomName: $n, login: $l) }', variables: { n, l: b!.login }, token: a!.token };
  },
  requestToJoin: async () => {
    const [a, b] = await people(2);
    const n = await knockRoomOf(a!);
    return { doc: 'mutation($n: String!) { requestToJoin(roomName: $n) { requesterLogin } }', variables: { n }, token: b!.token };
  },
  withdrawJoinRequest: async () => {
    const [a, b] = await people(2);
    const n = await knockRoomOf(a!, b);
    return { doc: 'mutation($n: String!) { withdrawJoinRequest(roomName: $n) }', variables: { n }, token: b!.token };
  },
  approveJoinRequest: async () => {
    const [a, b] = await people(2);
    const n = await knockRoomOf(a!, b);
    return { doc: 'mutation($n: String!, $l: String!) { approveJoinRequest(roomName: $n, login: $l) { inviteeLogin } }', variables: { n, l: b!.login }, token: a!.token };
  },
  declineJoinRequest: async () => {
    const [a, b] = await people(2);
    const n = await knockRoomOf(a!, b);
    return { doc: 'mutation($n: String!, $l: String!) { declineJoinRequest(roomName: $n, login: $l) }', variables: { n, l: b!.login }, token: a!.token };
  },
  createInviteLink: async () => {
    const [a] = await people(1);
    return { doc: 'mutation($n: String!) { createInviteLink(roomName: $n, maxUses: 3) { maxUses } }', variables: { n: await roomOf(a!) }, token: a!.token };
  },
  redeemInviteLink: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!);
    const made = (await gqlOk(app, 'mutation($n: String!) { createInviteLink(roomName: $n, maxUses: 3) { token } }' as never, { n } as never, a!.token)) as {
      createInviteLink: { token: string };
    };
    const token = made.createInviteLink.token;
    return {
      doc: `mutation($t: String!) { redeemInviteLink(token: $t) { ${ROOM} } }`,
      variables: { t: token },
      token: b!.token,
      records: async () => (await cqlRow(app, 'SELECT uses FROM room_invite_links WHERE link_token = ?', [token]))?.uses as number,
    };
  },
  revokeInviteLink: async () => {
    const [a] = await people(1);
    const n = await roomOf(a!);
    const made = (await gqlOk(app, 'mutation($n: String!) { createInviteLink(roomName: $n, maxUses: 3) { token } }' as never, { n } as never, a!.token)) as {
      createInviteLink: { token: string };
    };
    return { doc: 'mutation($n: String!, $t: String!) { revokeInviteLink(roomName: $n, token: $t) }', variables: { n, t: made.createInviteLink.token }, token: a!.token };
  },
  sendTyping: async () => {
    const [a] = await people(1);
    return { doc: 'mutation($n: String!) { sendTyping(roomName: $n) }', variables: { n: await roomOf(a!) }, token: a!.token, noWrite: true };
  },
  postMessage: async () => {
    const [a] = await people(1);
    const n = await roomOf(a!);
    const content = `post ${randomUUID()}`;
    return {
      doc: `mutation($n: String!, $c: String!) { postMessage(roomName: $n, content: $c) { ${MSG} } }`,
      variables: { n, c: content },
      token: a!.token,
      records: () => roomMessages(n, (r) => r.content === content),
    };
  },
  postPoll: async () => {
    const [a] = await people(1);
    const n = await roomOf(a!);
    const question = `poll ${randomUUID()}`;
    return {
      doc: `mutation($n: String!, $q: String!) { postPoll(input: {roomName: $n, question: $q, answers: ["a", "b"]}) { ${MSG} } }`,
      variables: { n, q: question },
      token: a!.token,
      records: () => roomMessages(n, (r) => r.content === question),
    };
  },
  forwardMessage: async () => {
    const [a] = await people(1);
    const from = await roomOf(a!);
    const to = await roomOf(a!);
    const id = await postIn(a!, from, `fwd ${randomUUID()}`);
    return {
      doc: `mutation($m: ID!, $r: String!) { forwardMessage(messageId: $m, toRoom: $r) { __typename } }`,
      variables: { m: id, r: to },
      token: a!.token,
      records: () => roomMessages(to, (r) => r.forwarded_from != null),
    };
  },
  editMessage: async () => {
    const [a] = await people(1);
    const id = await postIn(a!, await roomOf(a!));
    return { doc: `mutation($m: ID!) { editMessage(messageId: $m, content: "edited") { ${MSG} version } }`, variables: { m: id }, token: a!.token };
  },
  deleteMessage: async () => {
    const [a] = await people(1);
    const id = await postIn(a!, await roomOf(a!));
    return { doc: `mutation($m: ID!) { deleteMessage(messageId: $m) { id deleted } }`, variables: { m: id }, token: a!.token };
  },
  hideMessage: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!, [b!]);
    const id = await postIn(b!, n);
    return { doc: `mutation($m: ID!) { hideMessage(messageId: $m) { id } }`, variables: { m: id }, token: a!.token };
  },
  pinMessage: async () => {
    const [a] = await people(1);
    const id = await postIn(a!, await roomOf(a!));
    return { doc: `mutation($m: ID!) { pinMessage(messageId: $m) { id } }`, variables: { m: id }, token: a!.token };
  },
  unpinMessage: async () => {
    const [a] = await people(1);
    const id = await postIn(a!, await roomOf(a!));
    await gqlOk(app, `mutation($m: ID!) { pinMessage(messageId: $m) { id } }` as never, { m: id } as never, a!.token);
    return { doc: `mutation($m: ID!) { unpinMessage(messageId: $m) { id } }`, variables: { m: id }, token: a!.token };
  },
  addReaction: async () => {
    const [a] = await people(1);
    const id = await postIn(a!, await roomOf(a!));
    return { doc: `mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }`, variables: { m: id }, token: a!.token };
  },
  removeReaction: async () => {
    const [a] = await people(1);
    const id = await postIn(a!, await roomOf(a!));
    await gqlOk(app, `mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }` as never, { m: id } as never, a!.token);
    return { doc: `mutation($m: ID!) { removeReaction(messageId: $m, emoji: "👍") { id } }`, variables: { m: id }, token: a!.token };
  },
  markRoomRead: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!, [b!]);
    const id = await postIn(a!, n);
    return { doc: `mutation($n: String!, $m: ID!) { markRoomRead(roomName: $n, upTo: $m) { unreadCount } }`, variables: { n, m: id }, token: b!.token };
  },
  markRoomUnread: async () => {
    const [a, b] = await people(2);
    const n = await roomOf(a!, [b!]);
    const id = await postIn(a!, n);
    await gqlOk(app, `mutation($n: String!, $m: ID!) { markRoomRead(roomName: $n, upTo: $m) { unreadCount } }` as never, { n, m: id } as never, b!.token);
    return { doc: `mutation($n: String!, $m: ID!) { markRoomUnread(roomName: $n, from: $m) { unreadCount } }`, variables: { n, m: id }, token: b!.token };
  },
  votePoll: async () => {
    const [a] = await people(1);
    const id = await pollIn(a!, await roomOf(a!));
    return { doc: `mutation($m: ID!) { votePoll(messageId: $m, answers: [0]) { voterCount myAnswers } }`, variables: { m: id }, token: a!.token };
  },
  retractVote: async () => {
    const [a] = await people(1);
    const id = await pollIn(a!, await roomOf(a!));
    await gqlOk(app, `mutation($m: ID!) { votePoll(messageId: $m, answers: [0]) { voterCount } }` as never, { m: id } as never, a!.token);
    return { doc: `mutation($m: ID!) { retractVote(messageId: $m) { voterCount myAnswers } }`, variables: { m: id }, token: a!.token };
  },
  sendDirectMessage: async () => {
    const [a, b] = await people(2);
    const content = `dm ${randomUUID()}`;
    return {
      doc: 'mutation($to: String!, $c: String!) { sendDirectMessage(to: $to, content: $c) { id content } }',
      variables: { to: b!.login, c: content },
      token: a!.token,
      records: () => countWhere('SELECT content FROM direct_messages WHERE conversation = ? AND month = ?', [[a!.login, b!.login].sort().join(':'), monthBucket(new Date())], (r) => r.content === content),
    };
  },
  markConversationRead: async () => {
    const [a, b] = await people(2);
    await gqlOk(app, 'mutation($to: String!) { sendDirectMessage(to: $to, content: "hi") { id } }' as never, { to: b!.login } as never, a!.token);
    return { doc: 'mutation($w: String!) { markConversationRead(with: $w) { id } }', variables: { w: a!.login }, token: b!.token };
  },
  blockUser: async () => {
    const [a, b] = await people(2);
    return { doc: 'mutation($l: String!) { blockUser(login: $l) { login } }', variables: { l: b!.login }, token: a!.token };
  },
  unblockUser: async () => {
    const [a, b] = await people(2);
    await gqlOk(app, 'mutation($l: String!) { blockUser(login: $l) { login } }' as never, { l: b!.login } as never, a!.token);
    return { doc: 'mutation($l: String!) { unblockUser(login: $l) }', variables: { l: b!.login }, token: a!.token };
  },
  createItem: async () => {
    const [a] = await people(1);
    const input = itemInput({ name: `item ${randomUUID()}` });
    return {
      doc: 'mutation($input: CreateItemInput!) { createItem(input: $input) { id name } }',
      variables: { input },
      token: a!.token,
      records: () => countWhere('SELECT name FROM items_by_seller WHERE seller = ?', [a!.login], (r) => r.name === input.name),
    };
  },
  buyItem: async () => {
    const [seller, buyer] = await people(2);
    const item = (await gqlOk(app, 'mutation($input: CreateItemInput!) { createItem(input: $input) { id } }' as never, { input: itemInput() } as never, seller!.token)) as {
      createItem: { id: string };
    };
    return {
      doc: 'mutation($i: ID!) { buyItem(itemId: $i, quantity: 2) { id quantity status } }',
      variables: { i: item.createItem.id },
      token: buyer!.token,
      records: async () => {
        const data = (await gqlOk(app, 'query { myPurchases { edges { node { id } } } }' as never, {} as never, buyer!.token)) as { myPurchases: { edges: unknown[] } };
        return data.myPurchases.edges.length;
      },
    };
  },
};

/** Mutations that cannot take a key over a plain JSON POST, and why. */
const NOT_HERE: Record<string, string> = {
  uploadAttachment: 'a multipart upload (its own request path, src/server/http/files/uploads.ts): test/idempotency/uploads.test.ts',
};

/** A room's messages of today, as stored. */
const roomMessages = (room: string, keep: (row: cassandra.types.Row) => boolean) =>
  countWhere('SELECT content, forwarded_from FROM chat_room_messages WHERE room_name = ? AND time_bucket = ?', [room, dayBucket(new Date())], keep);

/** The first write the app sends to Cassandra (its own key's rows aside) applies, and its answer becomes a timeout. */
function loseNextWriteAnswer(target: App): { fired: () => boolean } {
  const client = target.services.db.client;
  const { execute, batch } = client;
  let fired = false;
  const isWrite = (cql: string) => !/^\s*SELECT\b/i.test(cql) && !/idempotency_keys/.test(cql);
  const restore = () => {
    client.execute = execute;
    client.batch = batch;
  };
  const timeout = () => new cassandra.errors.OperationTimedOutError('injected: applied, but its answer was lost');
  client.execute = async function (this: unknown, query: string, ...rest: unknown[]) {
    const result = await (execute as (...a: unknown[]) => Promise<unknown>).call(client, query, ...rest);
    if (!fired && isWrite(query)) {
      fired = true;
      restore();
      throw timeout();
    }
    return result;
  } as typeof client.execute;
  client.batch = async function (this: unknown, queries: Array<{ query: string }>, ...rest: unknown[]) {
    const result = await (batch as (...a: unknown[]) => Promise<unknown>).call(client, queries, ...rest);
    if (!fired && queries.some((q) => isWrite(q.query))) {
      fired = true;
      restore();
      throw timeout();
    }
    return result;
  } as typeof client.batch;
  restores.push(restore);
  return { fired: () => fired };
}

const restores: Array<() => void> = [];
afterEach(() => {
  // Last installed first, so each puts back what it found.
  for (const restore of restores.splice(0).reverse()) restore();
});

const send = (call: Call, key: string): Promise<GqlResult<unknown>> => gql(app, call.doc, call.variables, call.token, { 'idempotency-key': key });

const mutationNames = () => {
  const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
  return Object.keys(schema.getMutationType()!.getFields()).sort();
};

describe('every mutation, retried with its key after a timeout that applied', () => {
  it('has a case for every mutation of the schema', () => {
    expect(mutationNames().filter((name) => !(name in CASES) && !(name in NOT_HERE))).toEqual([]);
  });

  for (const name of Object.keys(CASES).sort()) {
    it(`${name}: answers once, the same again; one record`, async () => {
      const call = await CASES[name]!();
      const key = randomUUID();
      const staged = loseNextWriteAnswer(app);
      const first = await send(call, key);
      if (!call.noWrite) expect(staged.fired()).toBe(true);
      // The first is answered (its write read back) or told to retry: never a guess, never an internal error.
      expect(codes(first).filter((c) => c !== 'SERVICE_UNAVAILABLE')).toEqual([]);
      const second = await send(call, key);
      expect(second.errors).toBeUndefined();
      if (!first.errors) expect(second.data).toEqual(first.data);
      const third = await send(call, key);
      expect(third).toEqual(second);
      if (call.records) expect(await call.records()).toBe(1);
      // The session is over for anything but this key's answer.
      if (call.endsSession) expect(codes(await gql(app, 'query { me { login } }', {}, call.token))).toEqual(['UNAUTHENTICATED']);
      // The answer is kept under the viewer's key (an anonymous caller's under '*').
      expect((await storedRow(call, key))?.response).toBeTruthy();
    });
  }
});

const storedRow = (call: Call, key: string) =>
  cqlRow(app, 'SELECT response FROM idempotency_keys WHERE viewer = ? AND key = ?', [call.token ? loginOf(call) : '*', key]);

/** The login a call's token names (its JWT's subject). */
function loginOf(call: Call): string {
  return (JSON.parse(Buffer.from(call.token!.split('.')[1]!, 'base64url').toString('utf8')) as { sub: string }).sub;
}

/** The next `times` runs of a statement matching `pattern` time out without being sent: their outcome unknown, and not applied. */
function timeOutUnsent(target: App, pattern: RegExp, times: number): { count: () => number } {
  const client = target.services.db.client;
  const { execute } = client;
  let count = 0;
  const restore = () => {
    client.execute = execute;
  };
  client.execute = async function (this: unknown, query: string, ...rest: unknown[]) {
    if (count < times && pattern.test(query)) {
      count += 1;
      if (count === times) restore();
      throw new cassandra.errors.OperationTimedOutError('injected: the node did not answer in time');
    }
    return (execute as (...a: unknown[]) => Promise<unknown>).call(client, query, ...rest);
  } as typeof client.execute;
  restores.push(restore);
  return { count: () => count };
}

describe('an LWT whose outcome was unknown twice', () => {
  it('changePassword answers SERVICE_UNAVAILABLE, not a guessed CONFLICT; the same key then changes it', async () => {
    const call = await CASES.changePassword!();
    const key = randomUUID();
    const staged = timeOutUnsent(app, /UPDATE users SET pass = .* IF pass = /, 2);
    const first = await send(call, key);
    expect(staged.count()).toBe(2);
    expect(codes(first)).toEqual(['SERVICE_UNAVAILABLE']);
    const again = await send(call, key);
    expect(again.errors).toBeUndefined();
    expect(again.data).toEqual({ changePassword: 0 });
  });
});

describe('a creation whose outcome could not be learned', () => {
  it('createRoom: its insert applied, its answer and every read back lost; the same key answers the room, not ROOM_EXISTS', async () => {
    const u = await signUp(app);
    const name = uniqueRoomName('unknown');
    const call: Call = { doc: `mutation($n: String!) { createRoom(input: {name: $n}) { ${ROOM} creator { login } } }`, variables: { n: name }, token: u.token };
    const key = randomUUID();
    const applied = loseNextWriteAnswerOf(app, /INSERT INTO chat_rooms .* IF NOT EXISTS/s);
    // Every serial read back of the room fails as storage does when no replica answers.
    const unread = timeOutUnsent(app, /SELECT .* FROM chat_rooms/s, 4);
    const first = await send(call, key);
    expect(applied.fired()).toBe(true);
    expect(unread.count()).toBe(4);
    expect(codes(first)).toEqual(['SERVICE_UNAVAILABLE']);
    const again = await send(call, key);
    expect(again.errors).toBeUndefined();
    expect(again.data).toEqual({ createRoom: { name, creator: { login: u.login } } });
    expect(await send(call, key)).toEqual(again);
    // Another key (another client's attempt) is told the name is taken.
    expect(codes(await send(call, randomUUID()))).toEqual(['ROOM_EXISTS']);
  });
});

/** The next statement matching `pattern` applies, and its answer becomes a timeout. */
function loseNextWriteAnswerOf(target: App, pattern: RegExp): { fired: () => boolean } {
  const client = target.services.db.client;
  const { execute } = client;
  let fired = false;
  const restore = () => {
    client.execute = execute;
  };
  client.execute = async function (this: unknown, query: string, ...rest: unknown[]) {
    const result = await (execute as (...a: unknown[]) => Promise<unknown>).call(client, query, ...rest);
    if (!fired && pattern.test(query)) {
      // Passes through from now on (not unpatched: a patch installed after this one would go with it).
      fired = true;
      throw new cassandra.errors.OperationTimedOutError('injected: applied, but its answer was lost');
    }
    return result;
  } as typeof client.execute;
  restores.push(restore);
  return { fired: () => fired };
}

describe('register, retried with its key after its account was created', () => {
  const REGISTER = 'mutation($input: RegisterInput!) { register(input: $input) { token user { login } } }';
  const registration = () => {
    const login = uniqueLogin('again');
    return { login, password: 'correct horse battery', firstname: 'A', lastname: 'B', email: `${login}@example.test` };
  };
  const me = async (token: string) => ((await gqlOk(app, 'query { me { login } }' as never, {} as never, token)) as { me: { login: string } }).me.login;

  it('its insert applied, its answer and every read back lost: the same key answers the account and a working token, not LOGIN_TAKEN', async () => {
    const input = registration();
    const call: Call = { doc: REGISTER, variables: { input } };
    const key = randomUUID();
    const applied = loseNextWriteAnswerOf(app, /INSERT INTO users .* IF NOT EXISTS/s);
    const unread = timeOutUnsent(app, /SELECT .* FROM users WHERE login = \?/s, 4);
    const first = await send(call, key);
    expect(applied.fired()).toBe(true);
    expect(unread.count()).toBe(4);
    expect(codes(first)).toEqual(['SERVICE_UNAVAILABLE']);
    const again = (await send(call, key)) as GqlResult<{ register: { token: string; user: { login: string } } }>;
    expect(again.errors).toBeUndefined();
    expect(again.data!.register.user.login).toBe(input.login);
    expect(await me(again.data!.register.token)).toBe(input.login);
    expect(await send(call, key)).toEqual(again);
    // Another key (another client's attempt) is told the login is taken.
    expect(codes(await send(call, randomUUID()))).toEqual(['LOGIN_TAKEN']);
  });

  it('its account created but no session stored: the same key answers the account with a session', async () => {
    const input = registration();
    const call: Call = { doc: REGISTER, variables: { input } };
    const key = randomUUID();
    const unsent = timeOutUnsent(app, /INSERT INTO user_sessions/, 1);
    const first = await send(call, key);
    expect(unsent.count()).toBe(1);
    expect(codes(first)).toEqual(['SERVICE_UNAVAILABLE']);
    const again = (await send(call, key)) as GqlResult<{ register: { token: string; user: { login: string } } }>;
    expect(again.errors).toBeUndefined();
    expect(await me(again.data!.register.token)).toBe(input.login);
  });

  it("an anonymous key is bound to its arguments: another client's same key with another password or login gets IDEMPOTENCY_KEY_REUSED, never the token", async () => {
    const input = registration();
    const key = randomUUID();
    const mine = (await send({ doc: REGISTER, variables: { input } }, key)) as GqlResult<{ register: { token: string } }>;
    expect(mine.errors).toBeUndefined();
    const LOGIN = 'mutation($l: String!, $p: String!) { login(login: $l, password: $p) { token } }';
    for (const other of [
      { doc: REGISTER, variables: { input: { ...input, password: 'another horse battery' } } },
      { doc: REGISTER, variables: { input: { ...input, login: uniqueLogin('other') } } },
      { doc: LOGIN, variables: { l: input.login, p: 'another horse battery' } },
      { doc: LOGIN, variables: { l: input.login, p: input.password } },
    ]) {
      const theirs = await send(other, key);
      expect(theirs.status).toBe(422);
      expect(codes(theirs)).toEqual(['IDEMPOTENCY_KEY_REUSED']);
      expect(JSON.stringify(theirs)).not.toContain(mine.data!.register.token);
    }
  });
});

describe('a logout retried with its key', () => {
  it('after it applied and was answered: the first answer again, though its token is revoked', async () => {
    for (const doc of ['mutation { logout }', 'mutation { logoutEverywhere }']) {
      const call: Call = { doc, variables: {}, token: (await signUp(app)).token };
      const key = randomUUID();
      const first = await send(call, key);
      expect(first.errors).toBeUndefined();
      expect(await send(call, key)).toEqual(first);
      // Without the key, or with another one, the token is refused.
      expect(codes(await gql(app, doc, {}, call.token))).toEqual(['UNAUTHENTICATED']);
      expect(codes(await send(call, randomUUID()))).toEqual(['UNAUTHENTICATED']);
      // Another operation under the same key is not answered for a revoked token either.
      expect(codes(await send({ ...call, doc: 'mutation { updateProfile(input: {bio: "x"}) { login } }' }, key))).toEqual(['UNAUTHENTICATED']);
    }
  });

  it('its token revoked but its session record left (storage timed out): answered true, and true again', async () => {
    const call: Call = { doc: 'mutation { logout }', variables: {}, token: (await signUp(app)).token };
    const key = randomUUID();
    const unsent = timeOutUnsent(app, /DELETE FROM user_sessions/, 1);
    const first = await send(call, key);
    expect(unsent.count()).toBe(1);
    expect(first.data).toEqual({ logout: true });
    expect(await send(call, key)).toEqual(first);
    expect(codes(await gql(app, 'query { me { login } }', {}, call.token))).toEqual(['UNAUTHENTICATED']);
  });
});

describe('buyItem retried with its key after an answer that was never recorded', () => {
  it('two retries after the first bought and its instance died unanswered: one purchase, the stock down by the quantity once', async () => {
    const [seller, buyer] = await people(2);
    const offered = 10;
    const item = (await gqlOk(app, 'mutation($input: CreateItemInput!) { createItem(input: $input) { id } }' as never, { input: itemInput({ offeredUnits: offered }) } as never, seller!.token)) as {
      createItem: { id: string };
    };
    const call: Call = { doc: 'mutation($i: ID!) { buyItem(itemId: $i, quantity: 2) { id quantity status } }', variables: { i: item.createItem.id }, token: buyer!.token };
    const key = randomUUID();
    // The purchase goes through, but its answer is never kept (both tries of the key's last write time out), as when
    // the instance dies after buying: the client saw nothing, and the key stays with that attempt.
    const unrecorded = timeOutUnsent(app, /UPDATE idempotency_keys .* SET response = /s, 2);
    const first = await send(call, key);
    expect(unrecorded.count()).toBe(2);
    expect(first.errors).toBeUndefined();
    // Its lease over: a retry takes the key over and runs buyItem again.
    await cqlRows(app, 'UPDATE idempotency_keys USING TTL 600 SET attempt_started_at = ? WHERE viewer = ? AND key = ?', [new Date(Date.now() - 120_000), buyer!.login, key]);
    const second = await send(call, key);
    const third = await send(call, key);
    expect(second.errors).toBeUndefined();
    expect(second.data).toEqual(first.data);
    expect(third).toEqual(second);
    const purchases = (await gqlOk(app, 'query { myPurchases { edges { node { id } } } }' as never, {} as never, buyer!.token)) as { myPurchases: { edges: unknown[] } };
    expect(purchases.myPurchases.edges).toHaveLength(1);
    const stock = await cqlRow(app, 'SELECT available_units FROM items WHERE id = ?', [cassandra.types.TimeUuid.fromString(keyOf(item.createItem.id))]);
    expect(stock?.available_units).toBe(offered - 2);
  });
});
