/**
 * Room kinds over HTTP and graphql-ws: a group is private and its members invite, and it is listed with the member's
 * rooms with its unread count; only the owner and admins post in an announcement room, where everyone reacts and
 * votes; a livestream's feed carries messages only (no joins, reactions, votes or read events) and it has no typing or
 * presence; what a room lets its members do is set by its admins and owner, and by nobody below; and a room row
 * written before kinds, visibility, owners and roles existed reads as a public channel of its creator's.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { startApp } from '../../testkit/app.js';
import { codes, dataOf as ok, gqlAs } from '../../testkit/http.js';
import { signUp, type TestUser } from '../../testkit/data/users.js';
import { post, uniqueRoomName } from '../../testkit/data/rooms.js';
import { roomFeed, type Feed } from '../../testkit/feeds.js';
import { cqlRow } from '../../testkit/cql.js';
import { KindFeedDocument, type KindFeedSubscription } from '../../generated/graphql.js';

let app: App;
beforeAll(async () => {
  app = await startApp({ redis: true });
}, 60_000);

const CREATE = 'mutation($n: String!, $k: RoomKind) { createRoom(input: { name: $n, kind: $k }) { name kind visibility memberPermissions } }';
const JOIN = 'mutation($r: String!) { joinRoom(roomName: $r) { name } }';
const INVITE = 'mutation($r: String!, $l: String!) { inviteToRoom(roomName: $r, login: $l) { createdAt } }';
const ACCEPT = 'mutation($r: String!) { acceptInvitation(roomName: $r) { name } }';
const SET_ROLE = 'mutation($r: String!, $l: String!, $role: RoomRole!) { setRoomRole(roomName: $r, login: $l, role: $role) { name } }';
const POST = 'mutation($r: String!, $c: String!) { postMessage(roomName: $r, content: $c) { id } }';
const REACT = 'mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }';
const POLL = 'mutation($r: String!) { postPoll(input: { roomName: $r, question: "Which?", answers: ["a", "b"] }) { id } }';
const VOTE = 'mutation($m: ID!) { votePoll(messageId: $m, answers: [0]) { voterCount } }';
const MARK_READ = 'mutation($r: String!, $m: ID!) { markRoomRead(roomName: $r, upTo: $m) { unreadCount } }';
const TYPING = 'mutation($r: String!) { sendTyping(roomName: $r) }';
const SET_GRANTS = 'mutation($r: String!, $p: [RoomMemberPermission!]!) { setRoomMemberPermissions(roomName: $r, permissions: $p) { memberPermissions } }';
const PIN = 'mutation($m: ID!) { pinMessage(messageId: $m) { id } }';

async function roomOf(kind: string, owner: TestUser, members: TestUser[] = []): Promise<string> {
  const name = uniqueRoomName(kind.toLowerCase());
  await ok(gqlAs(app, CREATE, { n: name, k: kind }, owner));
  for (const m of members) await ok(gqlAs(app, JOIN, { r: name }, m));
  return name;
}

describe('a GROUP', () => {
  it('is private, its members invite, and it is listed with their rooms with an exact unread count', async () => {
    const [owner, member, friend, outsider] = await Promise.all([signUp(app), signUp(app), signUp(app), signUp(app)]);
    const name = uniqueRoomName('group');
    expect((await ok(gqlAs(app, CREATE, { n: name, k: 'GROUP' }, owner))).createRoom).toEqual({ name, kind: 'GROUP', visibility: 'PRIVATE', memberPermissions: ['INVITE'] });
    expect((await gqlAs(app, 'query($r: String!) { room(roomName: $r) { name } }', { r: name }, outsider)).data).toEqual({ room: null });
    expect(codes(await gqlAs(app, JOIN, { r: name }, outsider))).toEqual(['NOT_FOUND']);
    await ok(gqlAs(app, INVITE, { r: name, l: member.login }, owner));
    await ok(gqlAs(app, ACCEPT, { r: name }, member));
    // A member, not a moderator, invites: the group's INVITE grant.
    await ok(gqlAs(app, INVITE, { r: name, l: friend.login }, member));
    await ok(gqlAs(app, ACCEPT, { r: name }, friend));
    for (const text of ['one', 'two', 'three']) await post(app, owner, name, text);
    const listed = await ok(gqlAs(app, '{ me { chatRooms { name kind readState { unreadCount } } } }', {}, friend));
    expect(listed).toEqual({ me: { chatRooms: [{ name, kind: 'GROUP', readState: { unreadCount: 3 } }] } });
  });

  it('a CHANNEL does not let its members invite, until its owner grants it', async () => {
    const [owner, member, invitee] = await Promise.all([signUp(app), signUp(app), signUp(app)]);
    const name = await roomOf('CHANNEL', owner, [member]);
    expect(codes(await gqlAs(app, INVITE, { r: name, l: invitee.login }, member))).toEqual(['FORBIDDEN']);
    expect((await ok(gqlAs(app, SET_GRANTS, { r: name, p: ['INVITE'] }, owner))).setRoomMemberPermissions).toEqual({ memberPermissions: ['INVITE'] });
    await ok(gqlAs(app, INVITE, { r: name, l: invitee.login }, member));
    // Taken back: the member is refused again.
    await ok(gqlAs(app, SET_GRANTS, { r: name, p: [] }, owner));
    expect(codes(await gqlAs(app, INVITE, { r: name, l: (await signUp(app)).login }, member))).toEqual(['FORBIDDEN']);
  });
});

describe('setRoomMemberPermissions', () => {
  it('is for admins and the owner: a moderator, a member, a guest, an outsider and a former member are refused', async () => {
    const [owner, admin, moderator, member, guest, outsider, former] = await Promise.all(Array.from({ length: 7 }, () => signUp(app)));
    const name = await roomOf('CHANNEL', owner, [admin, moderator, member, guest, former]);
    await ok(gqlAs(app, SET_ROLE, { r: name, l: admin.login, role: 'ADMIN' }, owner));
    await ok(gqlAs(app, SET_ROLE, { r: name, l: moderator.login, role: 'MODERATOR' }, owner));
    await ok(gqlAs(app, SET_ROLE, { r: name, l: guest.login, role: 'GUEST' }, owner));
    await ok(gqlAs(app, 'mutation($r: String!) { leaveRoom(roomName: $r) }', { r: name }, former));
    for (const who of [moderator, member, guest, outsider, former]) {
      expect(codes(await gqlAs(app, SET_GRANTS, { r: name, p: ['PIN'] }, who)), who.login).toEqual(['FORBIDDEN']);
    }
    const message = (await post(app, owner, name, 'pin me')).id;
    expect(codes(await gqlAs(app, PIN, { m: message }, member))).toEqual(['FORBIDDEN']);
    await ok(gqlAs(app, SET_GRANTS, { r: name, p: ['PIN', 'PIN'] }, admin));
    await ok(gqlAs(app, PIN, { m: message }, member));
    // A guest is not a member: the grant is not theirs.
    expect(codes(await gqlAs(app, 'mutation($m: ID!) { unpinMessage(messageId: $m) { id } }', { m: message }, guest))).toEqual(['FORBIDDEN']);
    const bad = await gqlAs(app, SET_GRANTS, { r: name, p: ['DELETE_ROOM'] }, owner);
    expect(codes(bad)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('an ANNOUNCEMENT room', () => {
  it('takes posts from its owner and admins only; its members react and vote, its guests neither', async () => {
    const [owner, admin, moderator, member, guest] = await Promise.all(Array.from({ length: 5 }, () => signUp(app)));
    const name = await roomOf('ANNOUNCEMENT', owner, [admin, moderator, member, guest]);
    await ok(gqlAs(app, SET_ROLE, { r: name, l: admin.login, role: 'ADMIN' }, owner));
    await ok(gqlAs(app, SET_ROLE, { r: name, l: moderator.login, role: 'MODERATOR' }, owner));
    await ok(gqlAs(app, SET_ROLE, { r: name, l: guest.login, role: 'GUEST' }, owner));
    for (const who of [moderator, member, guest]) {
      expect(codes(await gqlAs(app, POST, { r: name, c: 'may I?' }, who)), who.login).toEqual(['FORBIDDEN']);
      expect(codes(await gqlAs(app, TYPING, { r: name }, who)), who.login).toEqual(['FORBIDDEN']);
    }
    await ok(gqlAs(app, POST, { r: name, c: 'from an admin' }, admin));
    const poll = ((await ok(gqlAs(app, POLL, { r: name }, owner))) as { postPoll: { id: string } }).postPoll.id;
    await ok(gqlAs(app, REACT, { m: poll }, member));
    expect(((await ok(gqlAs(app, VOTE, { m: poll }, member))) as { votePoll: { voterCount: number } }).votePoll.voterCount).toBe(1);
    expect(codes(await gqlAs(app, REACT, { m: poll }, guest))).toEqual(['FORBIDDEN']);
    expect(codes(await gqlAs(app, VOTE, { m: poll }, guest))).toEqual(['FORBIDDEN']);
  });
});

describe('a LIVESTREAM room', () => {
  /** The events a feed got, up to and with the message `last`. */
  async function eventsUpTo(feed: Feed<KindFeedSubscription>, last: string): Promise<string[]> {
    const seen: string[] = [];
    for (;;) {
      const event = (await feed.data()).roomEvents as { __typename: string; message?: { content: string | null } };
      seen.push(event.__typename === 'MessagePosted' ? `MessagePosted ${event.message!.content}` : event.__typename);
      if (event.message?.content === last) return seen;
    }
  }

  it('feeds its watchers messages only, where a channel feeds every event (the same steps in both)', async () => {
    const [owner, watcher, newcomer] = await Promise.all([signUp(app), signUp(app), signUp(app)]);
    const [stream, channel] = [await roomOf('LIVESTREAM', owner, [watcher]), await roomOf('CHANNEL', owner, [watcher])];
    const [streamFeed, channelFeed] = [await roomFeed(app, watcher.token, KindFeedDocument, { roomName: stream }), await roomFeed(app, watcher.token, KindFeedDocument, { roomName: channel })];
    const steps = async (room: string) => {
      await ok(gqlAs(app, JOIN, { r: room }, newcomer));
      const poll = ((await ok(gqlAs(app, POLL, { r: room }, owner))) as { postPoll: { id: string } }).postPoll.id;
      await ok(gqlAs(app, REACT, { m: poll }, newcomer));
      await ok(gqlAs(app, VOTE, { m: poll }, newcomer));
      await ok(gqlAs(app, MARK_READ, { r: room, m: poll }, newcomer));
      await post(app, owner, room, 'after');
      await ok(gqlAs(app, 'mutation($r: String!) { leaveRoom(roomName: $r) }', { r: room }, newcomer));
    };
    // The livestream first: its reaction, vote and read windows open before the channel's, which are then awaited.
    await steps(stream);
    await steps(channel);
    const channelSaw = new Set(await eventsUpTo(channelFeed, 'after'));
    for (;;) {
      if (['ReactionChanged', 'PollUpdated', 'RoomReadUpdated', 'ParticipantLeft'].every((kind) => channelSaw.has(kind))) break;
      const event = (await channelFeed.data()).roomEvents;
      channelSaw.add(event.__typename);
    }
    expect(channelSaw).toContain('ParticipantJoined');
    // Anything the livestream had published would be out before this message, in the room's publish order.
    await post(app, owner, stream, 'last');
    expect(await eventsUpTo(streamFeed, 'last')).toEqual(['MessagePosted Which?', 'MessagePosted after', 'MessagePosted last']);
    // No join message in its history either.
    const history = await ok(gqlAs(app, 'query($r: String!) { room(roomName: $r) { messages(first: 10) { edges { node { content } } } } }', { r: stream }, owner));
    expect((history as { room: { messages: { edges: Array<{ node: { content: string } }> } } }).room.messages.edges.map((e) => e.node.content)).toEqual(['last', 'after', 'Which?']);
  });

  it("ends a watcher's feed as they leave, at once", async () => {
    const [owner, watcher] = await Promise.all([signUp(app), signUp(app)]);
    const stream = await roomOf('LIVESTREAM', owner, [watcher]);
    const feed = await roomFeed(app, watcher.token, KindFeedDocument, { roomName: stream });
    await ok(gqlAs(app, 'mutation($r: String!) { leaveRoom(roomName: $r) }', { r: stream }, watcher));
    expect((await feed.data()).roomEvents.__typename).toBe('ParticipantLeft');
    await feed.completed;
  });

  it('has no typing and no presence: BAD_USER_INPUT on roomName, and nobody listed online', async () => {
    const [owner, watcher] = await Promise.all([signUp(app), signUp(app)]);
    const stream = await roomOf('LIVESTREAM', owner, [watcher]);
    const typing = await gqlAs(app, TYPING, { r: stream }, watcher);
    expect([codes(typing), typing.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'roomName']);
    await roomFeed(app, watcher.token, KindFeedDocument, { roomName: stream });
    const online = await ok(gqlAs(app, 'query($r: String!) { room(roomName: $r) { onlineParticipants { login } } }', { r: stream }, owner));
    expect(online).toEqual({ room: { onlineParticipants: [] } });
    const presence = await gqlAs(app, 'subscription($r: String!) { roomPresence(roomName: $r) { online } }', { r: stream }, watcher);
    expect(codes(presence)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('a room written before kinds, visibility, owners and roles', () => {
  it('is a public channel: its creator owns it, its moderators moderate, anyone joins, and its owner hands it on', async () => {
    const [creator, moderator, member, newcomer] = await Promise.all([signUp(app), signUp(app), signUp(app), signUp(app)]);
    const name = uniqueRoomName('old');
    const person = (u: TestUser) => ({ login: u.login, firstname: u.firstname, lastname: u.lastname });
    // The row as cql/002 and cql/009 wrote it: none of the columns added since.
    await cqlRow(
      app,
      'INSERT INTO chat_rooms (room_name, creation_date, banner, creator, creator_login, participants, moderators) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [name, new Date(), null, person(creator), creator.login, [person(creator), person(moderator), person(member)], [moderator.login]],
    );
    for (const u of [creator, moderator, member]) await cqlRow(app, 'UPDATE users SET chat_rooms = chat_rooms + ? WHERE login = ?', [[name], u.login]);
    const ROOM = 'query($r: String!) { room(roomName: $r) { kind visibility memberPermissions owner { login } viewerRole } }';
    expect(await ok(gqlAs(app, ROOM, { r: name }, creator))).toEqual({
      room: { kind: 'CHANNEL', visibility: 'PUBLIC', memberPermissions: [], owner: { login: creator.login }, viewerRole: 'OWNER' },
    });
    expect(((await ok(gqlAs(app, ROOM, { r: name }, moderator))) as { room: { viewerRole: string } }).room.viewerRole).toBe('MODERATOR');
    expect(((await ok(gqlAs(app, ROOM, { r: name }, member))) as { room: { viewerRole: string } }).room.viewerRole).toBe('MEMBER');
    await ok(gqlAs(app, JOIN, { r: name }, newcomer));
    await ok(gqlAs(app, 'mutation($r: String!, $l: String!) { muteParticipant(roomName: $r, login: $l, minutes: 5) { name } }', { r: name, l: member.login }, moderator));
    expect(codes(await gqlAs(app, POST, { r: name, c: 'hello' }, member))).toEqual(['MUTED']);
    await ok(gqlAs(app, 'mutation($r: String!, $l: String!) { transferRoomOwnership(roomName: $r, login: $l) { name } }', { r: name, l: newcomer.login }, creator));
    expect(((await ok(gqlAs(app, ROOM, { r: name }, newcomer))) as { room: { viewerRole: string } }).room.viewerRole).toBe('OWNER');
  });
});
