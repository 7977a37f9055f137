/**
 * Accounts over the API: sign-up, login and profile, the errors and limits a
 * client meets (taken logins, bad credentials, failed-attempt limits, the
 * password-hashing gate, bad input) and the tokens a session rests on.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import type { App } from '../../src/app.js';
import {
  LoginDocument,
  LogoutDocument,
  MeDocument,
  RegisterDocument,
  UpdateProfileDocument,
  UserByLoginDocument,
} from '../generated/graphql.js';
import { startApp, TEST_JWT_SECRET } from '../testkit/app.js';
import { codes, gql, gqlOk } from '../testkit/http.js';
import { signUp, uniqueLogin } from '../testkit/data/users.js';
import { eventually } from '../testkit/poll.js';
import { recordCql } from '../testkit/faults/cql-spy.js';
import { holdHashes } from '../testkit/faults/password-gate.js';

/** Each thread of this process, by its id, and its niceness (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNiceness(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended since it was listed
    }
    // The fields after the command name, which may hold spaces, start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    nices.set(Number(tid), Number(fields[19 - 3]));
  }
  return nices;
}

let app: App;
beforeAll(async () => {
  app = await startApp();
});

/** A wait for a hashing slot no test reaches: a login queued behind a held slot stays queued until it is released. */
const NO_WAIT_LIMIT = String(600_000);

/** Waits until a held login has the slot and another the place in the queue (one of each: the gates here). */
async function gateFull(app: App, hashes: { held: () => number }): Promise<void> {
  await eventually(() => hashes.held() === 1 && !app.services.passwords.hasRoom(), { what: 'the hashing slot and queue place to be taken' });
}

describe('register, login, me, updateProfile', () => {
  it('registers, logs in and reads and updates the profile', async () => {
    const login = uniqueLogin('alice');
    const reg = await gqlOk(app, RegisterDocument, {
      input: { login, password: 's3cret-pass', firstname: 'Alice', lastname: 'Liddell', email: 'Alice@Example.org' },
    });
    expect(reg.register.user).toMatchObject({ login, firstname: 'Alice', email: 'alice@example.org' });
    expect(reg.register.token.split('.')).toHaveLength(3);

    const loggedIn = await gqlOk(app, LoginDocument, { login, password: 's3cret-pass' });
    const token = loggedIn.login.token;
    expect(token).not.toBe(reg.register.token);

    const me = await gqlOk(app, MeDocument, {}, token);
    expect(me.me).toMatchObject({ login, displayName: 'Alice Liddell', email: 'alice@example.org', bio: null });

    const updated = await gqlOk(app, UpdateProfileDocument, { input: { bio: 'Down the rabbit hole' } }, token);
    // Fields left out stay as they were.
    expect(updated.updateProfile).toMatchObject({ firstname: 'Alice', lastname: 'Liddell', bio: 'Down the rabbit hole' });
    const again = await gqlOk(app, UpdateProfileDocument, { input: { firstname: 'Alicia' } }, token);
    expect(again.updateProfile).toMatchObject({ firstname: 'Alicia', bio: 'Down the rabbit hole' });
  });

  it('hides email from everyone but its owner and never exposes the password', async () => {
    const a = await signUp(app);
    const b = await signUp(app);
    const seenByB = await gqlOk(app, UserByLoginDocument, { login: a.login }, b.token);
    expect(seenByB.user).toMatchObject({ login: a.login, email: null });
    const seenByA = await gqlOk(app, UserByLoginDocument, { login: a.login }, a.token);
    expect(seenByA.user?.email).toBe(a.email);
    const raw = await gql(app, '{ me { login pass password } }', {}, a.token);
    expect(raw.errors?.[0]?.message).toMatch(/Cannot query field "pass"/);
  });

  it('treats logins case-insensitively', async () => {
    const login = uniqueLogin('case');
    await signUp(app, { login });
    const dup = await gql(app, RegisterDocument, {
      input: { login: login.toUpperCase(), password: 'password123', firstname: 'X', lastname: 'Y', email: 'x@y.zz' },
    });
    expect(codes(dup)).toEqual(['LOGIN_TAKEN']);
    const ok = await gqlOk(app, LoginDocument, { login: login.toUpperCase(), password: 'correct horse battery' });
    expect(ok.login.user.login).toBe(login);
  });

  it('requires a session for profile operations', async () => {
    const me = await gqlOk(app, MeDocument, {});
    expect(me.me).toBeNull();
    const res = await gql(app, UpdateProfileDocument, { input: { bio: 'x' } });
    expect(codes(res)).toEqual(['UNAUTHENTICATED']);
  });
});

