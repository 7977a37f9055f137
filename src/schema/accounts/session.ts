import type { AuthPayload } from '../../resolvers/accounts/accounts.js';
import * as accounts from '../../resolvers/accounts/accounts.js';
import { builder } from '../shared/builder.js';
import { Limits } from '../../limits.js';
import { UserRef } from './user.js';

const AuthPayloadRef = builder.objectRef<AuthPayload>('AuthPayload').implement({
  fields: (t) => ({
    token: t.exposeString('token', { description: 'A JWT: send it as "Authorization: Bearer <token>"' }),
    user: t.field({ type: UserRef, resolve: (p) => p.user }),
  }),
});

const RegisterInput = builder.inputType('RegisterInput', {
  fields: (t) => ({
    login: t.string({ required: true, description: "3–32 characters of a–z, 0–9, '.', '_', '-'" }),
    password: t.string({ required: true, description: `${Limits.password.min}–${Limits.password.max} characters` }),
    firstname: t.string({ required: true }),
    lastname: t.string({ required: true }),
    email: t.string({ required: true }),
    bio: t.string(),
  }),
});

builder.mutationFields((t) => ({
  register: t.field({
    type: AuthPayloadRef,
    args: { input: t.arg({ type: RegisterInput, required: true }) },
    resolve: (_root, args, ctx) => accounts.register(ctx, args.input),
  }),
  login: t.field({
    type: AuthPayloadRef,
    args: { login: t.arg.string({ required: true }), password: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => accounts.login(ctx, args.login, args.password),
  }),
  logout: t.boolean({
    description: 'Revokes the presented token on every server until it expires',
    resolve: (_root, _args, ctx) => accounts.logout(ctx),
  }),
  logoutEverywhere: t.int({
    description:
      'Ends every session of my account, this one included: their tokens are refused and their WebSockets closed on ' +
      'every server. Returns how many sessions it ended (sessions started before they were recorded, cql/013, end ' +
      'at their expiry; this one ends all the same)',
    resolve: (_root, _args, ctx) => accounts.logoutEverywhere(ctx),
  }),
  changePassword: t.int({
    description:
      'Changes my password, given the current one (a wrong one is INVALID_CREDENTIALS and counts against the same ' +
      'limits as a failed login), and ends every other session of my account on every server; this one stays. ' +
      'Returns how many sessions it ended. When another session changed it meanwhile: CONFLICT, or ' +
      'INVALID_CREDENTIALS if the change was already stored. After an error such as SERVICE_UNAVAILABLE, retry ' +
      'with the same arguments from the same session: it finishes a change that applied. Sessions started before ' +
      'sessions were recorded (cql/013) are not on record: they end at their expiry',
    args: {
      currentPassword: t.arg.string({ required: true }),
      newPassword: t.arg.string({ required: true, description: `${Limits.password.min}–${Limits.password.max} characters` }),
    },
    resolve: (_root, args, ctx) => accounts.changePassword(ctx, args.currentPassword, args.newPassword),
  }),
}));
