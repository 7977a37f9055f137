/**
 * Storage of chat rooms: the chat_rooms table and the rooms side of
 * users.chat_rooms. Every change of a room row that could race a deletion is
 * a lightweight transaction (see cql/002_chat_rooms.cql).
 */
import { cql, isUnknownOutcome, mapOf, type Database, type Row } from '../cassandra/client.js';
import { fromUdt, type ChatUser } from './chat-user.js';
import { Limits } from '../../limits.js';
import { nextWriteTimestamp, type WriteTimestamp } from '../cassandra/write-timestamp.js';
import { lookAhead, pageOf, type Page } from '../cassandra/page.js';
import { OneAtATime } from '../cassandra/one-at-a-time.js';
import { FREE_SEAT, freeSeat, freeSeatOf, IF_SEAT_AS_READ, IF_SEAT_FREE, ifSeatAsRead, ifSeatFree, seating, seatsInOrder, TAKE_SEAT, takeSeat } from './seats.js';

export interface RoomRecord {
  name: string;
  createdAt: Date;
  banner: string | null;
  creator: ChatUser;
  creatorLogin: string;
  /** The stored set, element for element: a conditional delete compares against exactly this. */
  participants: ChatUser[];
  /** Logins named moderators. */
  moderators: string[];
  /** Logins named admins (cql/026_room_roles.cql). */
  admins: string[];
  /** Logins named guests: they read, and neither post nor react. */
  guests: string[];
  /** Banned logins (they cannot join again) and when they were banned. */
  banned: Map<string, Date>;
  /** Muted logins and until when. */
  mutedUntil: Map<string, Date>;
  /** One message per this many seconds per participant; null without slow mode. */
  slowModeSeconds: number | null;
  /** Custom data its creator gave it (JSON text of an object); null when none. */
  metadata: string | null;
  /** Who may find and join it (cql/023_room_visibility.cql). */
  visibility: RoomVisibility;
  /** Its owner: its creator until ownership moved (cql/025_room_owner.cql). */
  ownerLogin: string;
  /** owner_login as stored (null: the creator), which the owner's LWTs ask to be unchanged. */
  ownerStored: string | null;
  /** What kind of room it is, set at its creation (cql/027_room_kinds.cql). */
  kind: RoomKind;
  /** The actions its members may do beyond the member role's (cql/027_room_kinds.cql). */
  memberGrants: MemberGrant[];
  /** Each participant's seat, by login (cql/030_room_seats.cql, seats.ts): how the participant cap holds exactly. */
  seatOf: Map<string, number>;
}

/** The kinds of room: each sets defaults at creation (a group is private, and its members invite) and rules for good. */
export const ROOM_KINDS = ['CHANNEL', 'GROUP', 'ANNOUNCEMENT', 'LIVESTREAM'] as const;
export type RoomKind = (typeof ROOM_KINDS)[number];

/** What a room may let its members do beyond the member role's actions. */
export const MEMBER_GRANTS = ['INVITE', 'PIN'] as const;
export type MemberGrant = (typeof MEMBER_GRANTS)[number];

/**
 * PUBLIC: listed, anyone joins. ON_REQUEST: listed, entered by a moderator's approval of a request to join (or an
 * invitation). PRIVATE: unlisted, entered by invitation; hidden from anyone outside it.
 */
export type RoomVisibility = 'PUBLIC' | 'ON_REQUEST' | 'PRIVATE';

/** A room's row without its participants: what a use case about one person needs of it. */
export type RoomHead = Omit<RoomRecord, 'participants' | 'seatOf'>;

/** A room's head and one person's entries in its participants (none: they do not take part). */
export interface RoomSeenBy {
  room: RoomHead;
  entries: ChatUser[];
}

/** A room as created: nobody moderates, is banned or muted, no slow mode. */
export const unmoderated = (): Pick<RoomRecord, 'moderators' | 'admins' | 'guests' | 'banned' | 'mutedUntil' | 'slowModeSeconds'> => ({
  moderators: [],
  admins: [],
  guests: [],
  banned: new Map(),
  mutedUntil: new Map(),
  slowModeSeconds: null,
});