describe('LOGIN_TAKEN', () => {
  it('lets exactly one of 20 concurrent registrations of one login win', async () => {
    const login = uniqueLogin('race');
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        gql(app, RegisterDocument, {
          input: { login, password: `password-${i}`, firstname: `F${i}`, lastname: 'Racer', email: `r${i}@example.test` },
        }),
      ),
    );
    const winners = attempts.filter((r) => r.data?.register);
    const losers = attempts.filter((r) => codes(r)[0] === 'LOGIN_TAKEN');
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(19);
    // The stored account is the winner's: its password logs in, the others' do not.
    const winnerIndex = attempts.findIndex((r) => r.data?.register);
    const ok = await gql(app, LoginDocument, { login, password: `password-${winnerIndex}` });
    expect(ok.data?.login.user.firstname).toBe(`F${winnerIndex}`);
    const other = await gql(app, LoginDocument, { login, password: `password-${(winnerIndex + 1) % 20}` });
    expect(codes(other)).toEqual(['INVALID_CREDENTIALS']);
  });
});

describe('INVALID_CREDENTIALS and RATE_LIMITED', () => {
  it('gives the same error for an unknown login and a wrong password', async () => {
    const user = await signUp(app);
    const wrong = await gql(app, LoginDocument, { login: user.login, password: 'not-the-password' });
    const unknown = await gql(app, LoginDocument, { login: uniqueLogin('ghost'), password: 'whatever-pass' });
    expect(codes(wrong)).toEqual(['INVALID_CREDENTIALS']);
    expect(codes(unknown)).toEqual(['INVALID_CREDENTIALS']);
    expect(wrong.errors?.[0]?.message).toBe(unknown.errors?.[0]?.message);
  });

  it('rate-limits repeated failures for one login, even with the right password', async () => {
    const user = await signUp(app);
    const limit = app.services.config.auth.loginFailuresPerLogin;
    for (let i = 0; i < limit; i++) {
      expect(codes(await gql(app, LoginDocument, { login: user.login, password: `wrong-${i}-pass` }))).toEqual([
        'INVALID_CREDENTIALS',
      ]);
    }
    const blocked = await gql(app, LoginDocument, { login: user.login, password: user.password });
    expect(codes(blocked)).toEqual(['RATE_LIMITED']);
    expect(blocked.errors?.[0]?.extensions?.reason).toBe('FAILED_LOGINS');
    expect(blocked.errors?.[0]?.extensions?.retryAfter).toBeGreaterThan(0);
    expect(blocked.errors?.[0]?.extensions?.retryAfter).toBeLessThanOrEqual(app.services.config.auth.loginFailureWindowSeconds);
  });

  it('rate-limits repeated failures from one address across logins', async () => {
    const limited = await startApp({ env: { LOGIN_FAILURES_PER_ADDRESS: '3', TRUST_PROXY: '1' } });
    const headers = { 'x-forwarded-for': '203.0.113.7' };
    for (let i = 0; i < 3; i++) {
      const r = await gql(limited, LoginDocument, { login: uniqueLogin('spray'), password: 'password1' }, undefined, headers);
      expect(codes(r)).toEqual(['INVALID_CREDENTIALS']);
    }
    const blocked = await gql(limited, LoginDocument, { login: uniqueLogin('spray'), password: 'password1' }, undefined, headers);
    expect(codes(blocked)).toEqual(['RATE_LIMITED']);
    // Another address is not affected.
    const other = await gql(limited, LoginDocument, { login: uniqueLogin('spray'), password: 'password1' }, undefined, {
      'x-forwarded-for': '203.0.113.8',
    });
    expect(codes(other)).toEqual(['INVALID_CREDENTIALS']);
  });

  it('queues password hashes for PASSWORD_HASH_CONCURRENCY slots, refuses past PASSWORD_HASH_QUEUE, and counts a refusal as no failure', async () => {
    // One slot and one place in the queue, and no wait long enough to end the queued login's.
    const gated = await startApp({
      env: { PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '1', PASSWORD_HASH_MAX_WAIT_MS: NO_WAIT_LIMIT, LOGIN_FAILURES_PER_ADDRESS: '8', LOGIN_FAILURES_PER_LOGIN: '100' },
    });
    const user = await signUp(gated);
    const login = () => gql(gated, LoginDocument, { login: user.login, password: user.password });
    const hashes = holdHashes(gated);
    const admitted = [login(), login()];
    await gateFull(gated, hashes);
    // Six more find the slot and the queue taken: each is refused, and never hashes.
    const refused = await Promise.all(Array.from({ length: 6 }, () => login()));
    for (const r of refused) {
      expect(codes(r)).toEqual(['RATE_LIMITED']);
      expect(r.errors?.[0]?.extensions?.retryAfter).toBe(1);
    }
    hashes.release();
    // The hash that ran and the one that waited are served.
    for (const r of await Promise.all(admitted)) expect(r.errors).toBeUndefined();
    // 7 failures leave this address one attempt under its limit of 8, unless the refusals were counted as failures too.
    for (let i = 0; i < 7; i++) {
      expect(codes(await gql(gated, LoginDocument, { login: user.login, password: `wrong-${i}-pass` }))).toEqual(['INVALID_CREDENTIALS']);
    }
    const retry = await gqlOk(gated, LoginDocument, { login: user.login, password: user.password });
    expect(retry.login.token.split('.')).toHaveLength(3);
  });

  it('hashes passwords on a thread niced to PASSWORD_HASH_NICE, the server thread keeping its priority', async () => {
    // No other test uses 13, so a thread 13 below the process in this process is this instance's hashing thread.
    const niced = await startApp({ env: { PASSWORD_HASH_NICE: '13' } });
    const user = await signUp(niced);
    expect((await gqlOk(niced, LoginDocument, { login: user.login, password: user.password })).login.token.split('.')).toHaveLength(3);
    expect(codes(await gql(niced, LoginDocument, { login: user.login, password: 'not-the-password' }))).toEqual(['INVALID_CREDENTIALS']);
    const nices = threadNiceness();
    // Added to the process's own: 13 in a suite run at 0.
    const own = nices.get(process.pid)!;
    expect(own).toBeLessThan(19);
    expect([...nices.values()]).toContain(Math.min(19, own + 13));
  });

  it('refuses a login that waited PASSWORD_HASH_MAX_WAIT_MS for a hashing slot, serving the one that hashed', async () => {
    // One slot, room to queue, and the slot held by the first login for as long as the second may wait and longer.
    const gated = await startApp({
      env: { PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '8', PASSWORD_HASH_MAX_WAIT_MS: '100', LOGIN_FAILURES_PER_LOGIN: '2' },
    });
    const user = await signUp(gated);
    const login = () => gql(gated, LoginDocument, { login: user.login, password: user.password });
    const hashes = holdHashes(gated);
    const first = login();
    await eventually(() => hashes.held() === 1, { what: 'the first login to hold the slot' });
    // The second waits behind the held slot: only its wait's end can answer it.
    let second: Awaited<ReturnType<typeof login>> | undefined;
    void login().then((answer) => (second = answer));
    const refused = await eventually(() => second, { what: 'the queued login to be refused' });
    expect(codes(refused)).toEqual(['RATE_LIMITED']);
    // The hashing gate's refusal, not the failed-attempt limit's.
    expect(refused.errors![0]!.message).toMatch(/at once/);
    expect(refused.errors![0]!.extensions?.retryAfter).toBe(1);
    hashes.release();
    expect((await first).errors).toBeUndefined();
    // Not counted as a failure: with one wrong password the login is still under its limit of 2.
    expect(codes(await gql(gated, LoginDocument, { login: user.login, password: 'wrong-password' }))).toEqual(['INVALID_CREDENTIALS']);
    // It left the queue: the next login has the slot to itself.
    expect((await gqlOk(gated, LoginDocument, { login: user.login, password: user.password })).login.token.split('.')).toHaveLength(3);
  });

  it('refuses a login while every hashing slot and queue place is taken before reading the account', async () => {
    // One slot and one place in the queue, and no wait long enough to end the queued login's.
    const gated = await startApp({
      env: { PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '1', PASSWORD_HASH_MAX_WAIT_MS: NO_WAIT_LIMIT, LOGIN_FAILURES_PER_ADDRESS: '20', LOGIN_FAILURES_PER_LOGIN: '20' },
    });
    const user = await signUp(gated);
    const login = () => gql(gated, LoginDocument, { login: user.login, password: user.password });
    const hashes = holdHashes(gated);
    // Both read the account before they reached the gate, so whatever is read from now on is read by the third.
    const admitted = [login(), login()];
    await gateFull(gated, hashes);
    const spy = recordCql(gated);
    try {
      const res = await login();
      // The hashing gate's refusal (retryAfter 1), not the failed-attempt limit's.
      expect(codes(res)).toEqual(['RATE_LIMITED']);
      expect(res.errors![0]!.message).toMatch(/at once/);
      expect(res.errors![0]!.extensions?.retryAfter).toBe(1);
      expect(spy.statements().filter((c) => /FROM users WHERE login = \?/.test(c))).toEqual([]);
    } finally {
      spy.stop();
    }
    hashes.release();
    for (const r of await Promise.all(admitted)) expect(r.errors).toBeUndefined();
    expect((await gqlOk(gated, LoginDocument, { login: user.login, password: user.password })).login.token.split('.')).toHaveLength(3);
  });
});

