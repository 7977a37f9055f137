/**
 * Reactions: one row per message, emoji and user in message_reactions, so a
 * reaction added twice is one, and counts (one GROUP BY per message) stay
 * exact under any interleaving of adds and removes. The emoji a message may
 * carry are listed in its row (reaction_kinds), grown by an LWT so that two
 * new emoji racing each other cannot pass the limit together; this
 * instance's growths on one partition run one at a time (OneAtATime), so a
 * burst of new emoji contends in the process rather than in Paxos.
 */
import { cql, type Database } from '../../cassandra/client.js';
import { OneAtATime } from '../../cassandra/one-at-a-time.js';
import { fromUdt, type ChatUser } from '../chat-user.js';
import type { MessageRecord } from './message-row.js';

const ADD = cql(
  `INSERT INTO message_reactions (room_name, time_bucket, message_id, emoji, login, reactor) VALUES (?, ?, ?, ?, ?, ?)`,
  { idempotent: true },
);
const REMOVE = cql(
  'DELETE FROM message_reactions WHERE room_name = ? AND time_bucket = ? AND message_id = ? AND emoji = ? AND login = ?',
  { idempotent: true },
);
const COUNTS = cql(
  `SELECT emoji, COUNT(*) AS n FROM message_reactions WHERE room_name = ? AND time_bucket = ? AND message_id = ?
   GROUP BY emoji`,
  { idempotent: true },
);
const MINE = cql(
  `SELECT emoji FROM message_reactions WHERE room_name = ? AND time_bucket = ? AND message_id = ? AND emoji IN ?
   AND login = ?`,
  { idempotent: true },
);
const FIRST_REACTORS = cql(
  'SELECT reactor FROM message_reactions WHERE room_name = ? AND time_bucket = ? AND message_id = ? AND emoji = ? LIMIT ?',
  { idempotent: true },
);
const GROW_KINDS = cql(
  // system_message != null: never a row of leftovers in a room deleted meanwhile.
  'UPDATE chat_room_messages SET reaction_kinds = ? WHERE room_name = ? AND time_bucket = ? AND message_id = ? IF reaction_kinds = ? AND system_message != null',
  { idempotent: false },
);
const SELECT_KINDS = cql(
  'SELECT reaction_kinds, system_message FROM chat_room_messages WHERE room_name = ? AND time_bucket = ? AND message_id = ?',
  { idempotent: true },
);
const DROP_REACTIONS = cql('DELETE FROM message_reactions WHERE room_name = ? AND time_bucket = ? AND message_id = ?', {
  idempotent: true,
});

const key = (m: MessageRecord) => [m.roomName, m.bucket, m.messageId];
const kindsOf = (value: unknown) => [...((value as Set<string> | null) ?? [])];

export class ReactionStore {
  private readonly kindGrowths = new OneAtATime();

  constructor(private readonly db: Database) {}

  /**
   * Makes sure `emoji` is one of the message's kinds: the kinds it has, or,
   * while fewer than `max`, those plus this one (LWT on the set read; when
   * another kind got in first, read again and retry: each retry means one
   * more kind, so there are at most `max` of them). 'full' when the message
   * has `max` other kinds, 'gone' when it went with its room.
   */
  allowKind(message: MessageRecord, emoji: string, max: number): Promise<'allowed' | 'full' | 'gone'> {
    return this.kindGrowths.run(`${message.roomName}/${message.bucket}`, () => this.growKinds(message, emoji, max));
  }

  private async growKinds(message: MessageRecord, emoji: string, max: number): Promise<'allowed' | 'full' | 'gone'> {
    let kinds = message.reactionKinds;
    for (;;) {
      if (kinds.includes(emoji)) return 'allowed';
      if (kinds.length >= max) return 'full';
      const outcome = await this.db.lwt(GROW_KINDS, [[...kinds, emoji], ...key(message), kinds.length ? kinds : null], async () => {
        const row = await this.db.readSerial(SELECT_KINDS, key(message));
        return { applied: kindsOf(row?.reaction_kinds).includes(emoji), row };
      });
      if (outcome.applied) return 'allowed';
      const row = outcome.row && 'system_message' in outcome.row ? outcome.row : await this.db.readSerial(SELECT_KINDS, key(message));
      if (row?.system_message == null) return 'gone';
      kinds = kindsOf(row.reaction_kinds);
    }
  }

  async add(message: MessageRecord, emoji: string, reactor: ChatUser): Promise<void> {
    await this.db.execute(ADD, [...key(message), emoji, reactor.login, reactor]);
  }

  async remove(message: MessageRecord, emoji: string, login: string): Promise<void> {
    await this.db.execute(REMOVE, [...key(message), emoji, login]);
  }

  /** Each emoji that has reactions, with how many, in emoji order. */
  async counts(message: MessageRecord): Promise<Array<{ emoji: string; count: number }>> {
    const rs = await this.db.execute(COUNTS, key(message));
    return rs.rows.map((r) => ({ emoji: r.emoji as string, count: Number(r.n) })).filter((c) => c.count > 0);
  }

  /** Which of `emojis` the user reacted with. */
  async mine(message: MessageRecord, emojis: string[], login: string): Promise<Set<string>> {
    if (emojis.length === 0) return new Set();
    const rs = await this.db.execute(MINE, [...key(message), emojis, login]);
    return new Set(rs.rows.map((r) => r.emoji as string));
  }

  /** The first `limit` people who reacted with `emoji`, in login order. */
  async firstReactors(message: MessageRecord, emoji: string, limit: number): Promise<ChatUser[]> {
    const rs = await this.db.execute(FIRST_REACTORS, [...key(message), emoji, limit]);
    return rs.rows.map((r) => fromUdt(r.reactor));
  }

  /** A deleted message keeps no reactions. */
  async dropAll(message: MessageRecord): Promise<void> {
    await this.db.execute(DROP_REACTIONS, key(message));
  }
}