const COLUMNS = 'room_name, creation_date, banner, creator, creator_login, participants';
// A whole room as read: its participants and their seats.
const ROOM_COLUMNS = `${COLUMNS}, seat_of`;
// What the room's creator and moderators set after its creation (moderation, custom data).
const SETTINGS_COLUMNS = 'moderators, admins, guests, banned, muted_until, slow_mode_seconds, metadata, visibility, owner_login, kind, member_grants';

/**
 * Takes a login off every named role (admins, moderators, guests): bound with roleless(login). Every way in or out
 * of a room writes it, so a role never outlives the participation it was given in.
 */
export const NO_ROLE = 'moderators = moderators - ?, admins = admins - ?, guests = guests - ?';
export const roleless = (...logins: string[]) => [new Set(logins), new Set(logins), new Set(logins)];

const INSERT_IF_NOT_EXISTS = cql(
  `INSERT INTO chat_rooms (${COLUMNS}, metadata, visibility, kind, member_grants, seats, seat_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS`,
  { idempotent: false },
);
const SELECT_ONE = cql(`SELECT ${ROOM_COLUMNS}, ${SETTINGS_COLUMNS} FROM chat_rooms WHERE room_name = ?`, { idempotent: true });
// One person's entries of the participants set, by a slice of the set: its elements sort by login first, and the
// slice from {login} to {login + NUL} holds exactly that login's entries (a login never holds NUL). A room of a
// thousand people would otherwise be sent and decoded whole on every read.
const HEAD_COLUMNS = 'room_name, creation_date, banner, creator, creator_login';
const SELECT_SEEN_BY = cql(
  `SELECT ${HEAD_COLUMNS}, ${SETTINGS_COLUMNS}, participants[?..?] AS own_entries FROM chat_rooms WHERE room_name = ?`,
  { idempotent: true },
);
const SELECT_MANY = cql(`SELECT ${ROOM_COLUMNS}, ${SETTINGS_COLUMNS} FROM chat_rooms WHERE room_name IN ?`, { idempotent: true });
// Every room in token order, resumed after a room name: the cursor is the name itself, so any edge resumes in one read.
const SELECT_FIRST_ROOMS = cql(`SELECT ${ROOM_COLUMNS}, ${SETTINGS_COLUMNS} FROM chat_rooms LIMIT ?`, { idempotent: true });
const SELECT_ROOMS_AFTER = cql(`SELECT ${ROOM_COLUMNS}, ${SETTINGS_COLUMNS} FROM chat_rooms WHERE token(room_name) > token(?) LIMIT ?`, {
  idempotent: true,
});
// IF the creator read: a join that loses the race with a deletion must not leave a row holding only
// participants. IF not banned: a ban racing the join is ordered with it by Paxos. A joiner moderates nothing
// (a former moderator's name, left by a naming that raced their departure, goes). IF visibility = null: an open
// join is one into a public room, and a room made private since the join read it refuses it. IF the seat is free
// (seats.ts): no more joins apply than the room has seats.
const JOIN_CHANGE = `UPDATE chat_rooms SET participants = participants + ?, ${NO_ROLE}, ${TAKE_SEAT} WHERE room_name = ?`;
const JOIN_IF_EXISTS = cql(`${JOIN_CHANGE} IF creator_login = ? AND banned[?] = null AND visibility = null AND ${IF_SEAT_FREE}`, { idempotent: false });
// A join by an accepted invitation: into a room of any visibility (the invitation was claimed by its own LWT).
const JOIN_INVITED = cql(`${JOIN_CHANGE} IF creator_login = ? AND banned[?] = null AND ${IF_SEAT_FREE}`, { idempotent: false });
// A row written before seats: every participant seated at once, while the seats are those read. Not asked of the
// participants: a set holding an entry with a null name (written outside Parley) reads back as '' and would never
// compare equal. A join since the read took a seat, so it fails this; a leave of someone unseated since leaves a
// seat to nobody, which the next seating (seatsInOrder) frees.
const SEAT_ALL = cql('UPDATE chat_rooms SET seats = ?, seat_of = ? WHERE room_name = ? IF creator_login = ? AND creation_date = ? AND seat_of = ?', {
  idempotent: false,
});
/** Rounds of a join that lost its seat to another join (each loss is someone else in): then CONFLICT. */
const JOIN_ROUNDS = 20;
// Whoever leaves stops moderating. An LWT asking the owner to be the one read: a leave racing the transfer of the
// ownership to the leaver is put in one order with it, and read again it is the owner's leave, which hands it on.
const REMOVE_PARTICIPANTS = cql(
  `UPDATE chat_rooms SET participants = participants - ?, ${NO_ROLE}, ${FREE_SEAT} WHERE room_name = ? IF owner_login = ? AND ${IF_SEAT_AS_READ}`,
  { idempotent: false },
);
// The owner leaves and hands the ownership to `heir`, only while the participants are those read (the heir among them).
const OWNER_LEAVES = cql(
  `UPDATE chat_rooms SET participants = participants - ?, ${NO_ROLE}, ${FREE_SEAT}, owner_login = ? WHERE room_name = ? IF owner_login = ? AND participants = ? AND ${IF_SEAT_AS_READ}`,
  { idempotent: false },
);
// The owner hands the ownership to a participant, who stops being a moderator (they outrank it now).
const TRANSFER = cql(
  `UPDATE chat_rooms SET owner_login = ?, ${NO_ROLE} WHERE room_name = ? IF creator_login = ? AND creation_date = ? AND owner_login = ? AND participants CONTAINS ?`,
  { idempotent: false },
);
// Only the owner deletes, and only the participants just read: a joiner in between makes it fail and re-read.
const DELETE_IF = cql('DELETE FROM chat_rooms WHERE room_name = ? IF creator_login = ? AND owner_login = ? AND participants = ?', {
  idempotent: false,
});
const ADD_USER_ROOM = cql('UPDATE users SET chat_rooms = chat_rooms + ? WHERE login = ?', { idempotent: true });
// A join's entry, at a timestamp it records (pending_room_notices): should the join never apply, the entry is removed
// at that same timestamp (a delete wins a tie), and a later join, at a later one, keeps it.
const ADD_USER_ROOM_AT = cql('UPDATE users USING TIMESTAMP ? SET chat_rooms = chat_rooms + ? WHERE login = ?', { idempotent: true });
const REMOVE_USER_ROOM = cql('UPDATE users SET chat_rooms = chat_rooms - ? WHERE login = ?', { idempotent: true });
// A deleted room's cleanup: stamped with the deletion's time, so a room of the same name joined since keeps its entry.
const REMOVE_USER_ROOM_AT = cql('UPDATE users USING TIMESTAMP ? SET chat_rooms = chat_rooms - ? WHERE login = ?', {
  idempotent: true,
});

