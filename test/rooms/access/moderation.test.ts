/**
 * Moderation and flood control: moderators, removal, bans (holding under a
 * racing join), mutes, slow mode and the per-user send limit, over HTTP and
 * graphql-ws against the real node and two instances sharing Redis.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import {
  DeleteRoomDocument,
  EditMessageDocument,
  JoinRoomDocument,
  LeaveRoomDocument,
  ModerationEventsDocument,
  MuteParticipantDocument,
  PostMessageDocument,
  RemoveParticipantDocument,
  RoomDocument,
  RoomModerationDocument,
  SetRoomModeratorDocument,
  SetSlowModeDocument,
  UnbanFromRoomDocument,
} from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';
import { post, rawChatRooms, rawRoomRow, roomWith } from '../../testkit/data/rooms.js';
import { roomFeed } from '../../testkit/feeds.js';
import { cqlRow, cqlRows } from '../../testkit/cql.js';
import { dayBucket } from '../../../src/buckets.js';
import { onNextStatement } from '../../testkit/faults/statement-faults.js';

let a: App;
let b: App;
let limited: App;
let limitedToo: App;
let alice: TestUser; // creates the rooms
let mod: TestUser;
let bob: TestUser;
let carol: TestUser;

beforeAll(async () => {
  const fivePerMinute = { ROOM_POSTS_PER_WINDOW: '5', ROOM_POST_WINDOW_SECONDS: '60' };
  [a, b, limited, limitedToo] = await Promise.all([
    startApp({ redis: true }),
    startApp({ redis: true }),
    startApp({ redis: true, env: fivePerMinute }),
    startApp({ redis: true, env: fivePerMinute }),
  ]);
  [alice, mod, bob, carol] = await Promise.all([signUp(a), signUp(a), signUp(a), signUp(a)]);
});

const participantsOf = async (name: string) =>
  ((await gqlOk(a, RoomDocument, { roomName: name }, alice.token)).room?.participants ?? []).map((p) => p.login);

async function moderatedRoom() {
  const name = await roomWith(a, alice, [mod, bob, carol]);
  await gqlOk(a, SetRoomModeratorDocument, { roomName: name, login: mod.login, moderator: true }, alice.token);
  return name;
}

describe('moderators and their powers', () => {
  it('lets the creator name moderators, and only the creator act on them or be spared', async () => {
    const name = await moderatedRoom();
    expect((await gqlOk(a, RoomDocument, { roomName: name }, bob.token)).room).toBeTruthy();
    expect(codes(await gql(a, SetRoomModeratorDocument, { roomName: name, login: bob.login, moderator: true }, mod.token))).toEqual(['FORBIDDEN']);
    expect(codes(await gql(a, MuteParticipantDocument, { roomName: name, login: carol.login, minutes: 5 }, bob.token))).toEqual(['FORBIDDEN']);
    const onCreator = await gql(a, MuteParticipantDocument, { roomName: name, login: alice.login, minutes: 5 }, mod.token);
    expect([codes(onCreator), onCreator.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'login']);
    await gqlOk(a, SetRoomModeratorDocument, { roomName: name, login: bob.login, moderator: true }, alice.token);
    expect(codes(await gql(a, RemoveParticipantDocument, { roomName: name, login: bob.login }, mod.token))).toEqual(['FORBIDDEN']);
    const badMinutes = await gql(a, MuteParticipantDocument, { roomName: name, login: carol.login, minutes: -1 }, mod.token);
    expect([codes(badMinutes), badMinutes.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT'], 'minutes']);
  });

  it('removes a participant (who may come back) and ends their feed', async () => {
    const name = await moderatedRoom();
    const bobsFeed = await roomFeed(b, bob.token, ModerationEventsDocument, { roomName: name });
    const after = (await gqlOk(a, RemoveParticipantDocument, { roomName: name, login: bob.login }, mod.token)).removeParticipant;
    expect(after.participants.map((p) => p.login)).not.toContain(bob.login);
    expect((await bobsFeed.data()).roomEvents).toMatchObject({ __typename: 'ParticipantRemoved', user: { login: bob.login }, by: { login: mod.login }, banned: false });
    await bobsFeed.completed;
    expect(await participantsOf(name)).not.toContain(bob.login);
    expect(codes(await gql(a, PostMessageDocument, { roomName: name, content: 'still here?' }, bob.token))).toEqual(['FORBIDDEN']);
    await gqlOk(b, JoinRoomDocument, { roomName: name }, bob.token);
    expect(await participantsOf(name)).toContain(bob.login);
  });

  it('bans: no joining, no posting, until unbanned', async () => {
    const name = await moderatedRoom();
    const banned = (await gqlOk(a, RemoveParticipantDocument, { roomName: name, login: carol.login, ban: true }, mod.token)).removeParticipant;
    expect(banned.bannedParticipants!.edges.map((e) => e.node.login)).toEqual([carol.login]);
    expect(codes(await gql(b, JoinRoomDocument, { roomName: name }, carol.token))).toEqual(['BANNED']);
    expect(codes(await gql(a, PostMessageDocument, { roomName: name, content: 'let me in' }, carol.token))).toEqual(['BANNED']);
    expect((await rawChatRooms(a, carol.login)).has(name)).toBe(false);
    const unbanned = (await gqlOk(a, UnbanFromRoomDocument, { roomName: name, login: carol.login }, mod.token)).unbanFromRoom;
    expect(unbanned.bannedParticipants!.edges.map((e) => e.node.login)).not.toContain(carol.login);
    await gqlOk(a, JoinRoomDocument, { roomName: name }, carol.token);
    await post(a, carol, name, 'back');
  });

  it('mutes: posts refused with MUTED and when it ends, until lifted', async () => {
    const name = await moderatedRoom();
    const feed = await roomFeed(a, alice.token, ModerationEventsDocument, { roomName: name });
    await gqlOk(a, MuteParticipantDocument, { roomName: name, login: bob.login, minutes: 10 }, mod.token);
    const event = (await feed.data()).roomEvents;
    expect(event).toMatchObject({ __typename: 'ParticipantMuted', user: { login: bob.login } });
    const refused = await gql(b, PostMessageDocument, { roomName: name, content: 'hello?' }, bob.token);
    expect(codes(refused)).toEqual(['MUTED']);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ mutedUntil: (event as { until: string }).until });
    expect(Number(refused.errors?.[0]?.extensions?.retryAfter)).toBeGreaterThan(590);
    await gqlOk(a, MuteParticipantDocument, { roomName: name, login: bob.login, minutes: 0 }, mod.token);
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'ParticipantMuted', until: null });
    await post(b, bob, name, 'thanks');
    // Nor may a muted participant rewrite what they posted before.
    const earlier = (await gqlOk(a, PostMessageDocument, { roomName: name, content: 'before the mute' }, carol.token)).postMessage;
    await gqlOk(a, MuteParticipantDocument, { roomName: name, login: carol.login, minutes: 1 }, mod.token);
    expect(codes(await gql(a, EditMessageDocument, { messageId: earlier.id, content: 'rewritten' }, carol.token))).toEqual(['MUTED']);
  });

  it('slow mode: one message per window per participant across instances, moderators exempt', async () => {
    const name = await moderatedRoom();
    const feed = await roomFeed(a, alice.token, ModerationEventsDocument, { roomName: name });
    expect((await gqlOk(a, SetSlowModeDocument, { roomName: name, seconds: 30 }, mod.token)).setSlowMode.slowModeSeconds).toBe(30);
    expect((await feed.data()).roomEvents).toMatchObject({ __typename: 'SlowModeChanged', seconds: 30 });
    await post(a, bob, name, 'first');
    const second = await gql(b, PostMessageDocument, { roomName: name, content: 'second' }, bob.token);
    expect(codes(second)).toEqual(['RATE_LIMITED']);
    expect(second.errors?.[0]?.extensions?.reason).toBe('SLOW_MODE');
    expect(Number(second.errors?.[0]?.extensions?.retryAfter)).toBeGreaterThan(0);
    await post(a, carol, name, 'carol has her own window');
    for (let i = 0; i < 3; i++) await post(b, mod, name, `moderators are exempt ${i}`);
    await gqlOk(a, SetSlowModeDocument, { roomName: name, seconds: 0 }, alice.token);
    await post(b, bob, name, 'off again');
  });
});

describe('the per-user send limit', () => {
  it('is shared by every room and every instance, and says when to retry', async () => {
    const user = await signUp(limited);
    const [r1, r2] = [await roomWith(limited, user), await roomWith(limited, user)];
    // Five in the window (5 per 60 s on both limited instances), across two rooms and both instances: a count
    // kept per instance would let each take five.
    for (let i = 0; i < 5; i++) await post(i % 2 ? limited : limitedToo, user, i % 2 ? r1 : r2, `message ${i}`);
    const sixth = await gql(limitedToo, PostMessageDocument, { roomName: r1, content: 'one too many' }, user.token);
    expect(codes(sixth)).toEqual(['RATE_LIMITED']);
    expect(sixth.errors?.[0]?.extensions?.reason).toBe('POST_RATE');
    expect(Number(sixth.errors?.[0]?.extensions?.retryAfter)).toBeGreaterThan(0);
    // Someone else is not limited by it.
    const other = await signUp(limited);
    await gqlOk(limited, JoinRoomDocument, { roomName: r1 }, other.token);
    await post(limited, other, r1, 'my own budget');
  });
});

describe('a ban racing a join', () => {
  type Outcome = 'joinedThenRemoved' | 'refused';

  /**
   * One round on a fresh room: the racer joins while the creator bans them, on the two instances, at once or in
   * the order `staged` asks (the other one runs to its end just before this one's LWT is sent). Either way the
   * banned user never ends up a participant, nor with the room in their list.
   */
  async function round(racer: TestUser, i: number, staged?: Outcome): Promise<Outcome> {
    const name = await roomWith(a, alice);
    const [joinOn, banOn] = [i % 2 ? a : b, i % 2 ? b : a];
    const join = () => gql(joinOn, JoinRoomDocument, { roomName: name }, racer.token);
    const ban = () => gql(banOn, RemoveParticipantDocument, { roomName: name, login: racer.login, ban: true }, alice.token);
    let joined: Awaited<ReturnType<typeof join>> | undefined;
    let banned: Awaited<ReturnType<typeof ban>> | undefined;
    if (staged === 'refused') {
      onNextStatement(joinOn, /participants = participants \+ \?/, async () => void (banned = await ban()));
      joined = await join();
    } else if (staged === 'joinedThenRemoved') {
      onNextStatement(banOn, /SET banned\[\?\]/, async () => void (joined = await join()));
      banned = await ban();
    } else {
      [joined, banned] = await Promise.all([join(), ban()]);
    }
    expect(banned!.errors).toBeUndefined();
    if (joined!.errors) expect(codes(joined!)).toEqual(['BANNED']);
    const row = await rawRoomRow(a, name);
    const participants = [...((row!.participants as Set<{ login: string }>) ?? [])].map((p) => p.login);
    expect(participants).not.toContain(racer.login);
    expect((await rawChatRooms(a, racer.login)).has(name)).toBe(false);
    expect(codes(await gql(a, JoinRoomDocument, { roomName: name }, racer.token))).toEqual(['BANNED']);
    return joined!.data ? 'joinedThenRemoved' : 'refused';
  }

  it('holds: the banned user never ends up a participant (each order staged once, then 20 rounds at once)', async () => {
    const racers = await signUpMany(a, 22, 'banned');
    expect(await round(racers[0]!, 0, 'joinedThenRemoved')).toBe('joinedThenRemoved');
    expect(await round(racers[1]!, 1, 'refused')).toBe('refused');
    for (let i = 2; i < racers.length; i++) await round(racers[i]!, i);
  });
});

