/** Sign-up helpers: unique users registered through the real API. */
import { randomBytes } from 'node:crypto';
import type { App } from '../../../src/app.js';
import { RegisterDocument } from '../../generated/graphql.js';
import { gqlOk } from '../http.js';

let counter = 0;

/** A login that no other test (or earlier run) has used. */
export function uniqueLogin(prefix = 'user'): string {
  counter += 1;
  return `${prefix}_${randomBytes(4).toString('hex')}${counter}`.slice(0, 32);
}

export interface TestUser {
  login: string;
  password: string;
  firstname: string;
  lastname: string;
  email: string;
  token: string;
}

export async function signUp(app: App, overrides: Partial<Omit<TestUser, 'token'>> = {}): Promise<TestUser> {
  const login = overrides.login ?? uniqueLogin();
  const input = {
    login,
    password: overrides.password ?? 'correct horse battery',
    firstname: overrides.firstname ?? 'Test',
    lastname: overrides.lastname ?? login,
    email: overrides.email ?? `${login}@example.test`,
  };
  const data = await gqlOk(app, RegisterDocument, { input });
  return { ...input, token: data.register.token };
}

/** Registers `n` users, a few at a time. */
export async function signUpMany(app: App, n: number, prefix = 'user'): Promise<TestUser[]> {
  const users: TestUser[] = [];
  for (let i = 0; i < n; i += 10) {
    const batch = Array.from({ length: Math.min(10, n - i) }, () => signUp(app, { login: uniqueLogin(prefix) }));
    users.push(...(await Promise.all(batch)));
  }
  return users;
}

/**
 * A user row written straight through the store, for seeding hundreds of
 * partners fast (sign-up through the API costs a password hash each). Such a
 * user cannot log in. Returns false when the login already existed.
 */
export function seedUserRow(app: App, login: string, createdAt: Date): Promise<boolean> {
  return app.services.stores.users.insertIfNotExists({
    login,
    passwordHash: 'seeded',
    firstname: 'Partner',
    lastname: login,
    email: `${login}@example.test`,
    bio: null,
    createdAt,
  });
}
