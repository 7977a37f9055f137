/**
 * Storage of invite links (room_invite_links, cql/024_invite_links.cql): one row per token, gone with its expiry (a
 * TTL). Each use is counted exactly by an LWT that asks the count to be the one read and records who used it in the
 * same write, so racing redeemers never take more uses than the link has, and a redeemer's retry finds its use.
 * This instance's uses of one link run one at a time (OneAtATime), so they do not contend with each other in Paxos;
 * a use that loses to another instance's pauses at random (contention.ts) before it reads again.
 */
import { cql, mapOf, type Database, type Row } from '../cassandra/client.js';
import { OneAtATime } from '../cassandra/one-at-a-time.js';
import { CONTENDED_ATTEMPTS, pauseAfterLosing } from '../cassandra/contention.js';

export interface InviteLinkRecord {
  token: string;
  roomName: string;
  /** The room it lets into, not a room of the same name made since. */
  roomCreatedAt: Date;
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  maxUses: number;
  /** Logins that used it, and when. */
  usedBy: Map<string, Date>;
}

const COLUMNS = 'link_token, room_name, room_created_at, created_by, created_at, expires_at, max_uses, used_by';
const INSERT = cql(`INSERT INTO room_invite_links (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, {}) USING TTL ?`, { idempotent: true });
const SELECT = cql(`SELECT ${COLUMNS}, uses FROM room_invite_links WHERE link_token = ?`, { idempotent: true });
// The TTL keeps the row's cells expiring with the link: a use written later must not outlive it.
const USE = cql('UPDATE room_invite_links USING TTL ? SET uses = ?, used_by[?] = ? WHERE link_token = ? IF uses = ?', { idempotent: false });
const DELETE = cql('DELETE FROM room_invite_links WHERE link_token = ? IF room_name = ?', { idempotent: false });

const toLink = (row: Row): InviteLinkRecord => ({
  token: row.link_token,
  roomName: row.room_name,
  roomCreatedAt: row.room_created_at,
  createdBy: row.created_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  maxUses: row.max_uses,
  usedBy: mapOf<Date>(row.used_by),
});

/** How many uses the row counts (null before the first: the column is written by uses only). */
const usesOf = (row: Row | undefined): number => (row?.uses as number | null) ?? 0;

export type UseOutcome = { status: 'used' | 'usedBefore'; link: InviteLinkRecord } | { status: 'usedUp' | 'gone' | 'contended' };

export class InviteLinkStore {
  private readonly uses = new OneAtATime();

  constructor(private readonly db: Database) {}

  async create(link: Omit<InviteLinkRecord, 'usedBy'>): Promise<void> {
    const ttl = Math.max(1, Math.ceil((link.expiresAt.getTime() - Date.now()) / 1000));
    const { token, roomName, roomCreatedAt, createdBy, createdAt, expiresAt, maxUses } = link;
    await this.db.execute(INSERT, [token, roomName, roomCreatedAt, createdBy, createdAt, expiresAt, maxUses, ttl]);
  }

  async byToken(token: string): Promise<InviteLinkRecord | undefined> {
    const row = await this.db.first(SELECT, [token]);
    return row ? toLink(row) : undefined;
  }

  /**
   * Counts a use of the link by `login` at `at`, while it has uses left: 'used'. 'usedBefore' when `login` used it
   * less than `retryWithinMs` before (a retry of a redeem whose answer was lost; an older use of theirs, say before
   * they were removed, counts for nothing now), 'usedUp' when none is left, 'gone' when there is no such link
   * (expired, revoked), 'contended' when other instances' uses came first CONTENDED_ATTEMPTS times (none taken).
   */
  use(token: string, login: string, at: Date, retryWithinMs: number): Promise<UseOutcome> {
    return this.uses.run(token, async () => {
      let row = await this.db.readSerial(SELECT, [token]);
      for (let lost = 0; ; ) {
        if (!row) return { status: 'gone' };
        const link = toLink(row);
        const before = link.usedBy.get(login);
        if (before && at.getTime() - before.getTime() < retryWithinMs) return { status: 'usedBefore', link };
        const count = usesOf(row);
        if (count >= link.maxUses) return { status: 'usedUp' };
        const ttl = Math.max(1, Math.ceil((link.expiresAt.getTime() - Date.now()) / 1000));
        const expected = (row.uses as number | null) ?? null;
        const outcome = await this.db.lwt(USE, [ttl, count + 1, login, at, token, expected], async () => {
          const now = await this.db.readSerial(SELECT, [token]);
          const applied = Boolean(now && toLink(now).usedBy.get(login)?.getTime() === at.getTime());
          // The count only grows: once another use moved it (or the link went), this attempt can never apply.
          return { applied, row: now, settled: !applied && (!now || ((now.uses as number | null) ?? null) !== expected) };
        });
        if (outcome.applied) return { status: 'used', link: { ...link, usedBy: new Map([...link.usedBy, [login, at]]) } };
        // Another use came first (on another instance: this one's run one at a time). A random pause keeps the two
        // from meeting again in Paxos, then go on from the row as it is now; past CONTENDED_ATTEMPTS, give up.
        if (++lost >= CONTENDED_ATTEMPTS) return { status: 'contended' };
        await pauseAfterLosing(lost);
        row = await this.db.readSerial(SELECT, [token]);
      }
    });
  }

  /** Deletes the link to the room; false when there was none. */
  async delete(token: string, roomName: string): Promise<boolean> {
    const outcome = await this.db.lwt(DELETE, [token, roomName], async () => {
      const row = await this.db.readSerial(SELECT, [token]);
      return { applied: !row, row: row! };
    });
    return outcome.applied;
  }
}
