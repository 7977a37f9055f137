/**
 * The rule of src/schema/shared/viewer-dependent.ts, checked on the built
 * schema, and the walk that tells whether an operation selects a field that
 * reads the viewer (its events are then executed per viewer, never shared).
 */
import { describe, expect, it } from 'vitest';
import { buildSchema, defaultFieldResolver, isIntrospectionType, isObjectType, parse } from 'graphql';
import { schema } from '../../src/schema/index.js';
import { declaresViewerDependence, isViewerDependent } from '../../src/schema/shared/viewer-dependent.js';
import { selectsViewerDependentField } from '../../src/server/viewer-dependence.js';
import { RoomEventsDocument } from '../generated/graphql.js';

/** Fields outside Query and Mutation whose resolver, as written in src/schema/, takes the context. */
function fieldsTakingContext() {
  const skipped = new Set([schema.getQueryType(), schema.getMutationType()]);
  const found = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || isIntrospectionType(type) || skipped.has(type)) continue;
    for (const field of Object.values(type.getFields())) {
      // Pothos keeps the resolver as written; the one in the schema may be wrapped by its plugins.
      const written = (field.extensions as { pothosOriginalResolve?: unknown }).pothosOriginalResolve ?? field.resolve;
      if (typeof written === 'function' && written !== defaultFieldResolver && written.length >= 3) found.push({ name: `${type.name}.${field.name}`, field });
    }
  }
  return found;
}

const selects = (document: string) => selectsViewerDependentField(schema, parse(document));

describe('fields that read the viewer', () => {
  it('every field outside Query and Mutation whose resolver takes the context says whether it reads the viewer', () => {
    const fields = fieldsTakingContext();
    expect(fields.length).toBeGreaterThan(10);
    expect(fields.filter((f) => !declaresViewerDependence(f.field)).map((f) => f.name)).toEqual([]);
  });

  it('marks those that answer per viewer', () => {
    const marked = fieldsTakingContext().filter((f) => isViewerDependent(f.field)).map((f) => f.name);
    expect(marked.sort()).toEqual([
      'Attachment.url',
      'Conversation.messages',
      'DirectMessage.forwardedFrom',
      'DirectMessageReceived.conversation',
      'Item.purchases',
      'Message.forwardedFrom',
      'Message.replies',
      'Message.seenBy',
      'Poll.myAnswers',
      'Reaction.reactedByViewer',
      'Room.auditLog',
      'Room.bannedParticipants',
      'Room.joinRequests',
      'Room.messages',
      'Room.mutedParticipants',
      'Room.onlineParticipants',
      'Room.pinnedMessages',
      'Room.readState',
      'Room.viewerJoinRequest',
      'Room.viewerMutedUntil',
      'Room.viewerRole',
      'RoomInvitationReceived.invitation',
      'Subscription.inboxEvents',
      'User.chatRooms',
      'User.email',
      'User.messages',
    ]);
  });
});

describe('whether an operation selects one', () => {
  it('does not for what a chat client follows', () => {
    expect(selectsViewerDependentField(schema, RoomEventsDocument)).toBe(false);
    expect(selects('subscription { roomEvents(roomName: "r") { __typename ... on MessagePosted { message { id content } } } }')).toBe(false);
    expect(selects('subscription { profileUpdated(login: "a") { login bio } itemUpdated(itemId: "i") { seller { login } } }')).toBe(false);
  });

  it('does through inline fragments on a union member, named fragments and nested types', () => {
    expect(selects('subscription { roomEvents(roomName: "r") { ... on MessagePosted { message { author { email } } } } }')).toBe(true);
    expect(selects('subscription { roomEvents(roomName: "r") { ...E } } fragment E on ParticipantJoined { user { ...U } } fragment U on User { chatRooms { name } }')).toBe(true);
    expect(selects('subscription { roomEvents(roomName: "r") { ... on RoomDeleted { deletedBy { messages { edges { cursor } } } } } }')).toBe(true);
    expect(selects('subscription { itemUpdated(itemId: "i") { purchases { edges { cursor } } } }')).toBe(true);
    expect(selects('subscription { inboxEvents { __typename } }')).toBe(true);
  });

  it('counts fields under @skip, and only the operation that runs', () => {
    expect(selects('subscription { roomEvents(roomName: "r") { ... on TypingStarted { user { email @skip(if: true) } } } }')).toBe(true);
    const two = parse('subscription A { profileUpdated(login: "a") { login } } subscription B { profileUpdated(login: "a") { email } }');
    expect(selectsViewerDependentField(schema, two, 'A')).toBe(false);
    expect(selectsViewerDependentField(schema, two, 'B')).toBe(true);
  });

  it('counts a field selected on an interface as that field of every type implementing it', () => {
    const small = buildSchema(`
      type Query { x: Int }
      interface Person { name: String secret: String }
      type Me implements Person { name: String secret: String }
      type Them implements Person { name: String secret: String }
      type Subscription { who: Person }
    `);
    const them = small.getType('Them');
    if (!isObjectType(them)) throw new Error('no Them');
    Object.assign(them.getFields().secret!, { extensions: { viewerDependent: true } });
    expect(selectsViewerDependentField(small, parse('subscription { who { name } }'))).toBe(false);
    expect(selectsViewerDependentField(small, parse('subscription { who { secret } }'))).toBe(true);
    expect(selectsViewerDependentField(small, parse('subscription { who { ... on Me { secret } } }'))).toBe(false);
  });
});