function toRoom(row: Row): RoomRecord {
  return { ...toHead(row), participants: participantsOf(row.participants), seatOf: mapOf<number>(row.seat_of) };
}

function participantsOf(set: unknown): ChatUser[] {
  return [...((set as Set<unknown> | null) ?? [])].map(fromUdt);
}

function toHead(row: Row): RoomHead {
  return {
    name: row.room_name,
    createdAt: row.creation_date,
    banner: row.banner ?? null,
    creator: fromUdt(row.creator),
    creatorLogin: row.creator_login,
    moderators: [...((row.moderators as Set<string> | null) ?? [])],
    admins: [...((row.admins as Set<string> | null) ?? [])],
    guests: [...((row.guests as Set<string> | null) ?? [])],
    banned: mapOf<Date>(row.banned),
    mutedUntil: mapOf<Date>(row.muted_until),
    slowModeSeconds: row.slow_mode_seconds ?? null,
    metadata: row.metadata ?? null,
    visibility: row.visibility === 'PRIVATE' || row.visibility === 'ON_REQUEST' ? row.visibility : 'PUBLIC',
    ownerLogin: row.owner_login ?? row.creator_login,
    ownerStored: row.owner_login ?? null,
    kind: (ROOM_KINDS as readonly string[]).includes(row.kind) ? (row.kind as RoomKind) : 'CHANNEL',
    memberGrants: [...((row.member_grants as Set<string> | null) ?? [])].filter((g): g is MemberGrant => (MEMBER_GRANTS as readonly string[]).includes(g)),
  };
}