describe('a moderator who is no longer a participant', () => {
  /** What `user` can still do as a moderator: each attempt must be refused and change nothing. */
  async function expectNoPowers(name: string, former: TestUser) {
    const attempts = await Promise.all([
      gql(a, RemoveParticipantDocument, { roomName: name, login: bob.login, ban: true }, former.token),
      gql(b, RemoveParticipantDocument, { roomName: name, login: carol.login }, former.token),
      gql(a, MuteParticipantDocument, { roomName: name, login: bob.login, minutes: 60 }, former.token),
      gql(b, SetSlowModeDocument, { roomName: name, seconds: 3600 }, former.token),
      gql(a, UnbanFromRoomDocument, { roomName: name, login: bob.login }, former.token),
    ]);
    expect(attempts.map(codes)).toEqual(Array.from({ length: 5 }, () => ['FORBIDDEN']));
    const room = (await gqlOk(a, RoomModerationDocument, { roomName: name }, alice.token)).room!;
    expect(room.moderators).not.toContain(former.login);
    expect(room.slowModeSeconds).toBeNull();
    expect(room.bannedParticipants!.edges.map((e) => e.node.login)).not.toContain(bob.login);
    expect(room.mutedParticipants!.edges).toEqual([]);
    expect(await participantsOf(name)).toEqual(expect.arrayContaining([bob.login, carol.login]));
    await post(b, bob, name, 'still free to post');
  }

  it('moderates no more once banned, and the ban takes them off the moderators', async () => {
    const name = await moderatedRoom();
    const after = (await gqlOk(a, RemoveParticipantDocument, { roomName: name, login: mod.login, ban: true }, alice.token)).removeParticipant;
    expect(after.moderators).toEqual([]);
    expect([...((await cqlRow(a, 'SELECT moderators FROM chat_rooms WHERE room_name = ?', [name]))?.moderators ?? [])]).toEqual([]);
    await expectNoPowers(name, mod);
  });

  it('moderates no more after leaving, nor after joining again', async () => {
    const name = await moderatedRoom();
    await gqlOk(a, LeaveRoomDocument, { roomName: name }, mod.token);
    await expectNoPowers(name, mod);
    await gqlOk(b, JoinRoomDocument, { roomName: name }, mod.token);
    await expectNoPowers(name, mod);
  });

  it('moderates no more after being removed and joining again', async () => {
    const name = await moderatedRoom();
    await gqlOk(b, RemoveParticipantDocument, { roomName: name, login: mod.login }, alice.token);
    await expectNoPowers(name, mod);
    await gqlOk(a, JoinRoomDocument, { roomName: name }, mod.token);
    await expectNoPowers(name, mod);
  });

  it('moderates nothing in a new room of the same name after the room was deleted', async () => {
    const name = await moderatedRoom();
    await gqlOk(a, DeleteRoomDocument, { roomName: name }, alice.token);
    await roomWith(a, alice, [mod, bob, carol], name);
    await expectNoPowers(name, mod);
  });

  it('bans nobody when the banning moderator is removed while the ban runs', async () => {
    const name = await moderatedRoom();
    // The creator removes the moderator (on the other instance) just before the moderator's ban LWT is sent: the
    // LWT finds the participants changed, and the ban's next try must find its moderator gone.
    const staged = onNextStatement(a, /SET banned\[\?\]/, async () => {
      await gqlOk(b, RemoveParticipantDocument, { roomName: name, login: mod.login }, alice.token);
    });
    const ban = await gql(a, RemoveParticipantDocument, { roomName: name, login: bob.login, ban: true }, mod.token);
    expect(staged.fired()).toBe(true);
    expect(codes(ban)).toEqual(['FORBIDDEN']);
    expect(await participantsOf(name)).toContain(bob.login);
    expect((await gqlOk(a, RoomModerationDocument, { roomName: name }, alice.token)).room!.bannedParticipants!.edges).toEqual([]);
  });

  it('moderates nothing while named but not taking part (a naming that raced their departure)', async () => {
    const name = await roomWith(a, alice, [bob, carol]);
    // Stored as that race leaves it: named a moderator, not a participant.
    await cqlRow(a, 'UPDATE chat_rooms SET moderators = moderators + ? WHERE room_name = ?', [new Set([mod.login]), name]);
    await expectNoPowers(name, mod);
    // A join starts without the name.
    await gqlOk(a, JoinRoomDocument, { roomName: name }, mod.token);
    expect([...((await cqlRow(a, 'SELECT moderators FROM chat_rooms WHERE room_name = ?', [name]))?.moderators ?? [])]).toEqual([]);
  });
});

