/** Files in rooms: uploading one, the Attachment a message carries, and its link. */
import * as attachments from '../../resolvers/rooms/messages/attachments.js';
import type { AttachmentView } from '../../resolvers/rooms/messages/attachments.js';
import type { UploadedFile } from '../../resolvers/files/uploads.js';
import { Limits } from '../../limits.js';
import { builder } from '../shared/builder.js';
import { readsViewer, sameForEveryViewer } from '../shared/viewer-dependent.js';
import { MessageRef } from './message.js';

const limits = Limits.attachments;

builder.scalarType('File', {
  description: 'A file of a multipart request (the GraphQL multipart request spec); only as an argument',
  serialize: () => {
    throw new Error('File is an input only');
  },
  parseValue: (value) => value as UploadedFile,
});

const AttachmentRef = builder.objectRef<AttachmentView>('Attachment').implement({
  description: 'A file attached to a message (or uploaded, to be attached)',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'What postMessage(attachments:) takes' }),
    filename: t.exposeString('filename', { description: 'The uploaded file name, without any path' }),
    contentType: t.exposeString('contentType', { description: 'As its bytes showed it (never as the client claimed): the type it is served with' }),
    size: t.exposeInt('size', { description: 'In bytes' }),
    width: t.exposeInt('width', { nullable: true, description: "An image's width in pixels, to lay it out before it loads" }),
    height: t.exposeInt('height', { nullable: true }),
    url: t.string({
      description:
        `Where the viewer fetches it: a path on this server, signed for the viewer and good for ${limits.urlTtlSeconds / 60} minutes ` +
        '(GET, with Range and ETag); served while the message shows it to the viewer (they take part in its room).',
      extensions: readsViewer,
      resolve: (a, _args, ctx) => attachments.attachmentUrl(ctx, a),
    }),
  }),
});

builder.objectFields(MessageRef, (t) => ({
  attachments: t.field({
    type: [AttachmentRef],
    description: `The files it carries, in order (at most ${limits.perMessage}); none once hidden or deleted`,
    complexity: { field: 1, multiplier: limits.perMessage },
    extensions: sameForEveryViewer,
    resolve: (m, _args, ctx) => attachments.attachmentsOf(ctx, m),
  }),
}));

builder.mutationFields((t) => ({
  uploadAttachment: t.field({
    type: AttachmentRef,
    description:
      'Uploads one file (a multipart request, with the header x-graphql-yoga-csrf), to attach with postMessage(attachments:). ' +
      `At most ${limits.maxFileBytes / 1024 / 1024} MB (REQUEST_ENTITY_TOO_LARGE) and ${limits.uploadsPerDay} a day (LIMIT_REACHED, ` +
      'limit UPLOADS_PER_DAY); PNG, JPEG, GIF, WebP, PDF or UTF-8 text, as its bytes show (BAD_USER_INPUT, field file, otherwise).',
    args: { file: t.arg({ type: 'File', required: true }) },
    resolve: (_root, args, ctx) => attachments.uploadAttachment(ctx, args.file as UploadedFile),
  }),
}));
