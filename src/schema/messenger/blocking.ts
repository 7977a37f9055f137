import * as blocks from '../../resolvers/messenger/blocks.js';
import { builder } from '../shared/builder.js';
import { Limits } from '../../limits.js';
import { UserRef } from '../accounts/user.js';

builder.queryFields((t) => ({
  blockedUsers: t.field({
    type: [UserRef],
    description: `The users I blocked in the messenger, by login (at most ${Limits.messenger.maxBlocked})`,
    complexity: { field: 1, multiplier: Limits.messenger.maxBlocked },
    resolve: (_root, _args, ctx) => blocks.blockedUsers(ctx),
  }),
}));

builder.mutationFields((t) => ({
  blockUser: t.field({
    type: UserRef,
    description:
      'Blocks a user in the messenger: they can no longer send me direct messages (FORBIDDEN), nor can I write to ' +
      'them until I unblock them. What was sent before stays. Blocking again changes nothing; at most ' +
      `${Limits.messenger.maxBlocked} blocked users`,
    args: { login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => blocks.blockUser(ctx, args.login),
  }),
  unblockUser: t.boolean({
    description: 'Unblocks a user; false when they were not blocked',
    args: { login: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => blocks.unblockUser(ctx, args.login),
  }),
}));