describe('BAD_USER_INPUT', () => {
  const valid = { login: 'valid_login', password: 'password123', firstname: 'A', lastname: 'B', email: 'a@b.cd' };
  it.each([
    ['input.login', { login: 'ab' }],
    ['input.login', { login: 'has space' }],
    ['input.login', { login: 'x'.repeat(33) }],
    ['input.password', { password: 'short' }],
    ['input.password', { password: 'p'.repeat(129) }],
    ['input.firstname', { firstname: '   ' }],
    ['input.lastname', { lastname: 'l'.repeat(101) }],
    ['input.email', { email: 'not-an-email' }],
    ['input.bio', { bio: 'b'.repeat(2001) }],
  ])('names %s', async (field, patch) => {
    const res = await gql(app, RegisterDocument, { input: { ...valid, login: uniqueLogin('v'), ...patch } });
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors?.[0]?.extensions?.field).toBe(field);
  });

  it('validates profile updates too', async () => {
    const user = await signUp(app);
    const res = await gql(app, UpdateProfileDocument, { input: { email: 'nope' } }, user.token);
    expect(codes(res)).toEqual(['BAD_USER_INPUT']);
    expect(res.errors?.[0]?.extensions?.field).toBe('input.email');
    const me = await gqlOk(app, MeDocument, {}, user.token);
    expect(me.me?.email).toBe(user.email);
  });
});

