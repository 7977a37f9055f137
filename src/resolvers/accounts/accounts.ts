/**
 * Accounts: registration, login, logout, password changes and profiles.
 */
import { refreshLoaders, type Context } from '../context.js';
import { eventStream } from '../../pubsub/pubsub.js';
import type { UserRecord } from '../../db/accounts/users.js';
import { AppError, badInput, conflict, ErrorCode, notFound, unavailable, RateLimitReason, rateLimited } from '../../errors.js';
import { isStorageUnavailable } from '../../db/cassandra/client.js';
import type { RateLimitedAction } from '../../observability/metrics.js';
import { endSessions, startSession } from './sessions.js';
import { Limits } from '../../limits.js';
import { validBio, validEmail, validLogin, validName, validPassword, requireLength } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';
import { eachVisibleOrNull } from '../shared/nodes.js';
import { keyedRunOf, recordTimeFor } from '../idempotency/run.js';
import { userLoader } from './reads.js';

export interface AuthPayload {
  token: string;
  user: UserRecord;
}

export interface RegisterInput {
  login: string;
  password: string;
  firstname: string;
  lastname: string;
  email: string;
  bio?: string | null;
}

export interface ProfilePatch {
  firstname?: string | null;
  lastname?: string | null;
  email?: string | null;
  bio?: string | null;
}

export const profileChannel = (login: string) => `user.${login}.profile`;

/** Logins are case-insensitive: "Alice" and "alice" are one account. */
export const normalizeLogin = (login: string) => login.trim().toLowerCase();

export async function register(ctx: Context, input: RegisterInput): Promise<AuthPayload> {
  const login = validLogin('input.login', normalizeLogin(input.login));
  const password = validPassword('input.password', input.password);
  const firstname = validName('input.firstname', input.firstname);
  const lastname = validName('input.lastname', input.lastname);
  const email = validEmail('input.email', input.email);
  const bio = input.bio == null ? null : validBio('input.bio', input.bio);

  const { stores, clock, rateLimiter, config, metrics } = ctx.services;
  const attempts = await rateLimiter.increment(`register:${ctx.clientAddress}`, 3600);
  if (attempts.count > config.auth.registrationsPerAddressPerHour) {
    metrics.rateLimited('register');
    throw rateLimited(RateLimitReason.SIGN_UPS, `Too many sign-ups from this address; retry in ${attempts.retryAfter} s`, attempts.retryAfter);
  }
  let user: Omit<UserRecord, 'chatRooms' | 'lastSeenAt' | 'passwordChangedBy'> = {
    login,
    passwordHash: await ctx.services.passwords.hash(password),
    firstname,
    lastname,
    email,
    bio,
    // Under an idempotency key, the key's time: a run again after an unknown outcome recognizes its account.
    createdAt: recordTimeFor(ctx, clock.now()),
  };
  if (!(await stores.users.insertIfNotExists(user))) {
    const own = await accountOfThisKey(ctx, login, password, user.createdAt);
    if (!own) throw new AppError(ErrorCode.LOGIN_TAKEN, `The login "${login}" is taken`, { field: 'input.login' });
    user = own;
  }
  const { token, session } = await startSession(ctx.services, login).catch((err: unknown) => {
    if (!isStorageUnavailable(err)) throw err;
    // The account exists now: a retry of register would be LOGIN_TAKEN. The client is told to log in instead.
    const { extensions } = unavailable('storage');
    throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'Your account was created, but no session could be started: log in shortly', extensions);
  });
  ctx.viewer = session; // the rest of this operation (AuthPayload.user.email) runs as the new session
  return { token, user: { chatRooms: new Set(), lastSeenAt: null, passwordChangedBy: null, ...user } };
}

/**
 * The account under `login` when an earlier run of this register's idempotency key made it (its answer lost):
 * created at the key's time, with this password. Undefined outside a keyed run, and for anyone else's account.
 */
async function accountOfThisKey(ctx: Context, login: string, password: string, createdAt: Date): Promise<UserRecord | undefined> {
  if (!keyedRunOf(ctx)) return undefined;
  const existing = await ctx.services.stores.users.byLogin(login);
  if (existing?.createdAt.getTime() !== createdAt.getTime()) return undefined;
  return (await ctx.services.passwords.verify(password, existing.passwordHash)) ? existing : undefined;
}

const invalidCredentials = () => new AppError(ErrorCode.INVALID_CREDENTIALS, 'Invalid login or password');

/**
 * A password check, counted against the login's and the address's failure
 * limits before it is made (atomically, so parallel guesses cannot all slip
 * under either), and refused with RATE_LIMITED past one. A failure stays
 * counted; the attempt is given back when it succeeds, or when nothing could
 * be checked.
 */
