/**
 * Search within a room: the messages whose terms hold every term asked,
 * newest first. Each day partition is one query to the SAI index on
 * VALUES(terms) (cql/008), which Cassandra answers inside that partition; the
 * days come from the room's bucket table, at most a bounded number per page
 * (a rare term must not cost a read of every day the room ever had at once).
 */
import { cql, type Database } from '../../cassandra/client.js';
import { walkBucketsBounded, type BucketedSource } from '../../cassandra/bucket-walk.js';
import { minTimeUuid } from '../../../timeuuids.js';
import { lookAhead, pageOf, type Page } from '../../cassandra/page.js';
import { dayBucket } from '../../../buckets.js';
import { Limits } from '../../../limits.js';
import { MESSAGE_COLUMNS, toMessage, type MessageRecord } from './message-row.js';
import { listRoomBuckets } from './room-buckets.js';
import { MAX_BUCKET, type RoomIncarnation } from './room-messages.js';

const { search } = Limits.room;

/**
 * One prepared statement per number of terms (1 to maxQueryTerms), each
 * newest in a day (`range` without an upper bound) or below a message of it.
 * The floor (message_id >= the room's creation) keeps a re-created room from
 * finding an earlier room's messages of the same name.
 */
const searchStatements = (range: string) =>
  Array.from({ length: search.maxQueryTerms }, (_, i) =>
    cql(
      `SELECT ${MESSAGE_COLUMNS} FROM chat_room_messages
       WHERE room_name = ? AND time_bucket = ? AND ${range} AND ${Array(i + 1).fill('terms CONTAINS ?').join(' AND ')} LIMIT ?`,
      { idempotent: true },
    ),
  );
const SEARCH_NEWEST = searchStatements('message_id >= ?');
const SEARCH_OLDER_THAN = searchStatements('message_id < ? AND message_id >= ?');

export interface SearchPage extends Page<MessageRecord> {
  /**
   * Set when the page read its bound of days before it was full and older
   * days remain: the last day it read. The next page starts below it.
   */
  stoppedAfter: number | null;
}

export class MessageSearchStore {
  constructor(private readonly db: Database) {}

  /**
   * One page of the room's messages holding every one of `terms` (normalized
   * already), newest first, from `from` (exclusive). Rows `keep` refuses are
   * dropped and the walk reads on in their place. `from` without an id: below that whole day.
   */
  async page(
    room: RoomIncarnation,
    terms: readonly string[],
    from: { bucket: number; id: string | null } | null,
    size: number,
    keep: (message: MessageRecord) => boolean,
  ): Promise<SearchPage> {
    if (terms.length < 1 || terms.length > search.maxQueryTerms) throw new RangeError(`a search takes 1 to ${search.maxQueryTerms} terms`);
    const floor = minTimeUuid(room.createdAt);
    const source: BucketedSource<MessageRecord> = {
      buckets: (lo, hi, dir, limit) => listRoomBuckets(this.db, room.name, lo, hi, dir, limit),
      read: async (bucket, _dir, after, limit) => {
        const rs = after
          ? await this.db.execute(SEARCH_OLDER_THAN[terms.length - 1]!, [room.name, bucket, after, floor, ...terms, limit])
          : await this.db.execute(SEARCH_NEWEST[terms.length - 1]!, [room.name, bucket, floor, ...terms, limit]);
        return {
          rows: rs.rows.map(toMessage).filter((m): m is MessageRecord => m !== undefined && keep(m)),
          fetched: rs.rows.length,
          lastId: rs.rows.at(-1)?.message_id.toString() ?? null,
        };
      },
    };
    const walk = await walkBucketsBounded(source, {
      dir: 'older',
      from,
      lo: dayBucket(room.createdAt),
      hi: MAX_BUCKET,
      want: lookAhead(size),
      maxBuckets: search.bucketsPerPage,
      atOnce: search.bucketsAtOnce,
    });
    return { ...pageOf(walk.rows, size), stoppedAfter: walk.stoppedAfter };
  }
}
