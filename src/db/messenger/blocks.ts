/** Storage of who blocked whom in the messenger (cql/014). */
import { cql, type Database, type Row } from '../cassandra/client.js';

export interface Block {
  login: string;
  blocked: string;
  blockedAt: Date;
}

const INSERT_IF_ABSENT = cql('INSERT INTO user_blocks (login, blocked, blocked_at) VALUES (?, ?, ?) IF NOT EXISTS', { idempotent: false });
const DELETE = cql('DELETE FROM user_blocks WHERE login = ? AND blocked = ?', { idempotent: true });
const SELECT_OF = cql('SELECT login, blocked, blocked_at FROM user_blocks WHERE login = ? LIMIT ?', { idempotent: true });
const SELECT_BETWEEN = cql('SELECT login, blocked, blocked_at FROM user_blocks WHERE login IN ? AND blocked IN ?', { idempotent: true });
const SELECT_ONE = cql('SELECT blocked_at FROM user_blocks WHERE login = ? AND blocked = ?', { idempotent: true });
const COUNT_OF = cql('SELECT COUNT(*) AS n FROM user_blocks WHERE login = ?', { idempotent: true });

const toBlock = (row: Row): Block => ({
  login: row.login as string,
  blocked: row.blocked as string,
  blockedAt: row.blocked_at as Date,
});

export class BlockStore {
  constructor(private readonly db: Database) {}

  /** False when that block existed already (its time is kept). */
  async addIfAbsent(block: Block): Promise<boolean> {
    const params = [block.login, block.blocked, block.blockedAt];
    const outcome = await this.db.lwt(INSERT_IF_ABSENT, params, async () => {
      const row = (await this.db.readSerial(SELECT_ONE, [block.login, block.blocked])) ?? undefined;
      // Ours if the stored time is the one we wrote.
      return { applied: (row?.blocked_at as Date | undefined)?.getTime() === block.blockedAt.getTime(), row };
    });
    return outcome.applied;
  }

  async has(login: string, blocked: string): Promise<boolean> {
    return (await this.db.first(SELECT_ONE, [login, blocked])) !== undefined;
  }

  async remove(login: string, blocked: string): Promise<void> {
    await this.db.execute(DELETE, [login, blocked]);
  }

  /** Who `login` blocked, in login order, `limit` at most. */
  async of(login: string, limit: number): Promise<Block[]> {
    const rs = await this.db.execute(SELECT_OF, [login, limit]);
    return rs.rows.map(toBlock);
  }

  async countOf(login: string): Promise<number> {
    return Number((await this.db.first(COUNT_OF, [login]))?.n ?? 0);
  }

  /** The blocks between two people, either way: one read of both partitions. */
  async between(a: string, b: string): Promise<Block[]> {
    const rs = await this.db.execute(SELECT_BETWEEN, [[a, b], [a, b]]);
    return rs.rows.map(toBlock);
  }
}
