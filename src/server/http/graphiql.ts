/**
 * GraphiQL, served by the server itself (no CDN), opening on a document that
 * walks a newcomer through the whole flow: sign up, set the header, query,
 * subscribe. Subscriptions run over graphql-ws; GraphiQL sends the Headers
 * editor's headers with each operation as `extensions.headers`, and the
 * WebSocket bridge authenticates the operation from them (src/server/live/websocket.ts).
 */
import type { GraphiQLOptions } from 'graphql-yoga';

export const GRAPHIQL_DEFAULT_DOCUMENT = `# Welcome to Parley.
#
# 1. Run "Register" (or "Login" if you have an account) and copy the token it returns.
# 2. Open the Headers tab below and paste:
#      { "Authorization": "Bearer <the token>" }
# 3. Run "Me", then "CreateRoom".
# 4. Run "RoomFeed": it stays open and shows the room's events live.
# 5. In a second tab (the + above), run "Post" and watch the event arrive in the first.

mutation Register {
  register(input: { login: "ada", password: "correct horse battery", email: "ada@example.com", firstname: "Ada", lastname: "Lovelace" }) {
    token
  }
}

mutation Login {
  login(login: "ada", password: "correct horse battery") {
    token
  }
}

query Me {
  me {
    login
    chatRooms { name }
  }
}

mutation CreateRoom {
  createRoom(input: { name: "lobby", banner: "Say hello" }) { name }
}

subscription RoomFeed {
  roomEvents(roomName: "lobby") {
    __typename
    ... on MessagePosted { message { author { login } content createdAt } }
  }
}

mutation Post {
  postMessage(roomName: "lobby", content: "Hello from GraphiQL") { id content }
}
`;

export function graphiqlOptions(): GraphiQLOptions {
  return { title: 'Parley', subscriptionsProtocol: 'WS', defaultQuery: GRAPHIQL_DEFAULT_DOCUMENT };
}
