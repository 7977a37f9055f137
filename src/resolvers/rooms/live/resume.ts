/**
 * Resuming a room's live feed from a cursor: every message posted after it,
 * read from storage, then the live events, with nothing missed or repeated at
 * the seam.
 *
 * The live stream is subscribed before storage is read: a message committed
 * before the read is in the replay, one committed after it is published to the
 * stream, and one committed in between may be in both, so a live
 * MessagePosted whose message the replay already gave is dropped. While the
 * replay runs, live events wait in the stream's own bounded buffer.
 */
import type { RoomRecord } from '../../../db/rooms/rooms.js';
import type { HistoryPosition } from '../../../pagination.js';
import type { Clock } from '../../../clock.js';
import type { Stores } from '../../../db/stores.js';
import { Limits } from '../../../limits.js';
import type { FeedItem } from './feed.js';
import { isDirectlyTakeable, TAKE_DIRECTLY, type DirectConsumer, type DirectlyTakeable } from '../../../pubsub/pubsub.js';

export class ReplayThenLive implements AsyncIterableIterator<FeedItem>, DirectlyTakeable<FeedItem> {
  /** Messages the replay gave, so the live stream does not give them again. */
  private readonly replayed = new Set<string>();
  private pending: FeedItem[] = [];
  private replaying = true;

  constructor(
    private readonly services: { stores: Stores; clock: Clock },
    private readonly room: RoomRecord,
    private from: HistoryPosition,
    private readonly live: AsyncIterableIterator<FeedItem>,
  ) {}

  [Symbol.asyncIterator]() {
    return this;
  }

  /**
   * Live items may go to a direct consumer once the replay is over: the live
   * stream hands one over only while this reads it with nothing queued, and
   * a message the replay gave is dropped there as next() drops it.
   */
  [TAKE_DIRECTLY](consumer: DirectConsumer<FeedItem> | undefined): boolean {
    if (!isDirectlyTakeable<FeedItem>(this.live)) return false;
    return this.live[TAKE_DIRECTLY](consumer && { take: (item) => this.seenInReplay(item) || consumer.take(item) });
  }

  async next(): Promise<IteratorResult<FeedItem>> {
    while (this.replaying && this.pending.length === 0) await this.readMore();
    const replayed = this.pending.shift();
    if (replayed) return { value: replayed, done: false };
    for (;;) {
      const item = await this.live.next();
      if (item.done || !this.seenInReplay(item.value)) return item;
    }
  }

  /** A live MessagePosted the replay gave already (forgotten now: past this point no other copy can come). */
  private seenInReplay(item: FeedItem): boolean {
    if (item.kind !== 'MessagePosted' || !this.replayed.delete(item.message.messageId)) return false;
    return true;
  }

  /** The next page of messages after the cursor, oldest first, up to now (and the clock skew other instances may have). */
  private async readMore(): Promise<void> {
    const { stores, clock } = this.services;
    const readUpTo = new Date(clock.now().getTime() + Limits.room.clockSkewMs);
    const page = await stores.roomMessages.page(this.room, 'newer', this.from, Limits.room.resumePage, readUpTo);
    for (const message of page.rows) {
      this.replayed.add(message.messageId);
      this.pending.push({ kind: 'MessagePosted', roomName: this.room.name, message });
    }
    const last = page.rows.at(-1);
    if (last) this.from = { bucket: last.bucket, id: last.messageId };
    if (!page.more) this.replaying = false;
  }

  return(value?: unknown): Promise<IteratorResult<FeedItem>> {
    this.replaying = false;
    this.pending = [];
    return this.live.return ? this.live.return(value) : Promise.resolve({ value: undefined, done: true });
  }

  throw(err?: unknown): Promise<IteratorResult<FeedItem>> {
    this.replaying = false;
    this.pending = [];
    return this.live.throw ? this.live.throw(err) : Promise.reject(err);
  }
}
