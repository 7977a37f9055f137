/**
 * The request scenarios of issue 12 and the data they run on. Each scenario is
 * one GraphQL document with its variables and token; the floor answers the
 * same variables at POST /<name> (bench/kit/servers/floor-server.ts), selecting the same
 * fields. Seeded once per run: hundreds of users, a room with thousands of
 * messages over several days, an inbox of 50 partners, a user in 20 rooms.
 */
import type { RoomIncarnation } from '../../../src/db/rooms/messages/room-messages.js';
import { chatUser } from '../../../src/resolvers/rooms/model.js';
import { seedHistory, spreadOverDays } from '../../../test/testkit/data/seed-history.js';
import { roomWith } from '../../../test/testkit/data/rooms.js';
import { send } from '../../../test/testkit/data/messenger.js';
import { signUp, signUpMany, type TestUser } from '../../../test/testkit/data/users.js';
import { benchApp, DEFAULT_SCRYPT_COST } from '../harness.js';
import { remoteApp } from '../remote-parley.js';

export interface RequestScenario {
  /** The floor's route, and the name a profile run takes. */
  name: string;
  /** What the result table calls it. */
  title: string;
  query: string;
  variables: Record<string, string>;
  token: string;
}

const USERS = 200;
const HISTORY_MESSAGES = 3_000;
const HISTORY_DAYS = 5;
const INBOX_PARTNERS = 50;
const ROOMS_OF_VIEWER = 20;

const DOCUMENTS = {
  history: 'query Page($roomName: String!) { room(roomName: $roomName) { messages(first: 50) { edges { node { id content author { login } } } } } }',
  postMessage: 'mutation Post($roomName: String!, $content: String!) { postMessage(roomName: $roomName, content: $content) { id content } }',
  conversations: 'query Inbox { conversations(first: 50) { edges { node { partner { login } unreadCount } } } }',
  meRooms: 'query MyRooms { me { login chatRooms { name participantCount } } }',
  sendDirectMessage: 'mutation Send($to: String!, $content: String!) { sendDirectMessage(to: $to, content: $content) { id content } }',
  login: 'mutation Login($login: String!, $password: String!) { login(login: $login, password: $password) { token } }',
};

/**
 * Seeds through `url` (a Parley server of the bench's keyspace) and, for what
 * the API would make slow or cannot do, an app in this process on the same
 * keyspace: history rows straight through the message store, and a user whose
 * password is hashed at the default (production) scrypt cost for the login
 * scenario (the contenders run with the bench's cheap cost for sign-ups).
 */
export async function seedRequestScenarios(url: string): Promise<Record<string, RequestScenario>> {
  const app = remoteApp(url);
  const people = await signUpMany(app, USERS, 'bench');
  const viewer = people[0]!;

  const historyRoom = await roomWith(app, viewer, people.slice(1, 50));
  const postRoom = await roomWith(app, viewer, people.slice(1, 10));
  for (let i = 2; i < ROOMS_OF_VIEWER; i++) await roomWith(app, viewer, people.slice(i, i + 5));
  const partners = people.slice(USERS - INBOX_PARTNERS);
  for (const partner of partners) await send(app, partner, viewer, `hello from ${partner.login}`);

  const local = await benchApp({ env: DEFAULT_SCRYPT_COST });
  let loginUser: TestUser;
  try {
    const room = (await local.services.stores.rooms.byName(historyRoom)) as RoomIncarnation;
    const start = new Date(Date.now() - HISTORY_DAYS * 86_400_000);
    const authors = people.slice(0, 10);
    const perAuthor = HISTORY_MESSAGES / authors.length;
    for (const [i, author] of authors.entries()) {
      // Each author's messages offset by a second, so no two authors share an instant.
      const times = spreadOverDays(new Date(start.getTime() + i * 1000), HISTORY_DAYS, perAuthor);
      await seedHistory(local, room, chatUser(author), times);
    }
    loginUser = await signUp(local);
  } finally {
    await local.stop();
  }

  const scenario = (name: keyof typeof DOCUMENTS, title: string, variables: Record<string, string>, token = viewer.token): RequestScenario => ({
    name,
    title,
    query: DOCUMENTS[name],
    variables,
    token,
  });
  return {
    history: scenario('history', `history page of 50 with authors (room of ${HISTORY_MESSAGES} messages over ${HISTORY_DAYS} days)`, { roomName: historyRoom }),
    postMessage: scenario('postMessage', 'postMessage (room of 10)', { roomName: postRoom, content: 'a bench message' }),
    conversations: scenario('conversations', `conversations(first: 50) with partner and unreadCount (inbox of ${INBOX_PARTNERS})`, {}),
    meRooms: scenario('meRooms', `me with chatRooms (${ROOMS_OF_VIEWER} rooms)`, {}),
    sendDirectMessage: scenario('sendDirectMessage', 'sendDirectMessage', { to: partners[0]!.login, content: 'a bench message' }),
    login: scenario('login', 'login at the default scrypt cost', { login: loginUser.login, password: loginUser.password }, ''),
  };
}
