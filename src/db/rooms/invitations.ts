/**
 * Storage of room invitations (room_invitations, cql/023_room_visibility.cql): one row per invitee and room, read as
 * the invitee's list in one partition. Every change is an LWT on the row's status, so that of an accept, a revoke and
 * a decline racing each other exactly one applies: an accept claims the row (PENDING to ACCEPTED) before it joins,
 * and a revoke or a decline deletes it only while it is PENDING.
 */
import { cql, type Database, type Row } from '../cassandra/client.js';

export interface InvitationRecord {
  inviteeLogin: string;
  roomName: string;
  /** The room invited to, not a room of the same name made since. */
  roomCreatedAt: Date;
  inviterLogin: string;
  createdAt: Date;
  status: 'PENDING' | 'ACCEPTED';
}

const COLUMNS = 'invitee_login, room_name, room_created_at, inviter_login, created_at, status';
const KEY = 'WHERE invitee_login = ? AND room_name = ?';

const INSERT = cql(`INSERT INTO room_invitations (${COLUMNS}) VALUES (?, ?, ?, ?, ?, 'PENDING') IF NOT EXISTS`, { idempotent: false });
// A row left by an earlier invitation (accepted, or to an earlier room of that name) is made this one.
const RENEW = cql(
  `UPDATE room_invitations SET room_created_at = ?, inviter_login = ?, created_at = ?, status = 'PENDING' ${KEY} IF status = ? AND room_created_at = ?`,
  { idempotent: false },
);
const CLAIM = cql(`UPDATE room_invitations SET status = 'ACCEPTED' ${KEY} IF status = 'PENDING' AND room_created_at = ?`, { idempotent: false });
const UNCLAIM = cql(`UPDATE room_invitations SET status = 'PENDING' ${KEY} IF status = 'ACCEPTED'`, { idempotent: false });
const DELETE_IF_STATUS = cql(`DELETE FROM room_invitations ${KEY} IF status = ?`, { idempotent: false });
const DROP = cql(`DELETE FROM room_invitations ${KEY}`, { idempotent: true });
const SELECT_ONE = cql(`SELECT ${COLUMNS} FROM room_invitations ${KEY}`, { idempotent: true });
const SELECT_FOR = cql(`SELECT ${COLUMNS} FROM room_invitations WHERE invitee_login = ? LIMIT ?`, { idempotent: true });

const toInvitation = (row: Row): InvitationRecord => ({
  inviteeLogin: row.invitee_login,
  roomName: row.room_name,
  roomCreatedAt: row.room_created_at,
  inviterLogin: row.inviter_login,
  createdAt: row.created_at,
  status: row.status === 'ACCEPTED' ? 'ACCEPTED' : 'PENDING',
});

const sameTime = (a: Date | null | undefined, b: Date | null | undefined) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

export class InvitationStore {
  constructor(private readonly db: Database) {}

  /** The row, read at SERIAL (an LWT in flight on it finishes first). */
  async one(inviteeLogin: string, roomName: string): Promise<InvitationRecord | undefined> {
    const row = await this.db.readSerial(SELECT_ONE, [inviteeLogin, roomName]);
    return row ? toInvitation(row) : undefined;
  }

  /** Up to `limit` of the invitee's rows, pending or being accepted, by room name. */
  async of(inviteeLogin: string, limit: number): Promise<InvitationRecord[]> {
    return (await this.db.execute(SELECT_FOR, [inviteeLogin, limit])).rows.map(toInvitation);
  }

