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
const SELECT_VOTE = cql('SELECT answers FROM poll_votes WHERE room_name = ? AND message_id = ? AND voter = ?', { idempotent: true });
const DROP_VOTES = cql('DELETE FROM poll_votes WHERE room_name = ? AND message_id = ?', { idempotent: true });

export interface PollTally {
  /** Votes per answer, by the answer's index. */
  counts: number[];
  /** People who voted (one may pick several answers). */
  voters: number;
}

export class PollVoteStore {
  constructor(private readonly db: Database) {}

  /** The voter's answers, replacing any earlier vote of theirs. */
  async vote(roomName: string, messageId: string, voter: string, answers: number[]): Promise<void> {
    await this.db.execute(VOTE, [roomName, messageId, voter, new Set(answers)]);
  }

  async retract(roomName: string, messageId: string, voter: string): Promise<void> {
    await this.db.execute(RETRACT, [roomName, messageId, voter]);
  }

  /** Every vote counted from the partition (a row per voter: one request up to 2,000 voters). */
  async tally(roomName: string, messageId: string, answerCount: number): Promise<PollTally> {
    // Voters who left the room keep their vote, so the partition may outgrow the participant cap: read it whole.
    const rows = await this.db.allRows(SELECT_VOTES, [roomName, messageId], 2 * Limits.room.maxParticipants);
    const counts = Array<number>(answerCount).fill(0);
    for (const row of rows) for (const answer of (row.answers as Set<number> | null) ?? []) if (answer < answerCount) counts[answer]! += 1;
    return { counts, voters: rows.length };
  }

  /** The voter's own answers, sorted (empty: no vote). */
  async answersOf(roomName: string, messageId: string, voter: string): Promise<number[]> {
    const row = await this.db.first(SELECT_VOTE, [roomName, messageId, voter]);
    return [...((row?.answers as Set<number> | null) ?? [])].sort((a, b) => a - b);
  }

  /** A deleted poll message's votes. */
  async drop(roomName: string, messageId: string): Promise<void> {
    await this.db.execute(DROP_VOTES, [roomName, messageId]);
  }
}
