/**
 * Accounts: registration, login, logout and profiles.
 */
import { refreshLoaders, type Context } from '../../context.js';
import { eventStream } from '../../pubsub/pubsub.js';
import type { UserRecord } from '../../db/accounts/users.js';
import { AppError, ErrorCode, notFound } from '../../errors.js';
import { Limits } from '../../limits.js';
import { validBio, validEmail, validLogin, validName, validPassword, requireLength } from '../../validation.js';
import { requireViewer } from '../shared/guards.js';

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

  const { stores, tokens, clock, rateLimiter, config, metrics } = ctx.services;
  const attempts = await rateLimiter.increment(`register:${ctx.clientAddress}`, 3600);
  if (attempts.count > config.auth.registrationsPerAddressPerHour) {
    metrics.rateLimited('register');
    throw new AppError(ErrorCode.RATE_LIMITED, `Too many sign-ups from this address; retry in ${attempts.retryAfter} s`, {
      retryAfter: attempts.retryAfter,
    });
  }
  const user: Omit<UserRecord, 'chatRooms' | 'lastSeenAt'> = {
    login,
    passwordHash: await ctx.services.passwords.hash(password),
    firstname,
    lastname,
    email,
    bio,
    createdAt: clock.now(),
  };
  if (!(await stores.users.insertIfNotExists(user))) {
    throw new AppError(ErrorCode.LOGIN_TAKEN, `The login "${login}" is taken`, { field: 'input.login' });
  }
  const { token, session } = await tokens.issue(login);
  ctx.viewer = session; // the rest of this operation (AuthPayload.user.email) runs as the new session
  return { token, user: { ...user, chatRooms: new Set(), lastSeenAt: null } };
}

const invalidCredentials = () => new AppError(ErrorCode.INVALID_CREDENTIALS, 'Invalid login or password');

export async function login(ctx: Context, rawLogin: string, password: string): Promise<AuthPayload> {
  const { stores, tokens, rateLimiter, config, decoyPasswordHash, metrics, passwords } = ctx.services;
  const login = normalizeLogin(rawLogin);
  requireLength('login', login, 1, Limits.login.max);
  requireLength('password', password, 1, Limits.password.max);

  const { loginFailuresPerLogin, loginFailuresPerAddress, loginFailureWindowSeconds } = config.auth;
  const loginKey = `login:${login}`;
  const addressKey = `addr:${ctx.clientAddress}`;
  // Count the attempt first (atomically), so parallel guesses cannot all slip under the limit.
  const [byLogin, byAddress] = await Promise.all([
    rateLimiter.increment(loginKey, loginFailureWindowSeconds),
    rateLimiter.increment(addressKey, loginFailureWindowSeconds),
  ]);
  const retryAfter = Math.max(
    byLogin.count > loginFailuresPerLogin ? byLogin.retryAfter : 0,
    byAddress.count > loginFailuresPerAddress ? byAddress.retryAfter : 0,
  );
  if (retryAfter > 0) {
    metrics.rateLimited('login');
    throw new AppError(ErrorCode.RATE_LIMITED, `Too many failed logins; retry in ${retryAfter} s`, { retryAfter });
  }

  let user: UserRecord | undefined;
  let ok: boolean;
  try {
    user = await stores.users.byLogin(login);
    // Unknown logins verify against a decoy hash so both failures take the same time.
    ok = await passwords.verify(password, user?.passwordHash ?? decoyPasswordHash);
  } catch (err) {
    // Nothing was checked (storage did not answer): not a failure. Counting it would lock out
    // everyone who retried during an outage, and everyone behind one proxy, after it ended.
    await Promise.all([rateLimiter.decrement(loginKey), rateLimiter.decrement(addressKey)]);
    throw err;
  }
  if (!user || !ok) {
    // The client is never told which; the operator is: unknown logins suggest credential stuffing, wrong passwords guessing.
    metrics.loginFailure(user ? 'wrong_password' : 'unknown_login');
    throw invalidCredentials(); // the attempt stays counted as a failure
  }
  // A success is not a failure: give the attempt back.
  await Promise.all([rateLimiter.reset(loginKey), rateLimiter.decrement(addressKey)]);
  const { token, session } = await tokens.issue(login);
  ctx.viewer = session; // the rest of this operation runs as the new session
  return { token, user };
}

/** Revokes the presented token on every instance until it would have expired. */
export async function logout(ctx: Context): Promise<boolean> {
  const viewer = requireViewer(ctx);
  await ctx.services.revocations.revoke(viewer.jti, viewer.expiresAt);
  return true;
}

export async function me(ctx: Context): Promise<UserRecord | null> {
  if (!ctx.viewer) return null;
  return ctx.loaders.user.load(ctx.viewer.login);
}

export async function userByLogin(ctx: Context, login: string): Promise<UserRecord | null> {
  requireViewer(ctx);
  return ctx.loaders.user.load(normalizeLogin(login));
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
  ctx.loaders.user.clear(viewer.login).prime(viewer.login, user);
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
  if (!(await ctx.loaders.user.load(normalized))) throw notFound('User');
  return eventStream<{ login: string }>(ctx.services.pubsub, profileChannel(normalized));
}

export async function profileEventUser(ctx: Context, event: { login: string }): Promise<UserRecord> {
  refreshLoaders(ctx);
  return existingUser(ctx, event.login);
}

/** The account a stored record names (a seller, a buyer, a participant): batched through the loader. */
export async function existingUser(ctx: Context, login: string): Promise<UserRecord> {
  const user = await ctx.loaders.user.load(login);
  if (!user) throw notFound('User');
  return user;
}
