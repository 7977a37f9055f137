/**
 * The accounts domain's per-request reads: users by login, in batches, cached for the request alone.
 */
import type DataLoader from 'dataloader';
import type { UserRecord } from '../../db/accounts/users.js';
import type { Context } from '../context.js';
import { isPossibleLogin } from '../../validation.js';
import { byKey, perRequest } from '../shared/per-request.js';

const USERS = Symbol('users');

export function userLoader(ctx: Context): DataLoader<string, UserRecord | null> {
  // A string that cannot be a login names nobody, and must not reach Cassandra (empty or huge keys fail there).
  return perRequest(ctx, USERS, ({ users }) => byKey((logins: readonly string[]) => users.byLogins(logins.filter(isPossibleLogin)), (user) => user.login));
}
