/**
 * Poll votes: one row per voter in the poll's partition (poll_votes), written
 * whole, never a counter, so the counts read from the partition are exact
 * whatever votes race (see cql/018_polls_and_forwards.cql).
 */
import { cql, type Database } from '../../cassandra/client.js';
import { Limits } from '../../../limits.js';

const VOTE = cql('INSERT INTO poll_votes (room_name, message_id, voter, answers) VALUES (?, ?, ?, ?)', { idempotent: true });
const RETRACT = cql('DELETE FROM poll_votes WHERE room_name = ? AND message_id = ? AND voter = ?', { idempotent: true });
const SELECT_VOTES = cql('SELECT voter, answers FROM poll_votes WHERE room_name = ? AND message_id = ?', { idempotent: true });
const DROP_VOTES = cql('DELETE FROM poll_votes WHERE room_name = ? AND message_id = ?', { idempotent: true });

export class PollVoteStore {
  constructor(private readonly db: Database) {}

  /** The voter's answers, replacing any earlier vote of theirs. */
  async vote(roomName: string, messageId: string, voter: string, answers: number[]): Promise<void> {
    await this.db.execute(VOTE, [roomName, messageId, voter, new Set(answers)]);
  }

  async retract(roomName: string, messageId: string, voter: string): Promise<void> {
    await this.db.execute(RETRACT, [roomName, messageId, voter]);
  }

  /**
   * Every vote of the poll, the partition read whole: each voter's answers, sorted (a row per voter: one request up
   * to 2,000 voters). The counts and each viewer's own answers all come from this one read.
   */
  async votes(roomName: string, messageId: string): Promise<Map<string, number[]>> {
    // Voters who left the room keep their vote, so the partition may outgrow the participant cap: read it whole.
    const rows = await this.db.allRows(SELECT_VOTES, [roomName, messageId], 2 * Limits.room.maxParticipants);
    return new Map(rows.map((row) => [row.voter as string, [...((row.answers as Set<number> | null) ?? [])].sort((x, y) => x - y)]));
  }

  /** A deleted poll message's votes. */
  async drop(roomName: string, messageId: string): Promise<void> {
    await this.db.execute(DROP_VOTES, [roomName, messageId]);
  }
}
