/**
 * Presence: who is online in a room, derived from the open roomEvents
 * subscriptions of every instance (src/presence/presence-store.ts keeps the
 * entries, in Redis when it is configured). This instance counts its own
 * subscriptions per room and user, enters the user on the first and exits on
 * the last; a heartbeat pushes its entries' expiry forward and sweeps the
 * expired entries of the rooms it follows (by a roomEvents feed or a
 * roomPresence feed open here), so the users of an instance that died
 * without a word go offline within one expiry plus one heartbeat, and every
 * follower hears of it.
 * Each change is published, on the room's presence channel, by the one
 * instance whose call made it. That instance also stores, when a user goes
 * offline, when they were last seen (users.last_seen_at): presence's own
 * record of it is in Redis, which may lose it.
 */
import type { Logger } from 'pino';
import type { PresenceStore } from '../../../presence/presence-store.js';
import type { Clock } from '../../../clock.js';
import type { Stores } from '../../../db/stores.js';

import type { PubSub } from '../../../pubsub/pubsub.js';
import type { ChatUser } from '../../../db/rooms/chat-user.js';

/** Presence has a channel of its own per room: a busy room's chat feed does not carry everyone's comings and goings. */
export const presenceChannel = (roomName: string) => `room-presence.${roomName}`;

/** What travels on a room's presence channel. */
export interface PresenceChange {
  roomName: string;
  user: ChatUser;
  online: boolean;
}

interface Local {
  room: string;
  person: ChatUser;
  subscriptions: number;
}

export class RoomPresence {
  private readonly local = new Map<string, Local>();
  /** Rooms whose roomPresence feeds are open here, and how many: this instance sweeps them too. */
  private readonly followed = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: PresenceStore,
    private readonly deps: { pubsub: PubSub; clock: Clock; logger: Logger; stores: Stores },
    /** How long an entry lives without a heartbeat; heartbeats come three times as often. */
    readonly ttlMs: number,
  ) {}

  /** A roomEvents subscription of `person` started on this instance. */
  async entered(room: string, person: ChatUser): Promise<void> {
    const key = `${room}\u0000${person.login}`;
    const entry = this.local.get(key);
    if (entry) {
      entry.subscriptions += 1;
      return;
    }
    this.local.set(key, { room, person, subscriptions: 1 });
    const now = this.deps.clock.now().getTime();
    if (await this.store.enter(room, person.login, now, now + this.ttlMs)) await this.announce(room, person, true);
  }

  /** That subscription ended (the client left, the socket closed, the feed ended). */
  async exited(room: string, person: ChatUser): Promise<void> {
    const key = `${room}\u0000${person.login}`;
    const entry = this.local.get(key);
    if (!entry || --entry.subscriptions > 0) return;
    this.local.delete(key);
    const now = this.deps.clock.now().getTime();
    if (!(await this.store.exit(room, person.login, now))) return;
    // Stored even when the announcement fails (Redis down): that is when Redis's own record is at risk.
    try {
      await this.announce(room, person, false);
    } finally {
      await this.rememberLastSeen(person.login, now);
    }
  }

  /**
   * A roomPresence feed of `room` opened here. While any is open this instance sweeps the room, so that its
   * followers hear of users going offline with a dead instance even when no roomEvents feed of it is open here.
   * Returns the release (once is enough; more calls do nothing).
   */
  follow(room: string): () => void {
    this.followed.set(room, (this.followed.get(room) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.followed.get(room) ?? 1) - 1;
      if (left > 0) this.followed.set(room, left);
      else this.followed.delete(room);
    };
  }

  online(room: string): Promise<string[]> {
    return this.store.online(room, this.deps.clock.now().getTime());
  }

  lastSeen(login: string): Promise<Date | null> {
    return this.store.lastSeen([login]).then((seen) => seen.get(login) ?? null);
  }

  start(): void {
    const beat = () => {
      this.beating = this.heartbeat().catch((err) => this.deps.logger.warn({ err }, 'presence heartbeat failed'));
    };
    this.timer = setInterval(beat, Math.max(100, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
  }

  /** Refreshes this instance's entries, then sweeps the expired ones of every room it follows (either way). */
  private async heartbeat(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    const entries = [...this.local.values()];
    await this.store.refresh(entries.map((e) => ({ room: e.room, login: e.person.login })), now, now + this.ttlMs);
    for (const room of new Set([...entries.map((e) => e.room), ...this.followed.keys()])) {
      const gone = await this.store.sweep(room, now);
      if (gone.length === 0) continue;
      const participants = (await this.deps.stores.rooms.byName(room))?.participants ?? [];
      const seen = await this.store.lastSeen(gone);
      for (const login of gone) {
        const person = participants.find((p) => p.login === login) ?? { login, firstname: '', lastname: '' };
        // Swept from Redis already: a failed announcement is logged, and the others are still announced and stored.
        await this.announce(room, person, false).catch((err) => this.deps.logger.warn({ err, room, login }, 'offline not announced'));
        // Their last heartbeat, from the server that stopped answering.
        await this.rememberLastSeen(login, seen.get(login)?.getTime() ?? now);
      }
    }
  }

  /** A failure is logged and costs only this sighting: the next one, or Redis's own record, still tells. */
  private async rememberLastSeen(login: string, at: number): Promise<void> {
    try {
      await this.deps.stores.users.recordLastSeen(login, new Date(at));
    } catch (err) {
      this.deps.logger.warn({ err, login }, 'could not store when a user was last seen');
    }
  }

  private async announce(room: string, person: ChatUser, online: boolean): Promise<void> {
    const change: PresenceChange = { roomName: room, user: person, online };
    await this.deps.pubsub.publish(presenceChannel(room), change);
  }
}
