/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment MessageFields on Message {\n    id\n    content\n    createdAt\n    deleted\n    systemMessage\n    version\n    editedAt\n    replyCount\n    author {\n      login\n      displayName\n    }\n    replyTo {\n      id\n      content\n      author {\n        login\n      }\n    }\n    reactions {\n      emoji\n      count\n      reactedByViewer\n    }\n    attachments {\n      id\n      filename\n      contentType\n      width\n      height\n      url\n    }\n  }\n": typeof types.MessageFieldsFragmentDoc,
    "\n  mutation WebUploadAttachment($file: File!) {\n    uploadAttachment(file: $file) {\n      id\n      filename\n    }\n  }\n": typeof types.WebUploadAttachmentDocument,
    "\n  mutation WebRegister($input: RegisterInput!) {\n    register(input: $input) {\n      token\n      user {\n        login\n      }\n    }\n  }\n": typeof types.WebRegisterDocument,
    "\n  mutation WebLogin($login: String!, $password: String!) {\n    login(login: $login, password: $password) {\n      token\n      user {\n        login\n      }\n    }\n  }\n": typeof types.WebLoginDocument,
    "\n  query WebMyRooms {\n    me {\n      login\n      displayName\n      chatRooms {\n        id\n        name\n        readState {\n          unreadCount\n          unreadCapped\n          mentionCount\n        }\n      }\n    }\n  }\n": typeof types.WebMyRoomsDocument,
    "\n  query WebRoomHistory($roomName: String!, $after: String) {\n    room(roomName: $roomName) {\n      id\n      name\n      participantCount\n      messages(first: 30, after: $after) {\n        edges {\n          cursor\n          node {\n            ...MessageFields\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n": typeof types.WebRoomHistoryDocument,
    "\n  subscription WebRoomEvents($roomName: String!, $after: String) {\n    roomEvents(roomName: $roomName, after: $after) {\n      __typename\n      ... on MessagePosted {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageEdited {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageDeleted {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageHidden {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on ReactionChanged {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on TypingStarted {\n        cursor\n        user {\n          login\n          displayName\n        }\n      }\n      ... on FeedInterrupted {\n        cursor\n        resumeCursor\n      }\n    }\n  }\n": typeof types.WebRoomEventsDocument,
    "\n  mutation WebPostMessage($roomName: String!, $content: String!, $clientMessageId: String, $replyTo: ID, $attachments: [ID!]) {\n    postMessage(roomName: $roomName, content: $content, clientMessageId: $clientMessageId, replyTo: $replyTo, attachments: $attachments) {\n      ...MessageFields\n    }\n  }\n": typeof types.WebPostMessageDocument,
    "\n  mutation WebEditMessage($messageId: ID!, $content: String!) {\n    editMessage(messageId: $messageId, content: $content) {\n      ...MessageFields\n    }\n  }\n": typeof types.WebEditMessageDocument,
    "\n  mutation WebAddReaction($messageId: ID!, $emoji: String!) {\n    addReaction(messageId: $messageId, emoji: $emoji) {\n      ...MessageFields\n    }\n  }\n": typeof types.WebAddReactionDocument,
    "\n  mutation WebRemoveReaction($messageId: ID!, $emoji: String!) {\n    removeReaction(messageId: $messageId, emoji: $emoji) {\n      ...MessageFields\n    }\n  }\n": typeof types.WebRemoveReactionDocument,
    "\n  mutation WebSendTyping($roomName: String!) {\n    sendTyping(roomName: $roomName)\n  }\n": typeof types.WebSendTypingDocument,
    "\n  mutation WebMarkRoomRead($roomName: String!, $upTo: ID!) {\n    markRoomRead(roomName: $roomName, upTo: $upTo) {\n      unreadCount\n      mentionCount\n    }\n  }\n": typeof types.WebMarkRoomReadDocument,
    "\n  query WebConversations {\n    conversations(first: 50) {\n      edges {\n        node {\n          id\n          unreadCount\n          partner {\n            login\n            displayName\n          }\n          lastMessage {\n            id\n            content\n          }\n        }\n      }\n    }\n  }\n": typeof types.WebConversationsDocument,
    "\n  query WebConversation($with: String!) {\n    conversation(with: $with) {\n      id\n      partnerReadUpTo\n      messages(first: 50) {\n        edges {\n          node {\n            id\n            content\n            createdAt\n            from {\n              login\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.WebConversationDocument,
    "\n  mutation WebSendDirectMessage($to: String!, $content: String!) {\n    sendDirectMessage(to: $to, content: $content) {\n      id\n    }\n  }\n": typeof types.WebSendDirectMessageDocument,
    "\n  mutation WebMarkConversationRead($with: String!) {\n    markConversationRead(with: $with) {\n      id\n      unreadCount\n    }\n  }\n": typeof types.WebMarkConversationReadDocument,
    "\n  subscription WebInboxEvents {\n    inboxEvents {\n      __typename\n    }\n  }\n": typeof types.WebInboxEventsDocument,
};
const documents: Documents = {
    "\n  fragment MessageFields on Message {\n    id\n    content\n    createdAt\n    deleted\n    systemMessage\n    version\n    editedAt\n    replyCount\n    author {\n      login\n      displayName\n    }\n    replyTo {\n      id\n      content\n      author {\n        login\n      }\n    }\n    reactions {\n      emoji\n      count\n      reactedByViewer\n    }\n    attachments {\n      id\n      filename\n      contentType\n      width\n      height\n      url\n    }\n  }\n": types.MessageFieldsFragmentDoc,
    "\n  mutation WebUploadAttachment($file: File!) {\n    uploadAttachment(file: $file) {\n      id\n      filename\n    }\n  }\n": types.WebUploadAttachmentDocument,
    "\n  mutation WebRegister($input: RegisterInput!) {\n    register(input: $input) {\n      token\n      user {\n        login\n      }\n    }\n  }\n": types.WebRegisterDocument,
    "\n  mutation WebLogin($login: String!, $password: String!) {\n    login(login: $login, password: $password) {\n      token\n      user {\n        login\n      }\n    }\n  }\n": types.WebLoginDocument,
    "\n  query WebMyRooms {\n    me {\n      login\n      displayName\n      chatRooms {\n        id\n        name\n        readState {\n          unreadCount\n          unreadCapped\n          mentionCount\n        }\n      }\n    }\n  }\n": types.WebMyRoomsDocument,
    "\n  query WebRoomHistory($roomName: String!, $after: String) {\n    room(roomName: $roomName) {\n      id\n      name\n      participantCount\n      messages(first: 30, after: $after) {\n        edges {\n          cursor\n          node {\n            ...MessageFields\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n": types.WebRoomHistoryDocument,
    "\n  subscription WebRoomEvents($roomName: String!, $after: String) {\n    roomEvents(roomName: $roomName, after: $after) {\n      __typename\n      ... on MessagePosted {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageEdited {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageDeleted {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageHidden {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on ReactionChanged {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on TypingStarted {\n        cursor\n        user {\n          login\n          displayName\n        }\n      }\n      ... on FeedInterrupted {\n        cursor\n        resumeCursor\n      }\n    }\n  }\n": types.WebRoomEventsDocument,
    "\n  mutation WebPostMessage($roomName: String!, $content: String!, $clientMessageId: String, $replyTo: ID, $attachments: [ID!]) {\n    postMessage(roomName: $roomName, content: $content, clientMessageId: $clientMessageId, replyTo: $replyTo, attachments: $attachments) {\n      ...MessageFields\n    }\n  }\n": types.WebPostMessageDocument,
    "\n  mutation WebEditMessage($messageId: ID!, $content: String!) {\n    editMessage(messageId: $messageId, content: $content) {\n      ...MessageFields\n    }\n  }\n": types.WebEditMessageDocument,
    "\n  mutation WebAddReaction($messageId: ID!, $emoji: String!) {\n    addReaction(messageId: $messageId, emoji: $emoji) {\n      ...MessageFields\n    }\n  }\n": types.WebAddReactionDocument,
    "\n  mutation WebRemoveReaction($messageId: ID!, $emoji: String!) {\n    removeReaction(messageId: $messageId, emoji: $emoji) {\n      ...MessageFields\n    }\n  }\n": types.WebRemoveReactionDocument,
    "\n  mutation WebSendTyping($roomName: String!) {\n    sendTyping(roomName: $roomName)\n  }\n": types.WebSendTypingDocument,
    "\n  mutation WebMarkRoomRead($roomName: String!, $upTo: ID!) {\n    markRoomRead(roomName: $roomName, upTo: $upTo) {\n      unreadCount\n      mentionCount\n    }\n  }\n": types.WebMarkRoomReadDocument,
    "\n  query WebConversations {\n    conversations(first: 50) {\n      edges {\n        node {\n          id\n          unreadCount\n          partner {\n            login\n            displayName\n          }\n          lastMessage {\n            id\n            content\n          }\n        }\n      }\n    }\n  }\n": types.WebConversationsDocument,
    "\n  query WebConversation($with: String!) {\n    conversation(with: $with) {\n      id\n      partnerReadUpTo\n      messages(first: 50) {\n        edges {\n          node {\n            id\n            content\n            createdAt\n            from {\n              login\n            }\n          }\n        }\n      }\n    }\n  }\n": types.WebConversationDocument,
    "\n  mutation WebSendDirectMessage($to: String!, $content: String!) {\n    sendDirectMessage(to: $to, content: $content) {\n      id\n    }\n  }\n": types.WebSendDirectMessageDocument,
    "\n  mutation WebMarkConversationRead($with: String!) {\n    markConversationRead(with: $with) {\n      id\n      unreadCount\n    }\n  }\n": types.WebMarkConversationReadDocument,
    "\n  subscription WebInboxEvents {\n    inboxEvents {\n      __typename\n    }\n  }\n": types.WebInboxEventsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment MessageFields on Message {\n    id\n    content\n    createdAt\n    deleted\n    systemMessage\n    version\n    editedAt\n    replyCount\n    author {\n      login\n      displayName\n    }\n    replyTo {\n      id\n      content\n      author {\n        login\n      }\n    }\n    reactions {\n      emoji\n      count\n      reactedByViewer\n    }\n    attachments {\n      id\n      filename\n      contentType\n      width\n      height\n      url\n    }\n  }\n"): (typeof documents)["\n  fragment MessageFields on Message {\n    id\n    content\n    createdAt\n    deleted\n    systemMessage\n    version\n    editedAt\n    replyCount\n    author {\n      login\n      displayName\n    }\n    replyTo {\n      id\n      content\n      author {\n        login\n      }\n    }\n    reactions {\n      emoji\n      count\n      reactedByViewer\n    }\n    attachments {\n      id\n      filename\n      contentType\n      width\n      height\n      url\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebUploadAttachment($file: File!) {\n    uploadAttachment(file: $file) {\n      id\n      filename\n    }\n  }\n"): (typeof documents)["\n  mutation WebUploadAttachment($file: File!) {\n    uploadAttachment(file: $file) {\n      id\n      filename\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebRegister($input: RegisterInput!) {\n    register(input: $input) {\n      token\n      user {\n        login\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation WebRegister($input: RegisterInput!) {\n    register(input: $input) {\n      token\n      user {\n        login\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebLogin($login: String!, $password: String!) {\n    login(login: $login, password: $password) {\n      token\n      user {\n        login\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation WebLogin($login: String!, $password: String!) {\n    login(login: $login, password: $password) {\n      token\n      user {\n        login\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebMyRooms {\n    me {\n      login\n      displayName\n      chatRooms {\n        id\n        name\n        readState {\n          unreadCount\n          unreadCapped\n          mentionCount\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebMyRooms {\n    me {\n      login\n      displayName\n      chatRooms {\n        id\n        name\n        readState {\n          unreadCount\n          unreadCapped\n          mentionCount\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebRoomHistory($roomName: String!, $after: String) {\n    room(roomName: $roomName) {\n      id\n      name\n      participantCount\n      messages(first: 30, after: $after) {\n        edges {\n          cursor\n          node {\n            ...MessageFields\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebRoomHistory($roomName: String!, $after: String) {\n    room(roomName: $roomName) {\n      id\n      name\n      participantCount\n      messages(first: 30, after: $after) {\n        edges {\n          cursor\n          node {\n            ...MessageFields\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WebRoomEvents($roomName: String!, $after: String) {\n    roomEvents(roomName: $roomName, after: $after) {\n      __typename\n      ... on MessagePosted {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageEdited {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageDeleted {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageHidden {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on ReactionChanged {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on TypingStarted {\n        cursor\n        user {\n          login\n          displayName\n        }\n      }\n      ... on FeedInterrupted {\n        cursor\n        resumeCursor\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription WebRoomEvents($roomName: String!, $after: String) {\n    roomEvents(roomName: $roomName, after: $after) {\n      __typename\n      ... on MessagePosted {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageEdited {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageDeleted {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on MessageHidden {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on ReactionChanged {\n        cursor\n        message {\n          ...MessageFields\n        }\n      }\n      ... on TypingStarted {\n        cursor\n        user {\n          login\n          displayName\n        }\n      }\n      ... on FeedInterrupted {\n        cursor\n        resumeCursor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebPostMessage($roomName: String!, $content: String!, $clientMessageId: String, $replyTo: ID, $attachments: [ID!]) {\n    postMessage(roomName: $roomName, content: $content, clientMessageId: $clientMessageId, replyTo: $replyTo, attachments: $attachments) {\n      ...MessageFields\n    }\n  }\n"): (typeof documents)["\n  mutation WebPostMessage($roomName: String!, $content: String!, $clientMessageId: String, $replyTo: ID, $attachments: [ID!]) {\n    postMessage(roomName: $roomName, content: $content, clientMessageId: $clientMessageId, replyTo: $replyTo, attachments: $attachments) {\n      ...MessageFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebEditMessage($messageId: ID!, $content: String!) {\n    editMessage(messageId: $messageId, content: $content) {\n      ...MessageFields\n    }\n  }\n"): (typeof documents)["\n  mutation WebEditMessage($messageId: ID!, $content: String!) {\n    editMessage(messageId: $messageId, content: $content) {\n      ...MessageFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebAddReaction($messageId: ID!, $emoji: String!) {\n    addReaction(messageId: $messageId, emoji: $emoji) {\n      ...MessageFields\n    }\n  }\n"): (typeof documents)["\n  mutation WebAddReaction($messageId: ID!, $emoji: String!) {\n    addReaction(messageId: $messageId, emoji: $emoji) {\n      ...MessageFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebRemoveReaction($messageId: ID!, $emoji: String!) {\n    removeReaction(messageId: $messageId, emoji: $emoji) {\n      ...MessageFields\n    }\n  }\n"): (typeof documents)["\n  mutation WebRemoveReaction($messageId: ID!, $emoji: String!) {\n    removeReaction(messageId: $messageId, emoji: $emoji) {\n      ...MessageFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebSendTyping($roomName: String!) {\n    sendTyping(roomName: $roomName)\n  }\n"): (typeof documents)["\n  mutation WebSendTyping($roomName: String!) {\n    sendTyping(roomName: $roomName)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebMarkRoomRead($roomName: String!, $upTo: ID!) {\n    markRoomRead(roomName: $roomName, upTo: $upTo) {\n      unreadCount\n      mentionCount\n    }\n  }\n"): (typeof documents)["\n  mutation WebMarkRoomRead($roomName: String!, $upTo: ID!) {\n    markRoomRead(roomName: $roomName, upTo: $upTo) {\n      unreadCount\n      mentionCount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebConversations {\n    conversations(first: 50) {\n      edges {\n        node {\n          id\n          unreadCount\n          partner {\n            login\n            displayName\n          }\n          lastMessage {\n            id\n            content\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebConversations {\n    conversations(first: 50) {\n      edges {\n        node {\n          id\n          unreadCount\n          partner {\n            login\n            displayName\n          }\n          lastMessage {\n            id\n            content\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebConversation($with: String!) {\n    conversation(with: $with) {\n      id\n      partnerReadUpTo\n      messages(first: 50) {\n        edges {\n          node {\n            id\n            content\n            createdAt\n            from {\n              login\n            }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query WebConversation($with: String!) {\n    conversation(with: $with) {\n      id\n      partnerReadUpTo\n      messages(first: 50) {\n        edges {\n          node {\n            id\n            content\n            createdAt\n            from {\n              login\n            }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebSendDirectMessage($to: String!, $content: String!) {\n    sendDirectMessage(to: $to, content: $content) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation WebSendDirectMessage($to: String!, $content: String!) {\n    sendDirectMessage(to: $to, content: $content) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebMarkConversationRead($with: String!) {\n    markConversationRead(with: $with) {\n      id\n      unreadCount\n    }\n  }\n"): (typeof documents)["\n  mutation WebMarkConversationRead($with: String!) {\n    markConversationRead(with: $with) {\n      id\n      unreadCount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WebInboxEvents {\n    inboxEvents {\n      __typename\n    }\n  }\n"): (typeof documents)["\n  subscription WebInboxEvents {\n    inboxEvents {\n      __typename\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;