/**
 * Password changes and logoutEverywhere: every session of an account is on
 * record (user_sessions), so both end all of them (a password change all but
 * the caller's), on every server, WebSockets included. Two instances share
 * Redis and the keyspace, as behind a load balancer.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { ChangePasswordDocument, LoginDocument, LogoutDocument, LogoutEverywhereDocument, MeDocument, RegisterDocument } from '../generated/graphql.js';
import { startApp, stopApp } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp, uniqueLogin, type TestUser } from '../testkit/data/users.js';
import { eventually } from '../testkit/poll.js';
import { wsClient, wsRequest } from '../testkit/ws.js';
import { failNextStatement } from '../testkit/faults/statement-faults.js';
import { WS_CLOSE } from '../../src/server/live/websocket.js';

let a: App;
let b: App;
// Every request comes from 127.0.0.1, and the race below makes many password checks of one login at once: the
// failure limits are out of the way here, but for the test that shows a wrong current password counts against them.
const UNLIMITED = { LOGIN_FAILURES_PER_LOGIN: '1000000', LOGIN_FAILURES_PER_ADDRESS: '1000000' };
beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true, env: UNLIMITED }), startApp({ redis: true, env: UNLIMITED })]);
});

const loginOn = async (app: App, user: TestUser, password = user.password) =>
  (await gqlOk(app, LoginDocument, { login: user.login, password })).login.token;

/** Whether `token` is still a live session, as `app` sees it. */
const live = async (app: App, token: string) => {
  const result = await gql(app, MeDocument, {}, token);
  if (codes(result)[0] === 'UNAUTHENTICATED') return false;
  expect(result.errors).toBeUndefined();
  return true;
};

