/**
 * Storage of rooms' audit logs (room_audit_log, cql/029_room_audit_log.cql): appended by INSERT only, one partition per
 * room incarnation and UTC month, read newest first a month at a time.
 */
import { cql, type Database, type Row } from '../cassandra/client.js';
import { monthBucket, previousMonth } from '../../buckets.js';
import { timeUuidDate } from '../../timeuuids.js';

export interface AuditEntryRecord {
  roomName: string;
  roomCreatedAt: Date;
  /** A timeuuid made for the entry: its time is when it happened. */
  entryId: string;
  action: string;
  actorLogin: string;
  /** Whom it was done to, when anyone. */
  targetLogin: string | null;
  reason: string | null;
  /** What changed, as the action's own short text (a role, a visibility, a duration). */
  details: string | null;
}

const COLUMNS = 'room_name, room_created_at, entry_id, action, actor_login, target_login, reason, details';
const INSERT = cql(`INSERT INTO room_audit_log (month, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, { idempotent: true });
const PAGE = cql(`SELECT ${COLUMNS} FROM room_audit_log WHERE room_name = ? AND room_created_at = ? AND month = ? LIMIT ?`, { idempotent: true });
const PAGE_BEFORE = cql(`SELECT ${COLUMNS} FROM room_audit_log WHERE room_name = ? AND room_created_at = ? AND month = ? AND entry_id < ? LIMIT ?`, {
  idempotent: true,
});

/**
 * The month the audit log began (cql/029): no entry is older, so a walk back stops here, not at the creation of a
 * room years old (one read per month walked).
 */
const FIRST_MONTH = 202611;

const toEntry = (row: Row): AuditEntryRecord => ({
  roomName: row.room_name,
  roomCreatedAt: row.room_created_at,
  entryId: row.entry_id.toString(),
  action: row.action,
  actorLogin: row.actor_login,
  targetLogin: row.target_login ?? null,
  reason: row.reason ?? null,
  details: row.details ?? null,
});

export class AuditLogStore {
  constructor(private readonly db: Database) {}

  /** Appends the entry (written again with the same id, it is the same entry). */
  async append(entry: AuditEntryRecord): Promise<void> {
    const { roomName, roomCreatedAt, entryId, action, actorLogin, targetLogin, reason, details } = entry;
    await this.db.execute(INSERT, [monthBucket(timeUuidDate(entryId)), roomName, roomCreatedAt, entryId, action, actorLogin, targetLogin, reason, details]);
  }

  /**
   * Up to `limit` entries of the room made at `createdAt`, newest first, older than the entry `before` (from `now`
   * without it), walking back month by month to the room's creation (or the log's first month).
   */
  async page(roomName: string, createdAt: Date, before: string | null, now: Date, limit: number): Promise<AuditEntryRecord[]> {
    const out: AuditEntryRecord[] = [];
    const first = Math.max(monthBucket(createdAt), FIRST_MONTH);
    for (let month = monthBucket(before ? timeUuidDate(before) : now); month >= first && out.length < limit; month = previousMonth(month)) {
      const inCursorMonth = before !== null && month === monthBucket(timeUuidDate(before));
      const rows = inCursorMonth
        ? await this.db.execute(PAGE_BEFORE, [roomName, createdAt, month, before, limit - out.length])
        : await this.db.execute(PAGE, [roomName, createdAt, month, limit - out.length]);
      out.push(...rows.rows.map(toEntry));
    }
    return out;
  }
}
