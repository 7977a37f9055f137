/** Forwarding room messages: forwardMessage, and forwardedFrom on the copies it makes in rooms and conversations. */
import * as forwarding from '../../resolvers/rooms/messages/forwarding.js';
import { builder } from '../shared/builder.js';
import { readsViewer } from '../shared/viewer-dependent.js';
import { MessageRef } from './message.js';
import { DirectMessageRef } from '../messenger/direct-message.js';

const FORWARDED_FROM = {
  description: 'The room message this one forwards, for those who may read it (its room\'s participants, its author); null for anyone else, and for a message that forwards nothing',
  // Who may see the original depends on the viewer.
  extensions: readsViewer,
} as const;

builder.objectFields(MessageRef, (t) => ({
  forwardedFrom: t.field({ type: MessageRef, nullable: true, ...FORWARDED_FROM, resolve: (m, _args, ctx) => forwarding.forwardedFromOf(ctx, m.forwardedFrom) }),
}));

builder.objectFields(DirectMessageRef, (t) => ({
  forwardedFrom: t.field({ type: MessageRef, nullable: true, ...FORWARDED_FROM, resolve: (m, _args, ctx) => forwarding.forwardedFromOf(ctx, m.forwardedFrom) }),
}));

const ForwardedRef = builder.unionType('Forwarded', {
  description: 'The copy forwardMessage made: a Message in a room, or a DirectMessage',
  types: [MessageRef, DirectMessageRef],
  resolveType: (f) => forwarding.forwardedKind(f),
});

builder.mutationFields((t) => ({
  forwardMessage: t.field({
    type: ForwardedRef,
    description:
      "Forwards a room message you may read (FORBIDDEN from a room you do not take part in) to a room (toRoom) or to a " +
      'person (to): a new message of yours with its current content, as postMessage or sendDirectMessage would post it, ' +
      'keeping forwardedFrom. BAD_USER_INPUT: not exactly one of toRoom and to (field toRoom); a deleted, hidden or ' +
      'system message (field messageId).',
    args: {
      messageId: t.arg.id({ required: true }),
      toRoom: t.arg.string(),
      to: t.arg.string({ description: "The recipient's login" }),
      clientMessageId: t.arg.string({ description: 'For a room: as postMessage, a retry with the same one posts once' }),
    },
    resolve: (_root, args, ctx) => forwarding.forwardMessage(ctx, args),
  }),
}));
