import type { MessageVersion } from '../../resolvers/rooms/messages/edits.js';
import * as edits from '../../resolvers/rooms/messages/edits.js';
import { messageVersionAt } from '../../resolvers/rooms/messages/messages.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { sameForEveryViewer } from '../shared/viewer-dependent.js';
import { MessageRef } from './message.js';

const MessageVersionRef = builder.objectRef<MessageVersion>('MessageVersion').implement({
  description: 'An earlier version of an edited message',
  fields: (t) => ({
    version: t.exposeInt('version', { description: '0 is the message as posted' }),
    content: t.exposeString('content', { nullable: true }),
    metadata: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The custom data this version had',
      resolve: (v) => edits.versionMetadata(v),
    }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When this version was written (for version 0, when the message was posted)',
      resolve: (v) => messageVersionAt(v.message, v.editId),
    }),
  }),
});

const MessageVersionConnection = builder.connectionObject({ type: MessageVersionRef, name: 'MessageVersionConnection' });

builder.objectFields(MessageRef, (t) => ({
  edits: t.field({
    type: MessageVersionConnection,
    description:
      'The versions before the current one, newest first; each accepted edit is here exactly once once a later one ' +
      'replaced it. Empty for a deleted message (its content is gone with it).',
    args: { first: t.arg.int(), after: t.arg.string() },
    extensions: sameForEveryViewer,
    resolve: (m, args, ctx) => edits.editsOf(ctx, m, args.first, args.after),
  }),
}));

builder.mutationFields((t) => ({
  editMessage: t.field({
    type: MessageRef,
    description:
      'The author (a participant) replaces the content; not on system, hidden or deleted messages, and at most ' +
      `${Limits.room.edits.maxVersion} times. With expectedVersion the edit applies only to that version (CONFLICT ` +
      'otherwise); without it, an edit that races another is applied after it. Mentions are parsed again; people ' +
      'newly mentioned get a Mentioned event. Publishes MessageEdited. An edit to the content the message already has ' +
      'makes no version and answers the message as it is: retrying an edit that answered SERVICE_UNAVAILABLE finishes it.',
    args: {
      messageId: t.arg.id({ required: true }),
      content: t.arg.string({ required: true, description: `${Limits.room.content.min}–${Limits.room.content.max} characters after trimming` }),
      expectedVersion: t.arg.int({ description: 'The version the edit is based on' }),
      metadata: t.arg({
        type: 'JSON',
        description: `The new version's custom data (a JSON object of at most ${Limits.metadata.maxBytes} bytes); left out: it stays as it is; null: it goes`,
      }),
    },
    resolve: (_root, args, ctx) => edits.editMessage(ctx, args.messageId, args.content, args.expectedVersion, args.metadata),
  }),
  deleteMessage: t.field({
    type: MessageRef,
    description:
      "Its author, or (REMOVE_ANY_MESSAGE) an admin or the owner who outranks them, as moderation. The message stays in history as a tombstone (deleted: true, " +
      'no content, no earlier versions, no reactions, no longer pinned), so pages and cursors keep their places; an edit racing the ' +
      'deletion never brings the content back. Deleting it again returns the tombstone (and finishes a deletion that ' +
      'answered SERVICE_UNAVAILABLE). Publishes MessageDeleted, then MessageUnpinned when it was pinned.',
    args: { messageId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => edits.deleteMessage(ctx, args.messageId),
  }),
}));