describe('tokens', () => {
  it('refuses a tampered, a foreign-signed and an expired token', async () => {
    const user = await signUp(app);
    const [h, p, s] = user.token.split('.');
    const tampered = `${h}.${p}.${s!.slice(0, -2)}xx`;
    expect(codes(await gql(app, MeDocument, {}, tampered))).toEqual(['UNAUTHENTICATED']);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`;
    expect(codes(await gql(app, MeDocument, {}, none))).toEqual(['UNAUTHENTICATED']);

    const shortLived = await startApp({ env: { JWT_TTL_SECONDS: '1' } });
    const { data } = await gql(shortLived, LoginDocument, { login: user.login, password: user.password });
    const token = data!.login.token;
    // The verifier allows 5 s of clock skew; wait (by polling) until the token is refused.
    await eventually(async () => codes(await gql(shortLived, MeDocument, {}, token))[0] === 'UNAUTHENTICATED', {
      timeoutMs: 15_000,
      intervalMs: 500,
      what: 'the expired token to be refused',
    });
  });

  it('refuses correctly signed tokens whose claims have the wrong type or range, and logout with them is not an internal error', async () => {
    const user = await signUp(app);
    const key = new TextEncoder().encode(TEST_JWT_SECRET);
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT({ sub: user.login, jti: randomUUID(), iat: now, exp: now + 600, ...claims })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer('parley')
        .setAudience('parley-api')
        .sign(key);
    // The well-formed control is accepted: the others fail on their claims alone.
    expect((await gqlOk(app, MeDocument, {}, await sign({}))).me?.login).toBe(user.login);
    const hostile = [
      { exp: 1e20 },
      { exp: now + 10 * 365 * 86400 },
      { exp: now + 600.5 },
      { iat: now + 3600, exp: now + 4000 },
      { jti: { $ne: 1 } },
      { jti: 'x'.repeat(5000) },
      { jti: 7 },
      { sub: 42 },
      { sub: '' },
      { sub: 'Not A Login!' },
    ];
    for (const claims of hostile) {
      const token = await sign(claims);
      expect(codes(await gql(app, MeDocument, {}, token)), JSON.stringify(claims)).toEqual(['UNAUTHENTICATED']);
      expect(codes(await gql(app, LogoutDocument, {}, token)), JSON.stringify(claims)).toEqual(['UNAUTHENTICATED']);
    }
  });

  it('logout revokes the token on this instance', async () => {
    const user = await signUp(app);
    expect((await gqlOk(app, LogoutDocument, {}, user.token)).logout).toBe(true);
    expect(codes(await gql(app, MeDocument, {}, user.token))).toEqual(['UNAUTHENTICATED']);
  });
});