async function passwordAttempt(ctx: Context, login: string, action: RateLimitedAction) {
  const { rateLimiter, config, metrics, passwords } = ctx.services;
  const { loginFailuresPerLogin, loginFailuresPerAddress, loginFailureWindowSeconds } = config.auth;
  const loginKey = `login:${login}`;
  const addressKey = `addr:${ctx.clientAddress}`;
  // While the hasher would refuse the check, refuse now: no attempt counted (and given back), no account read.
  passwords.requireRoom();
  const [byLogin, byAddress] = await Promise.all([
    rateLimiter.increment(loginKey, loginFailureWindowSeconds),
    rateLimiter.increment(addressKey, loginFailureWindowSeconds),
  ]);
  const retryAfter = Math.max(
    byLogin.count > loginFailuresPerLogin ? byLogin.retryAfter : 0,
    byAddress.count > loginFailuresPerAddress ? byAddress.retryAfter : 0,
  );
  if (retryAfter > 0) {
    metrics.rateLimited(action);
    throw rateLimited(RateLimitReason.FAILED_LOGINS, `Too many failed password checks; retry in ${retryAfter} s`, retryAfter);
  }
  // Nothing was checked (storage did not answer, the hasher refused): not a failure. Counting it would lock out
  // everyone who retried during an outage, and everyone behind one proxy, after it ended.
  const unchecked = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      await Promise.all([rateLimiter.decrement(loginKey), rateLimiter.decrement(addressKey)]);
      throw err;
    }
  };
  return {
    /**
     * Runs what comes before the check (reading the account), unless the hasher would refuse the check now (it
     * may have filled while the attempt was counted): should either fail, the attempt is given back.
     */
    before: <T>(work: () => Promise<T>) =>
      unchecked(() => {
        passwords.requireRoom();
        return work();
      }),
    /** Which of `candidates` matches `hash` first (-1: none), tried in turn; a match gives the attempt back. */
    async check(candidates: string[], hash: string): Promise<number> {
      const matched = await unchecked(async () => {
        for (const [i, candidate] of candidates.entries()) if (await passwords.verify(candidate, hash)) return i;
        return -1;
      });
      // A success is not a failure: give the attempt back.
      if (matched >= 0) await Promise.all([rateLimiter.reset(loginKey), rateLimiter.decrement(addressKey)]);
      return matched;
    },
  };
}

export async function login(ctx: Context, rawLogin: string, password: string): Promise<AuthPayload> {
  const { stores, decoyPasswordHash, metrics, passwords } = ctx.services;
  // While the hasher is full, refused before anything else: every login is then answered alike, whatever its
  // arguments, and a prepared login operation is refused without running (src/server/http/load-shedding.ts).
  passwords.requireRoom();
  const login = normalizeLogin(rawLogin);
  requireLength('login', login, 1, Limits.login.max);
  requireLength('password', password, 1, Limits.password.max);

  const attempt = await passwordAttempt(ctx, login, 'login');
  const user = await attempt.before(() => stores.users.byLogin(login));
  // Unknown logins verify against a decoy hash so both failures take the same time.
  const ok = (await attempt.check([password], user?.passwordHash ?? decoyPasswordHash)) === 0;
  if (!user || !ok) {
    // The client is never told which; the operator is: unknown logins suggest credential stuffing, wrong passwords guessing.
    metrics.loginFailure(user ? 'wrong_password' : 'unknown_login');
    throw invalidCredentials(); // the attempt stays counted as a failure
  }
  const { token, session } = await startSession(ctx.services, login);
  // A password change that applied meanwhile ended the sessions it found, and this one may have been recorded
  // after it looked: read the password again, now that this session is on record.
  if ((await stores.users.byLogin(login))?.passwordHash !== user.passwordHash) {
    await endSessions(ctx.services, login, [session]);
    metrics.loginFailure('wrong_password');
    throw invalidCredentials();
  }
  ctx.viewer = session; // the rest of this operation runs as the new session
  return { token, user };
}

/**
 * Changes the viewer's password, given the current one, and ends every other
 * session of the account on every server. Returns how many it ended. The
 * session that made a change may retry it with the same arguments when the
 * answer was lost: the stored password is then the new one, and the retry
 * ends the sessions left. Anyone else gets one check of the current password
 * per counted attempt.
 */
