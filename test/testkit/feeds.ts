/**
 * Live feeds as a client opens them: a graphql-ws subscription that is known
 * to be live (the instance holds a listener for its channel) before the test
 * goes on, so no event is published before anyone listens. Every feed opened
 * here is closed after its test file, so a test never has to keep a list.
 */
import { afterAll } from 'vitest';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { App } from '../../src/app.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';
import { inboxChannel } from '../../src/resolvers/messenger/events.js';
import { presenceChannel } from '../../src/resolvers/rooms/live/presence.js';
import { eventually } from './poll.js';
import { subscribe, wsClient, type Subscription, type WsClient } from './ws.js';

export interface Feed<T> extends Subscription<T> {
  client: WsClient;
  /** The next event's data; fails on an error or after the deadline. */
  data(timeoutMs?: number): Promise<T>;
}

const open = new Set<WsClient>();

afterAll(async () => {
  await Promise.all([...open].map((client) => Promise.resolve(client.dispose()).catch(() => undefined)));
  open.clear();
});

async function liveOn<T, V>(app: App, token: string, channel: string, document: TypedDocumentNode<T, V>, variables: V): Promise<Feed<T>> {
  const client = wsClient(app, token);
  open.add(client);
  const before = app.services.pubsub.listeners(channel);
  const sub = subscribe(client, document, variables);
  await eventually(() => app.services.pubsub.listeners(channel) > before || sub.pending() > 0, { what: `a live feed on ${channel}` });
  return {
    ...sub,
    client,
    async data(timeoutMs) {
      const result = await sub.next(timeoutMs);
      if (result.errors?.length || !result.data) throw new Error(`feed failed: ${JSON.stringify(result.errors)}`);
      return result.data;
    },
  };
}

/** A room's events for `token`'s user on `app`, live when this resolves. */
export function roomFeed<T, V extends { roomName: string }>(app: App, token: string, document: TypedDocumentNode<T, V>, variables: V) {
  return liveOn(app, token, roomChannel(variables.roomName), document, variables);
}

/** A user's inbox feed (direct messages, receipts, mentions) on `app`, live when this resolves. */
export function inboxFeed<T>(app: App, user: { login: string; token: string }, document: TypedDocumentNode<T, Record<string, never>>) {
  return liveOn(app, user.token, inboxChannel(user.login), document, {} as Record<string, never>);
}

/** A room's presence feed (roomPresence) for `token`'s user on `app`, live when this resolves. */
export function presenceFeed<T, V extends { roomName: string }>(app: App, token: string, document: TypedDocumentNode<T, V>, variables: V) {
  return liveOn(app, token, presenceChannel(variables.roomName), document, variables);
}