describe('changePassword', () => {
  it('changes the password and ends every other session on every server, its WebSockets too; the caller stays', async () => {
    const user = await signUp(a);
    const [other, onB] = [await loginOn(a, user), await loginOn(b, user)];
    const socket = wsClient(b, onB);
    expect((await wsRequest(socket, MeDocument)).data?.me?.login).toBe(user.login);
    const caller = await loginOn(b, user);

    const ended = await gqlOk(b, ChangePasswordDocument, { currentPassword: user.password, newPassword: 'a brand new secret' }, caller);
    // The registration's session, `other` and `onB`.
    expect(ended.changePassword).toBe(3);
    for (const app of [a, b]) {
      for (const token of [user.token, other, onB]) {
        await eventually(async () => !(await live(app, token)), { what: 'an ended session refused' });
      }
    }
    expect((await socket.closed).code).toBe(WS_CLOSE.UNAUTHORIZED);
    expect(await live(a, caller)).toBe(true);

    expect(codes(await gql(a, LoginDocument, { login: user.login, password: user.password }))).toEqual(['INVALID_CREDENTIALS']);
    expect(await live(a, await loginOn(a, user, 'a brand new secret'))).toBe(true);
  });

  it('refuses a wrong current password (counted as a failed login) and bad new ones, changing nothing', async () => {
    const user = await signUp(a);
    const wrong = await gql(a, ChangePasswordDocument, { currentPassword: 'not the password', newPassword: 'whatever it is' }, user.token);
    expect(codes(wrong)).toEqual(['INVALID_CREDENTIALS']);
    expect(wrong.errors![0]!.extensions!.field).toBe('currentPassword');
    const short = await gql(a, ChangePasswordDocument, { currentPassword: user.password, newPassword: 'short' }, user.token);
    expect(codes(short)).toEqual(['BAD_USER_INPUT']);
    expect(short.errors![0]!.extensions!.field).toBe('newPassword');
    const same = await gql(a, ChangePasswordDocument, { currentPassword: user.password, newPassword: user.password }, user.token);
    expect(codes(same)).toEqual(['BAD_USER_INPUT']);
    expect(codes(await gql(a, ChangePasswordDocument, { currentPassword: user.password, newPassword: 'long enough' }))).toEqual(['UNAUTHENTICATED']);
    expect(await live(a, user.token)).toBe(true);
    expect(await live(a, await loginOn(a, user))).toBe(true);

    // Wrong current passwords count against the login's limit (here the default), like failed logins.
    const strict = await startApp({ redis: true, env: { LOGIN_FAILURES_PER_ADDRESS: UNLIMITED.LOGIN_FAILURES_PER_ADDRESS } });
    const limit = strict.services.config.auth.loginFailuresPerLogin;
    for (let i = 0; i < limit; i++) {
      const guess = await gql(strict, ChangePasswordDocument, { currentPassword: `guess number ${i}`, newPassword: 'whatever it is' }, user.token);
      expect(codes(guess)).toEqual(['INVALID_CREDENTIALS']);
    }
    expect(codes(await gql(strict, LoginDocument, { login: user.login, password: user.password }))).toEqual(['RATE_LIMITED']);
    await stopApp(strict);
  });

  it('checks only the current password: a guess given as the new one tells nothing and ends nothing', async () => {
    const user = await signUp(a);
    const other = await loginOn(a, user);
    // The stored password as newPassword, a wrong one as currentPassword: refused like any wrong guess.
    const guess = await gql(a, ChangePasswordDocument, { currentPassword: 'a wrong guess', newPassword: user.password }, user.token);
    expect(codes(guess)).toEqual(['INVALID_CREDENTIALS']);
    expect(await live(a, other)).toBe(true);
  });

  it('finishes, when retried with the same arguments, a change whose answer was lost before the sessions ended', async () => {
    const user = await signUp(a);
    const other = await loginOn(a, user);
    const args = { currentPassword: user.password, newPassword: 'the next secret' };
    // The password's LWT applies; the read of the sessions to end then fails.
    failNextStatement(a, /FROM user_sessions WHERE login/);
    expect(codes(await gql(a, ChangePasswordDocument, args, user.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(await live(a, other)).toBe(true);
    // Only the session that made the change may finish it so: any other must give the password now stored.
    expect(codes(await gql(a, ChangePasswordDocument, args, other))).toEqual(['INVALID_CREDENTIALS']);
    expect((await gqlOk(a, ChangePasswordDocument, args, user.token)).changePassword).toBe(1);
    expect(await live(a, other)).toBe(false);
    expect(await live(a, await loginOn(a, user, 'the next secret'))).toBe(true);
  });

  it('lets one of many concurrent changes apply, and no session started with the old password survives', async () => {
    const user = await signUp(a);
    const sessions = await Promise.all(Array.from({ length: 6 }, (_, i) => loginOn(i % 2 ? a : b, user)));
    // Six changes from six sessions, each to its own password, and logins with the old password, all at once.
    const changes = sessions.map((token, i) =>
      gql(i % 2 ? a : b, ChangePasswordDocument, { currentPassword: user.password, newPassword: `new secret ${i}` }, token),
    );
    const logins = Array.from({ length: 12 }, (_, i) => gql(i % 2 ? b : a, LoginDocument, { login: user.login, password: user.password }));
    const changed = await Promise.all(changes);
    const loggedIn = await Promise.all(logins);

    const winners = changed.flatMap((r, i) => (r.errors ? [] : [i]));
    expect(winners).toHaveLength(1);
    for (const r of changed) if (r.errors) expect(['CONFLICT', 'UNAUTHENTICATED', 'INVALID_CREDENTIALS']).toContain(codes(r)[0]);
    const winner = winners[0]!;
    // Only the new password of the change that applied opens a session.
    for (let i = 0; i < sessions.length; i++) {
      const login = await gql(a, LoginDocument, { login: user.login, password: `new secret ${i}` });
      expect(login.errors === undefined, `new secret ${i}`).toBe(i === winner);
    }
    // Every other session, including those the racing logins got with the old password, is over.
    const oldPasswordTokens = loggedIn.flatMap((r) => (r.data ? [r.data.login.token] : []));
    for (const token of [user.token, ...sessions.filter((_, i) => i !== winner), ...oldPasswordTokens]) {
      for (const app of [a, b]) await eventually(async () => !(await live(app, token)), { what: 'a session of the old password refused' });
    }
    expect(await live(b, sessions[winner]!)).toBe(true);
  }, 60_000);
});

describe('logoutEverywhere', () => {
  it('ends every session of the account on every server, the caller included, and no one else’s', async () => {
    const user = await signUp(a);
    const someoneElse = await signUp(a);
    const tokens = [user.token, await loginOn(a, user), await loginOn(b, user)];
    const socket = wsClient(a, tokens[1]);
    expect((await wsRequest(socket, MeDocument)).data?.me?.login).toBe(user.login);

    expect((await gqlOk(b, LogoutEverywhereDocument, {}, tokens[2])).logoutEverywhere).toBe(3);
    for (const app of [a, b]) {
      for (const token of tokens) await eventually(async () => !(await live(app, token)), { what: 'a session refused' });
    }
    expect((await socket.closed).code).toBe(WS_CLOSE.UNAUTHORIZED);
    expect(await live(a, someoneElse.token)).toBe(true);
    // The password still opens new sessions.
    expect(await live(b, await loginOn(b, user))).toBe(true);
  });

  it('fails midway leaving the caller a session to finish with: the caller’s own session ends last', async () => {
    const user = await signUp(a);
    const others = [await loginOn(a, user), await loginOn(a, user)];
    // The first revocation written fails: the call answers SERVICE_UNAVAILABLE, and the caller can still call.
    failNextStatement(a, /INSERT INTO revoked_tokens/);
    expect(codes(await gql(a, LogoutEverywhereDocument, {}, user.token))).toEqual(['SERVICE_UNAVAILABLE']);
    expect(await live(a, user.token)).toBe(true);
    // The same call again finishes it: every session ends, the caller's too.
    expect((await gqlOk(a, LogoutEverywhereDocument, {}, user.token)).logoutEverywhere).toBeGreaterThanOrEqual(2);
    for (const token of [user.token, ...others]) await eventually(async () => !(await live(a, token)), { what: 'a session refused' });
  });

  it('does not count a session already logged out', async () => {
    const user = await signUp(a);
    const second = await loginOn(a, user);
    await gqlOk(a, LogoutDocument, {}, second);
    expect((await gqlOk(a, LogoutEverywhereDocument, {}, user.token)).logoutEverywhere).toBe(1);
  });
});

describe('register', () => {
  it('says to log in when the account was created but its session could not be recorded', async () => {
    const login = uniqueLogin('nosession');
    const input = { login, password: 'correct horse battery', firstname: 'No', lastname: 'Session', email: `${login}@example.test` };
    failNextStatement(a, /INSERT INTO user_sessions/);
    const result = await gql(a, RegisterDocument, { input });
    expect(codes(result)).toEqual(['SERVICE_UNAVAILABLE']);
    expect(result.errors![0]!.message).toMatch(/account was created.*log in/);
    expect(codes(await gql(a, RegisterDocument, { input }))).toEqual(['LOGIN_TAKEN']);
    expect(await live(a, await loginOn(a, { ...input, token: '' }))).toBe(true);
  });
});
