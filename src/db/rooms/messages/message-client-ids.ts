/**
 * The clientMessageId claims that make a retried post idempotent: the first
 * attempt with an id fixes the message id and content, later ones learn them.
 */
import { cql, type Database } from '../../cassandra/client.js';
import { timeUuidDate } from '../../../timeuuids.js';
import { dayBucket } from '../../../buckets.js';
import type { RoomIncarnation, RoomMessageStore } from './room-messages.js';

const CLAIM_CLIENT_ID = cql(
  `INSERT INTO message_client_ids (room_name, author_login, client_message_id, message_id, content)
   VALUES (?, ?, ?, ?, ?) IF NOT EXISTS USING TTL ?`,
  { idempotent: false },
);
// A claim left by an earlier room of the same name is taken over, by one attempt only.
const RECLAIM_CLIENT_ID = cql(
  `UPDATE message_client_ids USING TTL ? SET message_id = ?, content = ?
   WHERE room_name = ? AND author_login = ? AND client_message_id = ? IF message_id = ?`,
  { idempotent: false },
);
const SELECT_CLIENT_ID = cql(
  `SELECT message_id, content FROM message_client_ids
   WHERE room_name = ? AND author_login = ? AND client_message_id = ?`,
  { idempotent: true },
);

export interface ClientIdClaim {
  /** True when this attempt claimed the id (it is the original post). */
  claimed: boolean;
  messageId: string;
  content: string;
}

export class MessageClientIdStore {
  constructor(
    private readonly db: Database,
    private readonly messages: RoomMessageStore,
  ) {}

  /**
   * Claims a clientMessageId for a post: the first attempt wins and fixes the
   * message id and content; later attempts learn them. The claim expires
   * after `ttlSeconds`. A dead claim is taken over (compare-and-set on its
   * message id, so one attempt wins that too): one made in an earlier room of
   * the same name, or one whose message was never written and no longer can
   * be (see isDeadClaim).
   */
  async claim(
    room: RoomIncarnation,
    login: string,
    clientId: string,
    proposal: { messageId: string; content: string },
    /** commitHorizonMs: how long after its id's time a message can still commit (src/resolvers/rooms/model.ts). */
    opts: { ttlSeconds: number; now: Date; commitHorizonMs: number },
  ): Promise<ClientIdClaim> {
    const key = [room.name, login, clientId];
    const ours = async () => {
      const row = await this.db.readSerial(SELECT_CLIENT_ID, key);
      return { applied: row?.message_id?.toString() === proposal.messageId, row: row! };
    };
    // A round ends unless the claim expired or was taken over between two statements: a few rounds are plenty.
    for (let round = 0; round < 3; round++) {
      const inserted = await this.db.lwt(CLAIM_CLIENT_ID, [...key, proposal.messageId, proposal.content, opts.ttlSeconds], ours);
      if (inserted.applied) return { claimed: true, ...proposal };
      // Not applied: the row that won (returned by the LWT, or read back after a timeout).
      const current = inserted.row?.message_id ? inserted.row : await this.db.readSerial(SELECT_CLIENT_ID, key);
      if (!current?.message_id) continue; // expired meanwhile: claim it afresh
      const claimed = current.message_id.toString() as string;
      if (!(await this.isDeadClaim(room, claimed, opts))) return { claimed: false, messageId: claimed, content: current.content };
      const replaced = await this.db.lwt(
        RECLAIM_CLIENT_ID,
        [opts.ttlSeconds, proposal.messageId, proposal.content, ...key, current.message_id],
        ours,
      );
      if (replaced.applied) return { claimed: true, ...proposal };
      // Another attempt took it over first (or it expired): the next round finds out which.
    }
    throw new Error('clientMessageId claim kept changing');
  }

  /**
   * A claim is dead when its message belongs to an earlier room of the same
   * name, or was never written and can no longer be: its id is past the
   * commit horizon (the original attempt's write has landed or failed by then)
   * and the message is not there. Writing it now would put it below messages
   * that catch-up has already served.
   */
  private async isDeadClaim(room: RoomIncarnation, messageId: string, { now, commitHorizonMs }: { now: Date; commitHorizonMs: number }): Promise<boolean> {
    const at = timeUuidDate(messageId);
    if (at < room.createdAt) return true;
    if (now.getTime() - at.getTime() <= commitHorizonMs) return false;
    return !(await this.messages.byKey(room.name, dayBucket(at), messageId));
  }
}
