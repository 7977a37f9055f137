
import { encodeMessageId } from '../../resolvers/rooms/ids.js';
import * as messages from '../../resolvers/rooms/messages/messages.js';
import { postMessage } from '../../resolvers/rooms/messages/posting.js';
import { personAsUser } from '../../resolvers/rooms/people.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { UserRef } from '../accounts/user.js';
import type { MessageRecord } from '../../db/rooms/messages/message-row.js';

export const MessageRef = builder.objectRef<MessageRecord>('Message');

builder.node(MessageRef, {
  description: 'A message in a chat room',
  // Its id is the one message(messageId:) takes, and already global (src/resolvers/shared/global-ids.ts).
  id: { resolve: (m) => encodeMessageId(m), extensions: sameForEveryViewer },
  loadMany: (ids, ctx) => messages.messageNodes(ctx, ids),
  fields: (t) => ({
    roomName: t.exposeString('roomName'),
    author: t.field({
      type: UserRef,
      description: 'For a system message, the user it is about',
      extensions: sameForEveryViewer,
      resolve: (m, _args, ctx) => personAsUser(ctx, m.author),
    }),
    content: t.string({
      nullable: true,
      description: 'The current version. Null once the message is hidden or deleted',
      resolve: (m) => messages.visibleContent(m),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (m) => messages.messageCreatedAt(m) }),
    systemMessage: t.exposeBoolean('systemMessage', { description: 'Posted by the server, e.g. "… joins the room"' }),
    visible: t.exposeBoolean('visible'),
    version: t.exposeInt('version', {
      description:
        '0 as posted, one more per accepted edit. Edits are totally ordered: the highest version is the current content, ' +
        'so a client that receives MessageEdited events out of order keeps the one with the highest version.',
    }),
    editedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the current version was written; null when never edited',
      resolve: (m) => messages.editedAt(m),
    }),
    deleted: t.exposeBoolean('deleted', {
      description: 'Deleted by its author or, as moderation, by an admin or the owner: a tombstone that keeps its place in history, without content',
    }),
    metadata: t.field({
      type: 'JSON',
      nullable: true,
      description: 'Custom data its author gave it (a JSON object), as of its current version; null when none, and once hidden or deleted',
      resolve: (m) => messages.visibleMetadata(m),
    }),
    mentions: t.field({
      type: [UserRef],
      description: `The participants its content mentions with @login, in order of first mention (at most ${Limits.room.maxMentions}). Unknown logins and non-participants are plain text.`,
      complexity: { field: 1, multiplier: Limits.room.maxMentions },
      extensions: sameForEveryViewer,
      resolve: (m, _args, ctx) => m.mentions.map((p) => personAsUser(ctx, p)),
    }),
  }),
});

export const MessageConnection = builder.connectionObject({
  type: MessageRef,
  name: 'MessageConnection',
});

builder.objectFields(UserRef, (t) => ({
  messages: t.field({
    type: MessageConnection,
    nullable: true,
    description:
      "The user's own messages across rooms, newest first: each the room message itself, every field as " +
      'message(messageId:) serves it to its author under the same id. A message whose room is gone is left out, so a ' +
      'page may hold fewer than `first`: continue from endCursor while hasNextPage. Visible to the user only; null for everyone else.',
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: readsViewer,
    resolve: (user, args, ctx) => messages.messagesOf(ctx, user, args.first, args.after),
  }),
}));

builder.queryFields((t) => ({
  message: t.field({
    type: MessageRef,
    nullable: true,
    description: "A message by id, for its room's participants and its author; null when it no longer exists",
    args: { messageId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => messages.messageById(ctx, args.messageId),
  }),
}));

builder.mutationFields((t) => ({
  postMessage: t.field({
    type: MessageRef,
    description:
      `Participants only. A retry carrying the same clientMessageId within ${Limits.room.clientMessageIdTtlSeconds / 3600} hours returns the original message and posts nothing new.`,
    args: {
      roomName: t.arg.string({ required: true }),
      content: t.arg.string({ required: true, description: `${Limits.room.content.min}–${Limits.room.content.max} characters after trimming` }),
      clientMessageId: t.arg.string({ description: `${Limits.clientId.min}–${Limits.clientId.max} characters, chosen by the client per message` }),
      replyTo: t.arg.id({
        description:
          "Makes the message a reply in that message's thread (one level deep: not a reply, not a system message, not deleted). " +
          'A reply shows in the room\'s history and feed like any message, with replyTo set, and in its parent\'s replies.',
      }),
      attachments: t.arg.idList({
        description: `Ids of your uploads (uploadAttachment) to attach, at most ${Limits.attachments.perMessage} (LIMIT_REACHED, limit ATTACHMENTS_PER_MESSAGE)`,
      }),
      metadata: t.arg({ type: 'JSON', description: `Custom data: a JSON object of at most ${Limits.metadata.maxBytes} bytes as JSON (BAD_USER_INPUT, field metadata, otherwise)` }),
    },
    resolve: (_root, args, ctx) => postMessage(ctx, args),
  }),
  hideMessage: t.field({
    type: MessageRef,
    description: "The author, or an admin or the owner who outranks them, hides a message; its content is then null for everyone",
    args: { messageId: t.arg.id({ required: true }), reason: t.arg.string({ description: 'Why, for the room\'s audit log (at most 500 characters)' }) },
    resolve: (_root, args, ctx) => messages.hideMessage(ctx, args.messageId, args.reason),
  }),
}));