/** A row is a room only with its creation columns: anything else is debris of a lost race. */
function isComplete(row: Row | undefined): row is Row {
  return Boolean(row?.creation_date && row.creator_login);
}

export type DeleteOutcome =
  /** `at`: a write timestamp taken once the delete applied; the cleanup's deletes carry it. */
  | { status: 'deleted'; at: WriteTimestamp }
  | { status: 'gone' }
  | { status: 'changed'; room: RoomRecord };

export class RoomStore {
  /**
   * This instance's joins, by room, one at a time: a burst of joins into one room (each a SERIAL read and an LWT on
   * its row, and a round more for each seat lost) contends in the process, not in Paxos, where past
   * cas_contention_timeout it would time out with every node up.
   */
  private readonly joins = new OneAtATime();

  constructor(private readonly db: Database) {}

  /** Returns false when the name is taken. */
  async insertIfNotExists(room: RoomRecord): Promise<boolean> {
    const visibility = room.visibility === 'PUBLIC' ? undefined : room.visibility; // public is the column unset
    const kind = room.kind === 'CHANNEL' ? undefined : room.kind; // a channel is the column unset
    const grants = room.memberGrants.length > 0 ? new Set(room.memberGrants) : undefined;
    const { seats, seatOf } = seating(room);
    const params = [room.name, room.createdAt, room.banner, room.creator, room.creatorLogin, new Set(room.participants), room.metadata ?? undefined, visibility, kind, grants, seats, seatOf];
    const outcome = await this.db.lwt(INSERT_IF_NOT_EXISTS, params, async () => {
      const row = await this.db.readSerial(SELECT_ONE, [room.name]);
      const ours = row?.creator_login === room.creatorLogin && row?.creation_date?.getTime() === room.createdAt.getTime();
      return { applied: ours, row: row! };
    });
    return outcome.applied;
  }

  async byName(name: string): Promise<RoomRecord | undefined> {
    const row = await this.db.first(SELECT_ONE, [name]);
    return isComplete(row) ? toRoom(row) : undefined;
  }

  /** The room without its participants, and `login`'s entries among them. */
  async seenBy(name: string, login: string): Promise<RoomSeenBy | undefined> {
    const row = await this.db.first(SELECT_SEEN_BY, [{ login }, { login: `${login}\u0000` }, name]);
    return isComplete(row) ? { room: toHead(row), entries: participantsOf(row.own_entries) } : undefined;
  }

  /** Batch lookup for the DataLoader: one multi-partition read. */
  async byNames(names: readonly string[]): Promise<RoomRecord[]> {
    if (names.length === 0) return [];
    const rs = await this.db.execute(SELECT_MANY, [[...new Set(names)]]);
    return rs.rows.filter(isComplete).map(toRoom);
  }

  /**
   * Up to `limit` rooms that `listed` keeps, in token order after the room named `after` (from the start without
   * it). Debris rows and rooms not kept are skipped and the read continues past them, so a page is short only at
   * the end of the table.
   */
  async pageAfter(after: string | null, size: number, listed: (room: RoomRecord) => boolean): Promise<Page<RoomRecord>> {
    const limit = lookAhead(size);
    const rooms: RoomRecord[] = [];
    let position = after;
    for (;;) {
      const asked = limit - rooms.length;
      const rs = position
        ? await this.db.execute(SELECT_ROOMS_AFTER, [position, asked])
        : await this.db.execute(SELECT_FIRST_ROOMS, [asked]);
      for (const row of rs.rows) {
        if (!isComplete(row)) continue;
        const room = toRoom(row);
        if (listed(room)) rooms.push(room);
      }
      if (rs.rows.length < asked || rooms.length >= limit) return pageOf(rooms, size);
      position = rs.rows.at(-1)!.room_name as string;
    }
  }