export async function changePassword(ctx: Context, currentPassword: string, newPassword: string): Promise<number> {
  const viewer = requireViewer(ctx);
  requireLength('currentPassword', currentPassword, 1, Limits.password.max);
  const next = validPassword('newPassword', newPassword);
  if (next === currentPassword) throw badInput('newPassword', 'newPassword must differ from currentPassword');
  const { stores, passwords, metrics } = ctx.services;

  const attempt = await passwordAttempt(ctx, viewer.login, 'change_password');
  const user = await attempt.before(() => stores.users.byLogin(viewer.login));
  if (!user) throw notFound('User');
  const ownRetry = user.passwordChangedBy === viewer.jti;
  const matched = await attempt.check(ownRetry ? [currentPassword, next] : [currentPassword], user.passwordHash);
  if (matched < 0) {
    metrics.loginFailure('wrong_password');
    throw new AppError(ErrorCode.INVALID_CREDENTIALS, 'The current password is wrong', { field: 'currentPassword' });
  }
  if (matched === 0 && !(await stores.users.changePasswordIf(viewer.login, user.passwordHash, await passwords.hash(next), viewer.jti))) {
    throw conflict('The password was changed meanwhile (by another session); it is not the one given as currentPassword');
  }
  const others = (await stores.sessions.of(viewer.login)).filter((s) => s.jti !== viewer.jti);
  return endSessions(ctx.services, viewer.login, others);
}

/**
 * Ends every session of the viewer's account on every server, this one
 * included. Returns how many it ended.
 */
export async function logoutEverywhere(ctx: Context): Promise<number> {
  const viewer = requireViewer(ctx);
  const sessions = await ctx.services.stores.sessions.of(viewer.login);
  // The caller's own session last, once every other one has ended: a call that fails midway leaves the caller
  // a token to call again with, which finishes it. (A token issued before sessions were recorded, cql/013, is
  // not listed, and is ended all the same.)
  const others = sessions.filter((s) => s.jti !== viewer.jti);
  const own = sessions.find((s) => s.jti === viewer.jti) ?? { jti: viewer.jti, expiresAt: viewer.expiresAt };
  const ended = await endSessions(ctx.services, viewer.login, others);
  return ended + (await endSessions(ctx.services, viewer.login, [own]));
}

/** Revokes the presented token on every instance until it would have expired. */
export async function logout(ctx: Context): Promise<boolean> {
  const viewer = requireViewer(ctx);
  await endSessions(ctx.services, viewer.login, [viewer]);
  return true;
}

export async function me(ctx: Context): Promise<UserRecord | null> {
  if (!ctx.viewer) return null;
  return userLoader(ctx).load(ctx.viewer.login);
}

export async function userByLogin(ctx: Context, login: string): Promise<UserRecord | null> {
  requireViewer(ctx);
  return userLoader(ctx).load(normalizeLogin(login));
}

/** node(id:)'s users, by login: any signed-in viewer sees any user, as with user(login:). */
export function userNodes(ctx: Context, logins: readonly string[]): Array<Promise<UserRecord | null>> {
  return eachVisibleOrNull(logins, (login) => userByLogin(ctx, login));
}

export async function updateProfile(ctx: Context, patch: ProfilePatch): Promise<UserRecord> {
  const viewer = requireViewer(ctx);
  const changes = {
    firstname: patch.firstname == null ? undefined : validName('input.firstname', patch.firstname),
    lastname: patch.lastname == null ? undefined : validName('input.lastname', patch.lastname),
    email: patch.email == null ? undefined : validEmail('input.email', patch.email),
    bio: patch.bio == null ? undefined : validBio('input.bio', patch.bio),
  };
  const { stores, pubsub, logger } = ctx.services;
  const before = await stores.users.byLogin(viewer.login);
  if (!before) throw notFound('User');
  await stores.users.updateProfile(viewer.login, changes);
  // The row after the update is the row before with the given fields replaced: no second read.
  const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  const user: UserRecord = { ...before, ...given };
  userLoader(ctx).clear(viewer.login).prime(viewer.login, user);
  await pubsub
    .publish(profileChannel(viewer.login), { login: viewer.login })
    .catch((err) => logger.error({ err }, 'failed to publish profile update'));
  return user;
}

/** Email is private: only its owner sees it. */
export function visibleEmail(ctx: Context, user: UserRecord): string | null {
  return ctx.viewer?.login === user.login ? user.email : null;
}

/** Live profile changes of one user (any logged-in user may follow them). */
export async function subscribeProfile(ctx: Context, login: string): Promise<AsyncIterable<{ login: string }>> {
  requireViewer(ctx);
  const normalized = normalizeLogin(login);
  if (!(await userLoader(ctx).load(normalized))) throw notFound('User');
  return eventStream<{ login: string }>(ctx.services.pubsub, profileChannel(normalized));
}

export async function profileEventUser(ctx: Context, event: { login: string }): Promise<UserRecord> {
  refreshLoaders(ctx);
  return existingUser(ctx, event.login);
}

/** The account a stored record names (a seller, a buyer, a participant): batched through the loader. */
export async function existingUser(ctx: Context, login: string): Promise<UserRecord> {
  const user = await userLoader(ctx).load(login);
  if (!user) throw notFound('User');
  return user;
}