describe('a demotion racing the demoted moderator', () => {
  const moderationRow = (name: string) => cqlRow(a, 'SELECT banned, muted_until, slow_mode_seconds, moderators FROM chat_rooms WHERE room_name = ?', [name]);
  const demote = (name: string) => gqlOk(b, SetRoomModeratorDocument, { roomName: name, login: mod.login, moderator: false }, alice.token);

  it('a ban, an unban, a mute, an unmute and slow mode whose LWT goes just after the demotion do not apply: FORBIDDEN, nothing changed', async () => {
    const byOwner = (doc: 'ban' | 'mute') => async (name: string) => {
      if (doc === 'ban') await gqlOk(a, RemoveParticipantDocument, { roomName: name, login: carol.login, ban: true }, alice.token);
      else await gqlOk(a, MuteParticipantDocument, { roomName: name, login: bob.login, minutes: 5 }, alice.token);
    };
    const actions = [
      { cql: /SET banned\[\?\]/, run: (name: string) => gql(a, RemoveParticipantDocument, { roomName: name, login: bob.login, ban: true }, mod.token) },
      { cql: /SET banned = banned -/, before: byOwner('ban'), run: (name: string) => gql(a, UnbanFromRoomDocument, { roomName: name, login: carol.login }, mod.token) },
      { cql: /SET muted_until\[\?\]/, run: (name: string) => gql(a, MuteParticipantDocument, { roomName: name, login: bob.login, minutes: 5 }, mod.token) },
      { cql: /DELETE muted_until\[\?\]/, before: byOwner('mute'), run: (name: string) => gql(a, MuteParticipantDocument, { roomName: name, login: bob.login, minutes: 0 }, mod.token) },
      { cql: /SET slow_mode_seconds/, run: (name: string) => gql(a, SetSlowModeDocument, { roomName: name, seconds: 30 }, mod.token) },
    ];
    const stateOf = async (name: string) => {
      const row = await moderationRow(name);
      return [row!.banned ?? null, row!.muted_until ?? null, row!.slow_mode_seconds ?? null];
    };
    for (const action of actions) {
      const name = await moderatedRoom();
      await action.before?.(name);
      const before = await stateOf(name);
      // The creator demotes the moderator (on the other instance) once the action has read the room and passed its
      // checks, just before its LWT is sent.
      const staged = onNextStatement(a, action.cql, async () => void (await demote(name)));
      const answer = await action.run(name);
      expect(staged.fired(), String(action.cql)).toBe(true);
      expect(codes(answer), String(action.cql)).toEqual(['FORBIDDEN']);
      expect(await stateOf(name), String(action.cql)).toEqual(before);
      expect(await participantsOf(name)).toContain(bob.login);
      // Nor is a listing of a refused ban left for the room notices job.
      const listed = await cqlRows(a, 'SELECT login, kind FROM pending_room_notices WHERE day = ? AND room_name = ?', [dayBucket(new Date()), name]);
      expect(listed.filter((n) => n.login === bob.login)).toEqual([]);
    }
  });

  it('20 rounds at once on two instances: the ban answered is in place, the ban refused left nothing, nothing else answered', async () => {
    const outcomes = { banned: 0, refused: 0 };
    for (let i = 0; i < 20; i++) {
      const name = await moderatedRoom();
      const [ban] = await Promise.all([gql(a, RemoveParticipantDocument, { roomName: name, login: bob.login, ban: true }, mod.token), demote(name)]);
      const row = await moderationRow(name);
      const banned = new Map(Object.entries((row!.banned as Record<string, Date> | null) ?? {}));
      if (ban.errors) {
        expect(codes(ban)).toEqual(['FORBIDDEN']);
        expect(banned.has(bob.login)).toBe(false);
        outcomes.refused += 1;
      } else {
        expect(banned.has(bob.login)).toBe(true);
        outcomes.banned += 1;
      }
      expect([...((row!.moderators as Set<string> | null) ?? [])]).toEqual([]);
    }
    console.log(`[demotion against a ban] 20 rounds: ${JSON.stringify(outcomes)}`);
  });
});