  /**
   * Records `invitation` as pending. Answers the invitation now stored: this one, or one already pending to the
   * same room (inviting twice changes nothing). A row left by an earlier invitation is renewed, by an LWT asking
   * it to be the row read, so a racing accept or revoke of it keeps its outcome.
   */
  async invite(invitation: Omit<InvitationRecord, 'status'>): Promise<InvitationRecord> {
    const { inviteeLogin, roomName, roomCreatedAt, inviterLogin, createdAt } = invitation;
    const pending: InvitationRecord = { ...invitation, status: 'PENDING' };
    const ours = (row: Row | undefined) => row?.status === 'PENDING' && row.inviter_login === inviterLogin && sameTime(row.created_at, createdAt);
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await this.db.lwt(INSERT, [inviteeLogin, roomName, roomCreatedAt, inviterLogin, createdAt], async () => {
        const row = await this.db.readSerial(SELECT_ONE, [inviteeLogin, roomName]);
        return { applied: ours(row), row: row! };
      });
      if (inserted.applied) return pending;
      const found = inserted.row?.status ? toInvitation(inserted.row) : undefined;
      if (!found) continue; // deleted meanwhile: insert again
      if (found.status === 'PENDING' && sameTime(found.roomCreatedAt, roomCreatedAt)) return found;
      const renewed = await this.db.lwt(
        RENEW,
        [roomCreatedAt, inviterLogin, createdAt, inviteeLogin, roomName, found.status, found.roomCreatedAt],
        async () => {
          const row = await this.db.readSerial(SELECT_ONE, [inviteeLogin, roomName]);
          return { applied: ours(row), row: row! };
        },
      );
      if (renewed.applied) return pending;
    }
    const now = await this.one(inviteeLogin, roomName);
    if (now?.status === 'PENDING' && sameTime(now.roomCreatedAt, roomCreatedAt)) return now;
    throw new Error(`the invitation of ${inviteeLogin} to ${roomName} kept changing while it was recorded`);
  }

  /**
   * Claims the pending invitation to the room made at `roomCreatedAt` for its acceptance. True when the invitation is
   * held for it: by this claim, or by an earlier run of this acceptance (the LWT's own answer says so, with no
   * read after it). False when there is none, or only one to another room of that name.
   */
  async claim(inviteeLogin: string, roomName: string, roomCreatedAt: Date): Promise<boolean> {
    const held = (row: Row | undefined) => row?.status === 'ACCEPTED' && sameTime(row.room_created_at, roomCreatedAt);
    const outcome = await this.db.lwt(CLAIM, [inviteeLogin, roomName, roomCreatedAt], async () => {
      const row = await this.db.readSerial(SELECT_ONE, [inviteeLogin, roomName]);
      return { applied: held(row), row: row! };
    });
    return outcome.applied || held(outcome.row);
  }

  /**
   * Drops the row, whatever its status: for someone who takes part and is leaving or being removed. A row they hold
   * then is a stale one (an accepted invitation whose delete failed after its join, or one sent while they joined),
   * and must not let them back in once they are out.
   */
  async drop(inviteeLogin: string, roomName: string): Promise<void> {
    await this.db.execute(DROP, [inviteeLogin, roomName]);
  }

  /** Gives a claimed invitation back (the join it was claimed for was refused for a reason that may pass). */
  async unclaim(inviteeLogin: string, roomName: string): Promise<void> {
    await this.db.lwt(UNCLAIM, [inviteeLogin, roomName], async () => {
      const row = await this.db.readSerial(SELECT_ONE, [inviteeLogin, roomName]);
      return { applied: row?.status !== 'ACCEPTED', row: row! };
    });
  }

  /**
   * Deletes the row while its status is `status`: PENDING for a revoke or a decline, ACCEPTED once its acceptance
   * joined. Answers whether it applied, and the row found when it did not (undefined: none).
   */
  async deleteIf(inviteeLogin: string, roomName: string, status: InvitationRecord['status']): Promise<{ deleted: boolean; found?: InvitationRecord }> {
    const outcome = await this.db.lwt(DELETE_IF_STATUS, [inviteeLogin, roomName, status], async () => {
      const row = await this.db.readSerial(SELECT_ONE, [inviteeLogin, roomName]);
      return { applied: !row, row: row! };
    });
    if (outcome.applied) return { deleted: true };
    return { deleted: false, found: outcome.row?.status ? toInvitation(outcome.row) : undefined };
  }
}
