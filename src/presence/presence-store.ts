/**
 * Who is online in a room, across instances: each instance keeps one entry
 * per room and user it has a live roomEvents subscription for, with an expiry
 * it pushes forward on every heartbeat. A user is online while any instance's
 * entry for them is unexpired, so an instance that dies without a word takes
 * its users offline within one expiry (the first sweep after it). Each call
 * answers whether it changed the user's presence anywhere, decided atomically
 * (one Lua script in Redis), so exactly one instance announces each change.
 */
import type { Cluster, Redis } from 'ioredis';

export interface PresenceStore {
  /** Adds or refreshes this instance's entry; true when no other live entry of the user existed (they came online). */
  enter(room: string, login: string, now: number, expiresAt: number): Promise<boolean>;
  /** Removes this instance's entry; true when it was there and no other live entry remains (they went offline). */
  exit(room: string, login: string, now: number): Promise<boolean>;
  /** Pushes this instance's entries' expiry forward. */
  refresh(entries: Array<{ room: string; login: string }>, now: number, expiresAt: number): Promise<void>;
  /** Removes the room's expired entries (any instance's); returns the users that left no live entry behind. */
  sweep(room: string, now: number): Promise<string[]>;
  /** The users with a live entry in the room. */
  online(room: string, now: number): Promise<string[]>;
  /** When each user was last seen online (their latest heartbeat or exit). */
  lastSeen(logins: readonly string[]): Promise<Map<string, Date>>;
}

const SEP = '\u0000';
const loginOf = (member: string) => member.slice(0, member.indexOf(SEP));

/** One instance's entries in memory: for a single instance without Redis. */
export class MemoryPresence implements PresenceStore {
  private readonly rooms = new Map<string, Map<string, number>>();
  private readonly seen = new Map<string, number>();

  async enter(room: string, login: string, now: number, expiresAt: number): Promise<boolean> {
    const entries = this.rooms.get(room) ?? new Map<string, number>();
    this.rooms.set(room, entries);
    const wasOnline = (entries.get(login) ?? 0) > now;
    entries.set(login, expiresAt);
    this.seen.set(login, now);
    return !wasOnline;
  }

  async exit(room: string, login: string, now: number): Promise<boolean> {
    const entries = this.rooms.get(room);
    const had = entries?.delete(login) ?? false;
    this.seen.set(login, now);
    if (entries?.size === 0) this.rooms.delete(room);
    return had;
  }

  async refresh(list: Array<{ room: string; login: string }>, now: number, expiresAt: number): Promise<void> {
    for (const { room, login } of list) {
      this.rooms.get(room)?.set(login, expiresAt);
      this.seen.set(login, now);
    }
  }

  async sweep(room: string, now: number): Promise<string[]> {
    const entries = this.rooms.get(room);
    const gone = [...(entries ?? [])].filter(([, at]) => at <= now).map(([login]) => login);
    for (const login of gone) entries!.delete(login);
    return gone;
  }

  async online(room: string, now: number): Promise<string[]> {
    return [...(this.rooms.get(room) ?? [])].filter(([, at]) => at > now).map(([login]) => login);
  }

  async lastSeen(logins: readonly string[]): Promise<Map<string, Date>> {
    return new Map(logins.flatMap((l) => (this.seen.has(l) ? [[l, new Date(this.seen.get(l)!)] as const] : [])));
  }
}

// Each script touches one key, the room's sorted set (member login\0instance, score: expiry ms), so that on a Redis
// Cluster it runs on the room's shard; the last-seen hash is written beside it, as its own command.
// ARGV: now, expiresAt, member, login. Returns 1 when no other live entry of the login existed.
const ENTER = `
local prefix = ARGV[4] .. '\\0'
local others = 0
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')) do
  if m ~= ARGV[3] and string.sub(m, 1, #prefix) == prefix then others = others + 1 end
end
local mine = redis.call('ZSCORE', KEYS[1], ARGV[3])
local wasLive = mine and tonumber(mine) > tonumber(ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) - tonumber(ARGV[1]) + 60000)
if others == 0 and not wasLive then return 1 end
return 0`;

// ARGV: now, member, login. Returns 1 when the entry was there and no other live entry of the login remains.
const EXIT = `
local removed = redis.call('ZREM', KEYS[1], ARGV[2])
if removed == 0 then return 0 end
local prefix = ARGV[3] .. '\\0'
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')) do
  if string.sub(m, 1, #prefix) == prefix then return 0 end
end
return 1`;

// ARGV: now. Removes expired entries; returns the logins left without a live entry.
const SWEEP = `
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if #expired == 0 then return {} end
local live = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')) do
  live[string.sub(m, 1, string.find(m, '\\0', 1, true) - 1)] = true
end
local gone, seen = {}, {}
for _, m in ipairs(expired) do
  if redis.call('ZREM', KEYS[1], m) == 1 then
    local login = string.sub(m, 1, string.find(m, '\\0', 1, true) - 1)
    if not live[login] and not seen[login] then
      seen[login] = true
      table.insert(gone, login)
    end
  end
end
return gone`;

/** Entries in Redis, shared by every instance; `instance` tells this one's entries apart. */
export class RedisPresence implements PresenceStore {
  private readonly seenKey: string;

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix: string,
    private readonly instance: string,
  ) {
    this.seenKey = `${prefix}presence-seen`;
  }

  private roomKey = (room: string) => `${this.prefix}presence:${room}`;
  private member = (login: string) => `${login}${SEP}${this.instance}`;

  async enter(room: string, login: string, now: number, expiresAt: number): Promise<boolean> {
    this.noteSeen(login, now);
    return (await this.redis.eval(ENTER, 1, this.roomKey(room), now, expiresAt, this.member(login), login)) === 1;
  }

  async exit(room: string, login: string, now: number): Promise<boolean> {
    this.noteSeen(login, now);
    return (await this.redis.eval(EXIT, 1, this.roomKey(room), now, this.member(login), login)) === 1;
  }

  async refresh(list: Array<{ room: string; login: string }>, now: number, expiresAt: number): Promise<void> {
    if (list.length === 0) return;
    // Sent together, not as one pipeline (on a Redis Cluster the keys live on different shards); as a pipeline's
    // would, a failed command fails only itself.
    await Promise.allSettled(
      list.flatMap(({ room, login }) => [
        this.redis.zadd(this.roomKey(room), expiresAt, this.member(login)),
        this.redis.pexpire(this.roomKey(room), expiresAt - now + 60_000),
        this.redis.hset(this.seenKey, login, now),
      ]),
    );
  }

  /** Last seen: beside the presence entry, not part of it; a failed write loses one timestamp, never an announcement. */
  private noteSeen(login: string, now: number): void {
    void this.redis.hset(this.seenKey, login, now).catch(() => undefined);
  }

  async sweep(room: string, now: number): Promise<string[]> {
    return (await this.redis.eval(SWEEP, 1, this.roomKey(room), now)) as string[];
  }

  async online(room: string, now: number): Promise<string[]> {
    const members = await this.redis.zrangebyscore(this.roomKey(room), `(${now}`, '+inf');
    return [...new Set(members.map(loginOf))];
  }

  async lastSeen(logins: readonly string[]): Promise<Map<string, Date>> {
    if (logins.length === 0) return new Map();
    const values = await this.redis.hmget(this.seenKey, ...logins);
    return new Map(logins.flatMap((l, i) => (values[i] ? [[l, new Date(Number(values[i]))] as const] : [])));
  }
}