describe("a moderator's view of the room", () => {
  it('pages the banned and the muted, for moderators only, and tells a muted viewer until when', async () => {
    const people = await signUpMany(a, 5, 'modview');
    const name = await roomWith(a, alice, [mod, bob, ...people]);
    await gqlOk(a, SetRoomModeratorDocument, { roomName: name, login: mod.login, moderator: true }, alice.token);
    for (const p of people.slice(0, 3)) await gqlOk(a, RemoveParticipantDocument, { roomName: name, login: p.login, ban: true }, mod.token);
    const muted = (await gqlOk(a, MuteParticipantDocument, { roomName: name, login: people[3]!.login, minutes: 30 }, mod.token)).muteParticipant;
    const until = muted.mutedParticipants!.edges[0]!.node.mutedUntil;
    expect(muted.mutedParticipants!.edges.map((e) => e.node.login)).toEqual([people[3]!.login]);

    const bannedLogins = people.slice(0, 3).map((p) => p.login).sort();
    const first = (await gqlOk(b, RoomModerationDocument, { roomName: name, first: 2 }, mod.token)).room!;
    expect(first.bannedParticipants!.edges.map((e) => e.node.login)).toEqual(bannedLogins.slice(0, 2));
    expect(first.bannedParticipants!.edges[0]!.node.user).toMatchObject({ login: bannedLogins[0] });
    expect(first.bannedParticipants!.pageInfo.hasNextPage).toBe(true);
    const rest = (await gqlOk(a, RoomModerationDocument, { roomName: name, first: 2, after: first.bannedParticipants!.pageInfo.endCursor }, alice.token)).room!;
    expect(rest.bannedParticipants!.edges.map((e) => e.node.login)).toEqual(bannedLogins.slice(2));
    expect(rest.bannedParticipants!.pageInfo.hasNextPage).toBe(false);
    expect(Date.parse(rest.bannedParticipants!.edges[0]!.node.bannedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(first.mutedParticipants!.edges.map((e) => e.node)).toMatchObject([{ login: people[3]!.login, mutedUntil: until }]);

    // Anyone else sees no lists; the muted participant sees their own mute, the others none.
    const asMuted = (await gqlOk(a, RoomModerationDocument, { roomName: name }, people[3]!.token)).room!;
    expect([asMuted.bannedParticipants, asMuted.mutedParticipants, asMuted.viewerMutedUntil]).toEqual([null, null, until]);
    const asBob = (await gqlOk(a, RoomModerationDocument, { roomName: name }, bob.token)).room!;
    expect([asBob.bannedParticipants, asBob.mutedParticipants, asBob.viewerMutedUntil]).toEqual([null, null, null]);
    const bad = await gql(a, RoomModerationDocument, { roomName: name, after: 'nope' }, mod.token);
    expect([codes(bad), bad.errors?.[0]?.extensions?.field]).toEqual([['BAD_USER_INPUT', 'BAD_USER_INPUT'], 'after']);
  });
});
