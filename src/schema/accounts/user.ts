import type { UserRecord } from '../../db/accounts/users.js';
import * as accounts from '../../resolvers/accounts/accounts.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';

export const UserRef = builder.objectRef<UserRecord>('User');

builder.node(UserRef, {
  description: 'A registered person',
  id: { resolve: (u) => u.login, extensions: sameForEveryViewer },
  loadMany: (logins, ctx) => accounts.userNodes(ctx, logins),
  fields: (t) => ({
    login: t.exposeString('login'),
    firstname: t.exposeString('firstname'),
    lastname: t.exposeString('lastname'),
    displayName: t.string({ resolve: (u) => `${u.firstname} ${u.lastname}` }),
    email: t.string({
      nullable: true,
      description: 'Visible to its owner only; null for everyone else',
      extensions: readsViewer,
      resolve: (u, _args, ctx) => accounts.visibleEmail(ctx, u),
    }),
    // A resolver, not an exposed property: a stored person's bio is a promise (src/resolvers/rooms/people.ts), and
    // graphql-jit reads a field without resolver straight off its parent, without awaiting it.
    bio: t.string({ nullable: true, resolve: (u) => u.bio }),
    createdAt: t.field({ type: 'DateTime', resolve: (u) => u.createdAt }),
  }),
});

const UpdateProfileInput = builder.inputType('UpdateProfileInput', {
  description: 'Each field is optional: what is left out stays as it is. The login cannot change.',
  fields: (t) => ({
    firstname: t.string(),
    lastname: t.string(),
    email: t.string(),
    bio: t.string(),
  }),
});

builder.queryFields((t) => ({
  me: t.field({
    type: UserRef,
    nullable: true,
    description: 'The logged-in user, or null when anonymous',
    resolve: (_root, _args, ctx) => accounts.me(ctx),
  }),
  user: t.field({
    type: UserRef,
    nullable: true,
    args: { login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => accounts.userByLogin(ctx, args.login),
  }),
}));

builder.mutationFields((t) => ({
  updateProfile: t.field({
    type: UserRef,
    args: { input: t.arg({ type: UpdateProfileInput, required: true }) },
    resolve: (_root, args, ctx) => accounts.updateProfile(ctx, args.input),
  }),
}));

builder.subscriptionFields((t) => ({
  profileUpdated: t.field({
    type: UserRef,
    description: "A user's profile after each change",
    args: { login: t.arg.string({ required: true }) },
    subscribe: (_root, args, ctx) => accounts.subscribeProfile(ctx, args.login),
    extensions: sameForEveryViewer,
    resolve: (event: { login: string }, _args, ctx) => accounts.profileEventUser(ctx, event),
  }),
}));