  /**
   * Adds a participant in a free seat below the cap, unless the room is gone (or is another room of that name now)
   * or bans them; `how` 'open' (joinRoom) also unless the room is private now ('gone': to the joiner it is),
   * 'invited' into any room. 'full': every seat is taken. A room written before seats is seated first. A seat
   * another join took first is a lost round: the room is read again and another asked for, up to JOIN_ROUNDS
   * ('busy' past them).
   */
  addParticipantIfExists(room: RoomRecord, user: ChatUser, how: 'open' | 'invited' = 'open'): Promise<'joined' | 'gone' | 'banned' | 'full' | 'busy'> {
    return this.joins.run(room.name, () => this.join(room, user, how));
  }

  private async join(room: RoomRecord, user: ChatUser, how: 'open' | 'invited'): Promise<'joined' | 'gone' | 'banned' | 'full' | 'busy'> {
    const stmt = how === 'open' ? JOIN_IF_EXISTS : JOIN_INVITED;
    const takesPart = (row: Row | undefined) => isComplete(row) && toRoom(row).participants.some((p) => p.login === user.login);
    let current = room;
    for (let round = 1; round <= JOIN_ROUNDS; round++) {
      const inOrder = seatsInOrder(current);
      const seat = inOrder ? freeSeat(current) : null;
      if (inOrder && seat === null) return 'full';
      try {
        if (seat === null) {
          await this.seat(current);
        } else {
          const params = [new Set([user]), ...roleless(user.login), ...takeSeat(seat, user.login), room.name, room.creatorLogin, user.login, ...ifSeatFree(seat, user.login)];
          const outcome = await this.db.lwt(stmt, params, async () => {
            const row = await this.db.readSerial(SELECT_ONE, [room.name]);
            return { applied: takesPart(row), row: row! };
          });
          if (outcome.applied) return 'joined';
        }
      } catch (err) {
        // Twice unanswered (Paxos contention past cas_contention_timeout, most often): read back at SERIAL, it did
        // not apply and never will; a lost round like any other, which the read below settles.
        if (!isUnknownOutcome(err)) throw err;
      }
      const row = await this.db.readSerial(SELECT_ONE, [room.name]);
      if (!isComplete(row) || row.creator_login !== room.creatorLogin) return 'gone';
      current = toRoom(row);
      if (current.banned.has(user.login)) return 'banned';
      if (how === 'open' && current.visibility !== 'PUBLIC') return 'gone';
      // A join of theirs that raced this one went in.
      if (takesPart(row)) return 'joined';
    }
    return 'busy';
  }

  /**
   * Seats every participant of a row written before seats (seats.ts `seating`), while its seats are those read: false
   * when they changed (read it again). For a join that meets such a row, and seats:backfill.
   */
  async seat(room: RoomRecord): Promise<boolean> {
    const { seats, seatOf } = seating(room);
    const read = room.seatOf.size > 0 ? Object.fromEntries(room.seatOf) : null;
    const outcome = await this.db.lwt(SEAT_ALL, [seats, seatOf, room.name, room.creatorLogin, room.createdAt, read], async () => {
      const row = await this.db.readSerial(SELECT_ONE, [room.name]);
      return { applied: isComplete(row) && seatsInOrder(toRoom(row)), row: row! };
    });
    return outcome.applied;
  }

  /**
   * Takes `login`'s entries (`entries`, as read) out of the room's participants, and the room out of their list
   * (first: a leave cut short leaves no list naming a room its user left). When the leaver owns the room and anyone
   * else takes part, the ownership goes to `heir` in the same LWT, which asks the participants to be those read.
   * 'changed' when the owner (or, for the owner's leave, the participants) is not what was read: read again, retry.
   */
  async leave(room: RoomRecord, login: string, entries: ChatUser[], heir: string | null = null): Promise<'left' | 'changed'> {
    await this.db.execute(REMOVE_USER_ROOM, [new Set([room.name]), login]);
    if (entries.length === 0) return 'left';
    const gone = (row: Row | undefined) => !row || !participantsOf(row.participants).some((p) => p.login === login);
    const [stmt, params, landed] = heir
      ? ([
          OWNER_LEAVES,
          // The heir outranks every named role now: they leave theirs, as the leaver leaves all of theirs.
          [new Set(entries), ...roleless(login, heir), ...freeSeatOf(room, login), heir, room.name, room.ownerStored, new Set(room.participants), ...ifSeatAsRead(room, login)],
          (row: Row | undefined) => gone(row) && row?.owner_login === heir,
        ] as const)
      : ([REMOVE_PARTICIPANTS, [new Set(entries), ...roleless(login), ...freeSeatOf(room, login), room.name, room.ownerStored, ...ifSeatAsRead(room, login)], gone] as const);
    const outcome = await this.db.lwt(stmt, [...params], async () => {
      const row = await this.db.readSerial(SELECT_ONE, [room.name]);
      return { applied: landed(row), row: row! };
    });
    return outcome.applied ? 'left' : 'changed';
  }

