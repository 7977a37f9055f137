/**
 * What a Relay app would write: fragments marked @refetchable, which
 * relay-compiler turns into refetch queries through Query.node, and the
 * queries that first read them. relay.test.ts runs the compiler over this file
 * (its artifacts are in __generated__/) and the artifacts against a real app.
 * The tags are never called: only the compiler reads them.
 */
import { graphql } from 'relay-runtime';

export const message = graphql`
  fragment documentsMessage on Message @refetchable(queryName: "documentsMessageRefetchQuery") {
    id
    content
    version
    author {
      login
    }
  }
`;

export const room = graphql`
  fragment documentsRoom on Room @refetchable(queryName: "documentsRoomRefetchQuery") {
    id
    name
    participantCount
  }
`;

export const messageQuery = graphql`
  query documentsMessageQuery($messageId: ID!) {
    message(messageId: $messageId) {
      ...documentsMessage
    }
  }
`;

export const roomQuery = graphql`
  query documentsRoomQuery($roomName: String!) {
    room(roomName: $roomName) {
      ...documentsRoom
    }
  }
`;

export const nodesQuery = graphql`
  query documentsNodesQuery($ids: [ID!]!) {
    nodes(ids: $ids) {
      __typename
      id
      ... on User {
        login
      }
      ... on Item {
        name
      }
      ... on Purchase {
        quantity
      }
      ... on Conversation {
        partner {
          login
        }
      }
      ... on DirectMessage {
        content
      }
    }
  }
`;
