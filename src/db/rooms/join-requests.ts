/**
 * Storage of requests to join a room (room_join_requests, cql/028_room_join_requests.cql): one row per room and
 * requester, paged by login in the room's partition. A decision claims the row by LWT with a token of its own, so of
 * an approval and a decline racing each other exactly one applies, and a read after an unknown outcome tells whose.
 * Every write is an LWT (a plain delete's client timestamp could hide a later insert's, or the reverse), and every
 * delete names what it deletes: a decision deletes only its own claim, a stale row only as read.
 * A room's requests are one partition, so this instance's LWTs and SERIAL reads on it run one at a time (OneAtATime):
 * a burst of decisions in one room contends in the process, not in Paxos, where it would time out past
 * cas_contention_timeout with every node up.
 */
import { randomUUID } from 'node:crypto';
import { cql, type Database, type Row } from '../cassandra/client.js';
import { OneAtATime } from '../cassandra/one-at-a-time.js';

export interface JoinRequestRecord {
  roomName: string;
  requesterLogin: string;
  /** The room asked to join, not a room of the same name made since. */
  roomCreatedAt: Date;
  requestedAt: Date;
  /** PENDING until a decision (or its requester's withdrawal) claims it. */
  status: 'PENDING' | 'APPROVING' | 'DECLINED' | 'WITHDRAWN';
  /** The claim's token, while one holds it. */
  decision: string | null;
}

/** A row whose columns outlived the others (a claim's UPDATE restarts their TTL only): debris, never a request. */
export interface StaleRequestRow {
  roomName: string;
  requesterLogin: string;
  stale: true;
  /** The columns left, as read: a delete of it asks them to be so still. */
  status: string | null;
  decision: string | null;
}

const COLUMNS = 'room_name, requester_login, room_created_at, requested_at, status';
const KEY = 'WHERE room_name = ? AND requester_login = ?';

const INSERT = cql(`INSERT INTO room_join_requests (${COLUMNS}) VALUES (?, ?, ?, ?, 'PENDING') IF NOT EXISTS`, { idempotent: false });
const CLAIM = cql(`UPDATE room_join_requests SET status = ?, decision = ? ${KEY} IF status = 'PENDING' AND room_created_at = ?`, { idempotent: false });
const GIVE_BACK = cql(`UPDATE room_join_requests SET status = 'PENDING', decision = null ${KEY} IF decision = ?`, { idempotent: false });
const DROP_DECIDED = cql(`DELETE FROM room_join_requests ${KEY} IF decision = ?`, { idempotent: false });
// A row of an earlier room of the name, or debris: deleted only while it is what was read.
const DROP_STALE = cql(`DELETE FROM room_join_requests ${KEY} IF room_created_at = ? AND status = ? AND decision = ?`, { idempotent: false });
const SELECT_ONE = cql(`SELECT ${COLUMNS}, decision FROM room_join_requests ${KEY}`, { idempotent: true });
const SELECT_PAGE = cql(`SELECT ${COLUMNS}, decision FROM room_join_requests WHERE room_name = ? AND requester_login > ? LIMIT ?`, { idempotent: true });
const SELECT_UP_TO = cql(`SELECT ${COLUMNS}, decision FROM room_join_requests WHERE room_name = ? LIMIT ?`, { idempotent: true });

function toRequest(row: Row): JoinRequestRecord | StaleRequestRow {
  const decision = row.decision ? String(row.decision) : null;
  if (!row.room_created_at || !row.requested_at) return { roomName: row.room_name, requesterLogin: row.requester_login, stale: true, status: row.status ?? null, decision };
  return {
    decision,
    roomName: row.room_name,
    requesterLogin: row.requester_login,
    roomCreatedAt: row.room_created_at,
    requestedAt: row.requested_at,
    status: ['APPROVING', 'DECLINED', 'WITHDRAWN'].includes(row.status) ? row.status : 'PENDING',
  };
}

/** Whether a row read is a request (not debris). */
export const isRequest = (row: JoinRequestRecord | StaleRequestRow): row is JoinRequestRecord => !('stale' in row);

/** A claim of a request for a decision: its token gives it back, should what follows fail. */
export interface JoinRequestClaim {
  decision: string;
}

export class JoinRequestStore {
  /** This instance's LWTs and SERIAL reads, by room. */
  private readonly partitions = new OneAtATime();

  constructor(private readonly db: Database) {}

  private inTurn<T>(roomName: string, task: () => Promise<T>): Promise<T> {
    return this.partitions.run(roomName, task);
  }

  /** The row, read at SERIAL (an LWT in flight on it finishes first): for a decision, or a request. */
  async one(roomName: string, login: string): Promise<JoinRequestRecord | StaleRequestRow | undefined> {
    const row = await this.inTurn(roomName, () => this.db.readSerial(SELECT_ONE, [roomName, login]));
    return row ? toRequest(row) : undefined;
  }