  /** Hands the ownership to `to` (their entry as read), while the owner is the one read and `to` takes part. */
  async transferOwnership(room: RoomRecord, to: ChatUser): Promise<boolean> {
    const params = [to.login, ...roleless(to.login), room.name, room.creatorLogin, room.createdAt, room.ownerStored, to];
    const outcome = await this.db.lwt(TRANSFER, params, async () => {
      const row = await this.db.readSerial(SELECT_ONE, [room.name]);
      return { applied: isComplete(row) && row.owner_login === to.login, row: row! };
    });
    return outcome.applied;
  }

  /**
   * DELETE ... IF creator_login = ? AND owner_login = ? AND participants = ?: applies only when the owner is the
   * one read and the participants are still exactly `room.participants`. When they changed,
   * returns the current row so the caller can retry with it.
   */
  async deleteIfUnchanged(room: RoomRecord): Promise<DeleteOutcome> {
    const outcome = await this.db.lwt(DELETE_IF, [room.name, room.creatorLogin, room.ownerStored, new Set(room.participants)], async () => {
      const row = await this.db.readSerial(SELECT_ONE, [room.name]);
      // Gone either way: ours or an earlier attempt's; the result is the same.
      return { applied: !isComplete(row), row: row! };
    });
    // Taken after the delete applied: any write made after this moment (a new room of the same name) outranks the cleanup.
    if (outcome.applied) return { status: 'deleted', at: nextWriteTimestamp(this.db) };
    const current = await this.db.readSerial(SELECT_ONE, [room.name]);
    return isComplete(current) ? { status: 'changed', room: toRoom(current) } : { status: 'gone' };
  }

  /** The room now stored under `name`, read at SERIAL (an LWT in flight on it finishes first). */
  async byNameSerial(name: string): Promise<RoomRecord | undefined> {
    const row = await this.db.readSerial(SELECT_ONE, [name]);
    return isComplete(row) ? toRoom(row) : undefined;
  }

  /** When the room now stored under `name` was created, read at SERIAL (an LWT in flight on it finishes first). */
  async createdAtSerial(name: string): Promise<Date | undefined> {
    const row = await this.db.readSerial(SELECT_ONE, [name]);
    return isComplete(row) ? (row.creation_date as Date) : undefined;
  }

  async addToUser(login: string, name: string, at?: WriteTimestamp): Promise<void> {
    if (at) await this.db.execute(ADD_USER_ROOM_AT, [at, new Set([name]), login]);
    else await this.db.execute(ADD_USER_ROOM, [new Set([name]), login]);
  }

  async removeFromUser(login: string, name: string): Promise<void> {
    await this.db.execute(REMOVE_USER_ROOM, [new Set([name]), login]);
  }

  /**
   * Removes a deleted room from its former participants' chat_rooms, at most
   * 100 users per logged batch, as of `at` (the deletion): a user who joined a
   * room of the same name since keeps it.
   */
  async removeFromUsers(logins: Iterable<string>, name: string, at: WriteTimestamp): Promise<void> {
    const all = [...new Set(logins)];
    for (let i = 0; i < all.length; i += Limits.room.cleanupBatch) {
      const chunk = all.slice(i, i + Limits.room.cleanupBatch);
      await this.db.batch(chunk.map((login) => ({ stmt: REMOVE_USER_ROOM_AT, params: [at, new Set([name]), login] })));
    }
  }
}
