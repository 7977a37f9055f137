/**
 * Moderation and flood control: moderators, removal, bans (holding under a
 * racing join), mutes, slow mode and the per-user send limit, over HTTP and
 * graphql-ws against the real node and two instances sharing Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import {
  EditMessageDocument,
  JoinRoomDocument,
  ModerationEventsDocument,
  MuteParticipantDocument,
  PostMessageDocument,
  RemoveParticipantDocument,
  RoomDocument,
  SetRoomModeratorDocument,
  SetSlowModeDocument,
  UnbanFromRoomDocument,
} from './generated/graphql.js';
import { startApp } from './testkit/app.js';
import { codes, gql, gqlOk } from './testkit/http.js';
import { signUp, signUpMany, type TestUser } from './testkit/users.js';
import { post, rawChatRooms, rawRoomRow, roomWith } from './testkit/rooms.js';
import { roomFeed, type Feed } from './testkit/feeds.js';

let a: App;
let b: App;
let limited: App;
let alice: TestUser; // creates the rooms
let mod: TestUser;
let bob: TestUser;
let carol: TestUser;
const feeds: Feed<unknown>[] = [];

beforeAll(async () => {
  [a, b, limited] = await Promise.all([
    startApp({ redis: true }),
    startApp({ redis: true }),
    startApp({ redis: true, env: { ROOM_POSTS_PER_WINDOW: '5', ROOM_POST_WINDOW_SECONDS: '60' } }),
  ]);
  [alice, mod, bob, carol] = await Promise.all([signUp(a), signUp(a), signUp(a), signUp(a)]);
});

afterAll(async () => {
  await Promise.all(feeds.map((f) => f.client.dispose()));
});

const participantsOf = async (name: string) =>
  ((await gqlOk(a, RoomDocument, { name }, alice.token)).room?.participants ?? []).map((p) => p.login);

async function moderatedRoom() {
  const name = await roomWith(a, alice, [mod, bob, carol]);
  await gqlOk(a, SetRoomModeratorDocument, { name, login: mod.login, moderator: true }, alice.token);
  return name;
}

describe('moderators and their powers', () => {
  it('lets the creator name moderators, and only the creator act on them or be spared', async () => {
    const name = await moderatedRoom();
    expect((await gqlOk(a, RoomDocument, { name }, bob.token)).room).toBeTruthy();
    expect(codes(await gql(a, SetRoomModeratorDocument, { name, login: bob.login, moderator: true }, mod.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(a, MuteParticipantDocument, { name, login: carol.login, minutes: 5 }, bob.token))).toEqual(['FORBIDDEN']);
    const onCreator = await gql(a, MuteParticipantDocument, { name, login: alice.login, minutes: 5 }, mod.token);
    expect([codes(onCreator), onCreator.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'login']);
    await gqlOk(a, SetRoomModeratorDocument, { name, login: bob.login, moderator: true }, alice.token);
    expect(codes(await gql(a, RemoveParticipantDocument, { name, login: bob.login }, mod.token))).toEqual(['FORBIDDEN']);
    const badMinutes = await gql(a, MuteParticipantDocument, { name, login: carol.login, minutes: -1 }, mod.token);
    expect([codes(badMinutes), badMinutes.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'minutes']);
  });

  it('removes a participant (who may come back) and ends their feed', async () => {
    const name = await moderatedRoom();
    const bobsFeed = await roomFeed(b, bob.token, ModerationEventsDocument, { roomName: name });
    feeds.push(bobsFeed as Feed<unknown>);
    expect((await gqlOk(a, RemoveParticipantDocument, { name, login: bob.login }, mod.token)).removeParticipant).toBe(true);
    expect((await bobsFeed.data()).roomEvents).toMatchObject({ __typename: 'ParticipantRemoved', user: { login: bob.login }, by: { login: mod.login }, banned: false });
    await bobsFeed.completed;
    expect(await participantsOf(name)).not.toContain(bob.login);
    expect(codes(await gql(a, PostMessageDocument, { roomName: name, content: 'still here?' }, bob.token))).toEqual(['FORBIDDEN']);
    await gqlOk(b, JoinRoomDocument, { name }, bob.token);
    expect(await participantsOf(name)).toContain(bob.login);
  });

  it('bans: no joining, no posting, until unbanned', async () => {
    const name = await moderatedRoom();
    await gqlOk(a, RemoveParticipantDocument, { name, login: carol.login, ban: true }, mod.token);
    expect(codes(await gql(b, JoinRoomDocument, { name }, carol.token))).toEqual(['BANNED']);
    expect(codes(await gql(a, PostMessageDocument, { roomName: name, content: 'let me in' }, carol.token))).toEqual(['BANNED']);
    expect((await rawChatRooms(a, carol.login)).has(name)).toBe(false);
    expect((await gqlOk(a, UnbanFromRoomDocument, { name, login: carol.login }, mod.token)).unbanFromRoom).toBe(true);
    await gqlOk(a, JoinRoomDocument, { name }, carol.token);
    await post(a, carol, name, 'back');
  });

  it('mutes: posts refused with MUTED and when it ends, until lifted', async () => {
    const name = await moderatedRoom();
    const feed = await roomFeed(a, alice.token, ModerationEventsDocument, { roomName: name });
    feeds.push(feed as Feed<unknown>);
    await gqlOk(a, MuteParticipantDocument, { name, login: bob.login, minutes: 10 }, mod.token);
    const event = (await feed.data()).roomEvents;
    expect(event).toMatchObject({ __typename: 'ParticipantMuted', user: { login: bob.login } });
    const refused = await gql(b, PostMessageDocument, { roomName: name, content: 'hello?' }, bob.token);
    expect(codes(refused)).toEqual(['MUTED']);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ mutedUntil: (event as { until: string }).until });
    expect(Number(refused.errors?.[0]?.extensions?.retryAfter)).toBeGreaterThan(590);
    await gqlOk(a, MuteParticipantDocument, { name, login: bob.login, minutes: 0 }, mod.token);
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'ParticipantMuted', until: null });
    await post(b, bob, name, 'thanks');
    // Nor may a muted participant rewrite what they posted before.
    const earlier = (await gqlOk(a, PostMessageDocument, { roomName: name, content: 'before the mute' }, carol.token)).postMessage;
    await gqlOk(a, MuteParticipantDocument, { name, login: carol.login, minutes: 1 }, mod.token);
    expect(codes(await gql(a, EditMessageDocument, { id: earlier.id, content: 'rewritten' }, carol.token))).toEqual(['MUTED']);
  });

  it('slow mode: one message per window per participant across instances, moderators exempt', async () => {
    const name = await moderatedRoom();
    const feed = await roomFeed(a, alice.token, ModerationEventsDocument, { roomName: name });
    feeds.push(feed as Feed<unknown>);
    expect((await gqlOk(a, SetSlowModeDocument, { name, seconds: 30 }, mod.token)).setSlowMode.slowModeSeconds).toBe(30);
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'SlowModeChanged', seconds: 30 });
    await post(a, bob, name, 'first');
    const second = await gql(b, PostMessageDocument, { roomName: name, content: 'second' }, bob.token);
    expect(codes(second)).toEqual(['RATE_LIMITED']);
    expect(Number(second.errors?.[0]?.extensions?.retryAfter)).toBeGreaterThan(0);
    await post(a, carol, name, 'carol has her own window');
    for (let i = 0; i < 3; i++) await post(b, mod, name, `moderators are exempt ${i}`);
    await gqlOk(a, SetSlowModeDocument, { name, seconds: 0 }, alice.token);
    await post(b, bob, name, 'off again');
  });
});

describe('the per-user send limit', () => {
  it('is shared by every room and every instance, and says when to retry', async () => {
    const user = await signUp(limited);
    const [r1, r2] = [await roomWith(limited, user), await roomWith(limited, user)];
    // Five in the window (set to 5 per 60 s for this instance), across two rooms.
    for (let i = 0; i < 5; i++) await post(limited, user, i % 2 ? r1 : r2, `message ${i}`);
    const sixth = await gql(limited, PostMessageDocument, { roomName: r1, content: 'one too many' }, user.token);
    expect(codes(sixth)).toEqual(['RATE_LIMITED']);
    expect(Number(sixth.errors?.[0]?.extensions?.retryAfter)).toBeGreaterThan(0);
    // Someone else is not limited by it.
    const other = await signUp(limited);
    await gqlOk(limited, JoinRoomDocument, { name: r1 }, other.token);
    await post(limited, other, r1, 'my own budget');
  });
});

describe('a ban racing a join', () => {
  it('holds: the banned user never ends up a participant (20 rounds, across instances)', async () => {
    const racers = await signUpMany(a, 20, 'banned');
    const outcomes = { joinedThenRemoved: 0, refused: 0 };
    for (const [i, racer] of racers.entries()) {
      const name = await roomWith(a, alice);
      const [join, ban] = await Promise.all([
        gql(i % 2 ? a : b, JoinRoomDocument, { name }, racer.token),
        gql(i % 2 ? b : a, RemoveParticipantDocument, { name, login: racer.login, ban: true }, alice.token),
      ]);
      expect(ban.errors).toBeUndefined();
      if (join.data) outcomes.joinedThenRemoved += 1;
      else {
        expect(codes(join)).toEqual(['BANNED']);
        outcomes.refused += 1;
      }
      const row = await rawRoomRow(a, name);
      const participants = [...((row!.participants as Set<{ login: string }>) ?? [])].map((p) => p.login);
      expect(participants).not.toContain(racer.login);
      expect((await rawChatRooms(a, racer.login)).has(name)).toBe(false);
      expect(codes(await gql(a, JoinRoomDocument, { name }, racer.token))).toEqual(['BANNED']);
    }
    expect(outcomes.joinedThenRemoved + outcomes.refused).toBe(20);
  });
});