  /** The row by a plain read: for showing the viewer their own request. */
  async shown(roomName: string, login: string): Promise<JoinRequestRecord | StaleRequestRow | undefined> {
    const row = await this.db.first(SELECT_ONE, [roomName, login]);
    return row ? toRequest(row) : undefined;
  }

  /** Up to `limit` rows after the login `after` (''), by login: any status, any incarnation of the room, debris too. */
  async page(roomName: string, after: string, limit: number): Promise<Array<JoinRequestRecord | StaleRequestRow>> {
    return (await this.db.execute(SELECT_PAGE, [roomName, after, limit])).rows.map(toRequest);
  }

  /** The room's first `limit` rows, by login. */
  async upTo(roomName: string, limit: number): Promise<Array<JoinRequestRecord | StaleRequestRow>> {
    return (await this.db.execute(SELECT_UP_TO, [roomName, limit])).rows.map(toRequest);
  }

  /** Records the request, unless one is there: answers the row now stored (this one, or the one before). */
  async request(request: Omit<JoinRequestRecord, 'status' | 'decision'>): Promise<JoinRequestRecord> {
    const { roomName, requesterLogin, roomCreatedAt, requestedAt } = request;
    const outcome = await this.inTurn(roomName, () =>
      this.db.lwt(INSERT, [roomName, requesterLogin, roomCreatedAt, requestedAt], async () => {
        const row = await this.db.readSerial(SELECT_ONE, [roomName, requesterLogin]);
        return { applied: row?.requested_at?.getTime() === requestedAt.getTime(), row: row! };
      }),
    );
    if (outcome.applied) return { ...request, status: 'PENDING', decision: null };
    const found = outcome.row ? toRequest(outcome.row) : undefined;
    if (found && isRequest(found)) return found;
    throw new Error(`the request of ${requesterLogin} to join ${roomName} was neither recorded nor found`);
  }

  /** Claims the pending request (to the room made at `roomCreatedAt`) for `status`; null when none is pending. */
  async claim(roomName: string, login: string, roomCreatedAt: Date, status: Exclude<JoinRequestRecord['status'], 'PENDING'>): Promise<JoinRequestClaim | null> {
    const decision = randomUUID();
    const outcome = await this.inTurn(roomName, () =>
      this.db.lwt(CLAIM, [status, decision, roomName, login, roomCreatedAt], async () => {
        const row = await this.db.readSerial(SELECT_ONE, [roomName, login]);
        const applied = row?.decision?.toString() === decision;
        // Read at SERIAL, this attempt can no longer apply; with the request gone or claimed by another decision,
        // "not applied" is what the claim would answer now, so it is the answer (not a second attempt).
        const taken = !row || row.status !== 'PENDING' || row.room_created_at?.getTime() !== roomCreatedAt.getTime();
        return { applied, row: row!, settled: !applied && taken };
      }),
    );
    return outcome.applied ? { decision } : null;
  }

  /** An approval that could not invite, for a cause that may pass: the request waits again. */
  async giveBack(roomName: string, login: string, claim: JoinRequestClaim): Promise<void> {
    await this.inTurn(roomName, () =>
      this.db.lwt(GIVE_BACK, [roomName, login, claim.decision], async () => {
        const row = await this.db.readSerial(SELECT_ONE, [roomName, login]);
        return { applied: row?.decision?.toString() !== claim.decision, row: row! };
      }),
    );
  }

  /** Deletes a request this decision claimed (a request made again since is another row's business: it stays). */
  async dropDecided(roomName: string, login: string, claim: JoinRequestClaim): Promise<void> {
    await this.inTurn(roomName, () =>
      this.db.lwt(DROP_DECIDED, [roomName, login, claim.decision], async () => {
        const row = await this.db.readSerial(SELECT_ONE, [roomName, login]);
        return { applied: row?.decision?.toString() !== claim.decision, row: row! };
      }),
    );
  }

  /** Deletes a row of an earlier room of the name, or debris, while it is as read; false when it changed meanwhile. */
  async dropStale(roomName: string, login: string, read: JoinRequestRecord | StaleRequestRow): Promise<boolean> {
    const createdAt = isRequest(read) ? read.roomCreatedAt : null;
    const outcome = await this.inTurn(roomName, () =>
      this.db.lwt(DROP_STALE, [roomName, login, createdAt, read.status, read.decision], async () => {
        const row = await this.db.readSerial(SELECT_ONE, [roomName, login]);
        return { applied: !row, row: row! };
      }),
    );
    return outcome.applied;
  }
}
