/** Every operation the web client sends: codegen types them and lists them in the trusted-documents manifest. */
import { graphql } from './gql/index.js';

export const MessageFields = graphql(`
  fragment MessageFields on Message {
    id
    content
    createdAt
    deleted
    systemMessage
    version
    editedAt
    replyCount
    author {
      login
      displayName
    }
    replyTo {
      id
      content
      author {
        login
      }
    }
    reactions {
      emoji
      count
      reactedByViewer
    }
    attachments {
      id
      filename
      contentType
      width
      height
      url
    }
  }
`);

export const UploadAttachment = graphql(`
  mutation WebUploadAttachment($file: File!) {
    uploadAttachment(file: $file) {
      id
      filename
    }
  }
`);

export const Register = graphql(`
  mutation WebRegister($input: RegisterInput!) {
    register(input: $input) {
      token
      user {
        login
      }
    }
  }
`);

export const Login = graphql(`
  mutation WebLogin($login: String!, $password: String!) {
    login(login: $login, password: $password) {
      token
      user {
        login
      }
    }
  }
`);

export const MyRooms = graphql(`
  query WebMyRooms {
    me {
      login
      displayName
      chatRooms {
        id
        name
        readState {
          unreadCount
          unreadCapped
          mentionCount
        }
      }
    }
  }
`);

export const RoomHistory = graphql(`
  query WebRoomHistory($roomName: String!, $after: String) {
    room(roomName: $roomName) {
      id
      name
      participantCount
      messages(first: 30, after: $after) {
        edges {
          cursor
          node {
            ...MessageFields
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`);

export const RoomEvents = graphql(`
  subscription WebRoomEvents($roomName: String!, $after: String) {
    roomEvents(roomName: $roomName, after: $after) {
      __typename
      ... on MessagePosted {
        cursor
        message {
          ...MessageFields
        }
      }
      ... on MessageEdited {
        cursor
        message {
          ...MessageFields
        }
      }
      ... on MessageDeleted {
        cursor
        message {
          ...MessageFields
        }
      }
      ... on MessageHidden {
        cursor
        message {
          ...MessageFields
        }
      }
      ... on ReactionChanged {
        cursor
        message {
          ...MessageFields
        }
      }
      ... on TypingStarted {
        cursor
        user {
          login
          displayName
        }
      }
      ... on FeedInterrupted {
        cursor
        resumeCursor
      }
    }
  }
`);

export const PostMessage = graphql(`
  mutation WebPostMessage($roomName: String!, $content: String!, $clientMessageId: String, $replyTo: ID, $attachments: [ID!]) {
    postMessage(roomName: $roomName, content: $content, clientMessageId: $clientMessageId, replyTo: $replyTo, attachments: $attachments) {
      ...MessageFields
    }
  }
`);

export const EditMessage = graphql(`
  mutation WebEditMessage($messageId: ID!, $content: String!) {
    editMessage(messageId: $messageId, content: $content) {
      ...MessageFields
    }
  }
`);

export const AddReaction = graphql(`
  mutation WebAddReaction($messageId: ID!, $emoji: String!) {
    addReaction(messageId: $messageId, emoji: $emoji) {
      ...MessageFields
    }
  }
`);

export const RemoveReaction = graphql(`
  mutation WebRemoveReaction($messageId: ID!, $emoji: String!) {
    removeReaction(messageId: $messageId, emoji: $emoji) {
      ...MessageFields
    }
  }
`);

export const SendTyping = graphql(`
  mutation WebSendTyping($roomName: String!) {
    sendTyping(roomName: $roomName)
  }
`);

export const MarkRoomRead = graphql(`
  mutation WebMarkRoomRead($roomName: String!, $upTo: ID!) {
    markRoomRead(roomName: $roomName, upTo: $upTo) {
      unreadCount
      mentionCount
    }
  }
`);

export const Conversations = graphql(`
  query WebConversations {
    conversations(first: 50) {
      edges {
        node {
          id
          unreadCount
          partner {
            login
            displayName
          }
          lastMessage {
            id
            content
          }
        }
      }
    }
  }
`);

export const ConversationMessages = graphql(`
  query WebConversation($with: String!) {
    conversation(with: $with) {
      id
      partnerReadUpTo
      messages(first: 50) {
        edges {
          node {
            id
            content
            createdAt
            from {
              login
            }
          }
        }
      }
    }
  }
`);

export const SendDirectMessage = graphql(`
  mutation WebSendDirectMessage($to: String!, $content: String!) {
    sendDirectMessage(to: $to, content: $content) {
      id
    }
  }
`);

export const MarkConversationRead = graphql(`
  mutation WebMarkConversationRead($with: String!) {
    markConversationRead(with: $with) {
      id
      unreadCount
    }
  }
`);

export const InboxEvents = graphql(`
  subscription WebInboxEvents {
    inboxEvents {
      __typename
    }
  }
`);
