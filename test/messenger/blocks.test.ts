/**
 * Blocking in the messenger: a blocked user's direct messages are refused,
 * on every server at once, and the blocker cannot write to them either until
 * they unblock; nobody else is affected, and what was sent before stays.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import {
  BlockUserDocument,
  BlockedUsersDocument,
  ConversationsDocument,
  SendDirectMessageDocument,
  UnblockUserDocument,
} from '../generated/graphql.js';
import { startApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { seedUserRow, signUp, uniqueLogin, type TestUser } from '../testkit/data/users.js';
import { send } from '../testkit/data/messenger.js';
import { Limits } from '../../src/limits.js';
import { cqlRows } from '../testkit/cql.js';

let a: App;
let b: App;
beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
});

const sendOn = (app: App, from: TestUser, to: TestUser, content: string) =>
  gql(app, SendDirectMessageDocument, { to: to.login, content }, from.token);

/** A block written straight to storage, for filling a list up to the limit fast. */
const blockedInStorage = (user: TestUser, login: string) =>
  cqlRows(a, 'INSERT INTO user_blocks (login, blocked, blocked_at) VALUES (?, ?, ?)', [user.login, login, new Date()]);

const partnersOf = async (user: TestUser) =>
  (await gqlOk(a, ConversationsDocument, { first: 50 }, user.token)).conversations.edges.map((e) => e.node.partner.login).sort();

describe('blockUser', () => {
  it("refuses the blocked user's messages on every server, and the blocker's to them, until unblocked", async () => {
    const [bob, carol, dave] = await Promise.all([signUp(a), signUp(a), signUp(a)]);
    await send(a, carol, bob, 'before the block');
    expect((await gqlOk(a, BlockUserDocument, { login: carol.login }, bob.token)).blockUser.login).toBe(carol.login);

    for (const app of [a, b]) {
      const refused = await sendOn(app, carol, bob, 'let me in');
      expect(codes(refused)).toEqual(['FORBIDDEN']);
      expect(refused.errors![0]!.extensions!.field).toBe('to');
      expect(codes(await sendOn(app, bob, carol, 'and you?'))).toEqual(['FORBIDDEN']);
    }
    // Nobody else is affected, either way; what was sent before stays.
    expect((await sendOn(b, dave, bob, 'hi bob')).errors).toBeUndefined();
    expect((await sendOn(b, carol, dave, 'hi dave')).errors).toBeUndefined();
    expect(await partnersOf(bob)).toEqual([carol.login, dave.login].sort());
    const withCarol = (await gqlOk(a, ConversationsDocument, { first: 50 }, bob.token)).conversations.edges.find(
      (e) => e.node.partner.login === carol.login,
    )!;
    expect(withCarol.node.lastMessage?.content).toBe('before the block');

    expect((await gqlOk(b, BlockedUsersDocument, {}, bob.token)).blockedUsers.map((u) => u.login)).toEqual([carol.login]);
    expect((await gqlOk(b, UnblockUserDocument, { login: carol.login }, bob.token)).unblockUser).toBe(true);
    expect((await gqlOk(b, UnblockUserDocument, { login: carol.login }, bob.token)).unblockUser).toBe(false);
    expect((await sendOn(a, carol, bob, 'thanks')).errors).toBeUndefined();
    expect((await sendOn(a, bob, carol, 'you are welcome')).errors).toBeUndefined();
    expect((await gqlOk(a, BlockedUsersDocument, {}, bob.token)).blockedUsers).toEqual([]);
  });

  it('is idempotent, and refuses yourself, nobody, strangers to the API and more than the limit', async () => {
    const [bob, carol] = await Promise.all([signUp(a), signUp(a)]);
    await gqlOk(a, BlockUserDocument, { login: carol.login }, bob.token);
    await gqlOk(a, BlockUserDocument, { login: carol.login.toUpperCase() }, bob.token);
    expect((await gqlOk(a, BlockedUsersDocument, {}, bob.token)).blockedUsers.map((u) => u.login)).toEqual([carol.login]);

    const self = await gql(a, BlockUserDocument, { login: bob.login }, bob.token);
    expect(codes(self)).toEqual(['BAD_USER_INPUT']);
    expect(self.errors![0]!.extensions!.field).toBe('login');
    expect(codes(await gql(a, BlockUserDocument, { login: uniqueLogin('ghost') }, bob.token))).toEqual(['NOT_FOUND']);
    expect(codes(await gql(a, BlockUserDocument, { login: '' }, bob.token))).toEqual(['NOT_FOUND']);
    expect(codes(await gql(a, BlockUserDocument, { login: carol.login }))).toEqual(['UNAUTHENTICATED']);
    expect(codes(await gql(a, BlockedUsersDocument, {}))).toEqual(['UNAUTHENTICATED']);

    // Up to the limit (the rest of it written straight to storage), then no more; blocking one of them again is fine.
    const max = Limits.messenger.maxBlocked;
    const logins = Array.from({ length: max - 1 }, () => uniqueLogin('blocked'));
    for (let i = 0; i < logins.length; i += 100) {
      await Promise.all(
        logins.slice(i, i + 100).map(async (login) => {
          await seedUserRow(a, login, new Date());
          await blockedInStorage(bob, login);
        }),
      );
    }
    const dave = await signUp(a);
    const over = await gql(a, BlockUserDocument, { login: dave.login }, bob.token);
    expect(codes(over)).toEqual(['LIMIT_REACHED']);
    expect(over.errors![0]!.extensions).toMatchObject({ limit: 'BLOCKED_USERS', max });
    expect((await gql(a, BlockUserDocument, { login: carol.login }, bob.token)).errors).toBeUndefined();
    expect((await gqlOk(a, BlockedUsersDocument, {}, bob.token)).blockedUsers).toHaveLength(max);
  }, 60_000);

  it('never keeps more than the limit when blocks race for the last places, and keeps every block it answered for', async () => {
    const bob = await signUp(a);
    const max = Limits.messenger.maxBlocked;
    const filler = Array.from({ length: max - 3 }, () => uniqueLogin('filler'));
    for (let i = 0; i < filler.length; i += 100) await Promise.all(filler.slice(i, i + 100).map((login) => blockedInStorage(bob, login)));
    const racers = await Promise.all(Array.from({ length: 12 }, () => signUp(a)));
    const answers = await Promise.all(racers.map((r, i) => gql(i % 2 ? a : b, BlockUserDocument, { login: r.login }, bob.token)));
    const stored = new Set((await cqlRows(a, 'SELECT blocked FROM user_blocks WHERE login = ?', [bob.login])).map((r) => r.blocked as string));
    expect(stored.size).toBeLessThanOrEqual(max);
    for (const [i, answer] of answers.entries()) {
      if (answer.errors) {
        expect(codes(answer)).toEqual(['LIMIT_REACHED']);
        expect(stored.has(racers[i]!.login)).toBe(false);
      } else {
        expect(stored.has(racers[i]!.login)).toBe(true);
      }
    }
  }, 60_000);
});
