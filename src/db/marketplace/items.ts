/**
 * Storage of marketplace items: the master items table and its listings
 * (items_by_seller, seller_item_history, items_by_tag). One prepared statement
 * per query. This instance's binds on one item run one at a time (OneAtATime),
 * each from the lowest stock the instance has learned: a burst of buyers
 * contends in the process rather than in Paxos.
 */
import cassandra from 'cassandra-driver';
import { setTimeout as delay } from 'node:timers/promises';
import { cql, isUnknownOutcome, Long, TimeUuid, type BigDecimal, type Database, type LwtOutcome, type Row } from '../cassandra/client.js';
import { timeUuidDate } from '../../timeuuids.js';
import { monthBucket } from '../../buckets.js';
import { lookAhead, pageOf, type Page } from '../cassandra/page.js';
import { OneAtATime } from '../cassandra/one-at-a-time.js';

/** Listings by seller and by tag keep an item for 30 days; the seller history keeps it for good. */
export const LISTING_TTL_SECONDS = 30 * 24 * 3600;

/** What every listing row carries: enough to show an item in a list. */
export interface ItemSummary {
  id: string;
  seller: string;
  name: string;
  unitPrice: BigDecimal;
  offeredUnits: number;
  availableUnits: number;
  startDate: Date;
  endDate: Date;
  tags: string[];
  /** Sold out (the stored flag; whether the sale period is over is decided by the clock). */
  auctionFinished: boolean;
}

/** The master row (without the purchases map, which is read only where needed). */
export interface ItemRecord extends ItemSummary {
  description: string;
  /** Write timestamp (µs) of the listings; refreshes write at listingTs + units sold. */
  listingTs: cassandra.types.Long;
}

const MASTER_COLUMNS =
  'id, seller, name, description, unit_price, offered_units, available_units, start_date, end_date, tags, auction_finished, listing_ts';
const LISTING_COLUMNS =
  'item_id, seller, name, unit_price, offered_units, available_units, start_date, end_date, tags, auction_finished';

const INSERT_ITEM = cql(
  `INSERT INTO items (${MASTER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  { idempotent: true },
);
const INSERT_BY_SELLER = cql(
  `INSERT INTO items_by_seller (${LISTING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?`,
  { idempotent: true },
);
const INSERT_HISTORY = cql(
  `INSERT INTO seller_item_history (year_month, ${LISTING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?`,
  { idempotent: true },
);
const INSERT_BY_TAG = cql(
  `INSERT INTO items_by_tag (tag, ${LISTING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?`,
  { idempotent: true },
);

const SELECT_ITEM = cql(`SELECT ${MASTER_COLUMNS} FROM items WHERE id = ?`, { idempotent: true });
const SELECT_ITEMS = cql(`SELECT ${MASTER_COLUMNS} FROM items WHERE id IN ?`, { idempotent: true });
/** One element of the map, not the whole map (which grows with every purchase). */
const SELECT_BOUND = cql('SELECT available_units, purchases[?] AS quantity FROM items WHERE id = ?', { idempotent: true });

// The bind: row-level isolation makes the stock change and the purchase link one atomic step.
const BIND = cql(
  `UPDATE items SET available_units = ?, auction_finished = ?, purchases[?] = ? WHERE id = ? IF available_units = ?`,
  { idempotent: false },
);

const BY_SELLER_FIRST = cql(`SELECT ${LISTING_COLUMNS} FROM items_by_seller WHERE seller = ? LIMIT ?`, { idempotent: true });
const BY_SELLER_AFTER = cql(`SELECT ${LISTING_COLUMNS} FROM items_by_seller WHERE seller = ? AND item_id < ? LIMIT ?`, {
  idempotent: true,
});
const BY_TAG_FIRST = cql(`SELECT ${LISTING_COLUMNS} FROM items_by_tag WHERE tag = ? LIMIT ?`, { idempotent: true });
const BY_TAG_AFTER = cql(`SELECT ${LISTING_COLUMNS} FROM items_by_tag WHERE tag = ? AND item_id < ? LIMIT ?`, {
  idempotent: true,
});
const HISTORY_FIRST = cql(`SELECT ${LISTING_COLUMNS} FROM seller_item_history WHERE seller = ? AND year_month = ? LIMIT ?`, {
  idempotent: true,
});
const HISTORY_AFTER = cql(
  `SELECT ${LISTING_COLUMNS} FROM seller_item_history WHERE seller = ? AND year_month = ? AND item_id < ? LIMIT ?`,
  { idempotent: true },
);

// Refreshing a listing keeps its TTL: read what is left, write with exactly that.
const SELLER_LISTING_TTL = cql('SELECT TTL(available_units) AS ttl FROM items_by_seller WHERE seller = ? AND item_id = ?', {
  idempotent: true,
});
const TAG_LISTING_TTL = cql('SELECT TTL(available_units) AS ttl FROM items_by_tag WHERE tag = ? AND item_id = ?', {
  idempotent: true,
});
const UPDATE_SELLER_LISTING = cql(
  'UPDATE items_by_seller USING TTL ? AND TIMESTAMP ? SET available_units = ?, auction_finished = ? WHERE seller = ? AND item_id = ?',
  { idempotent: true },
);
const UPDATE_TAG_LISTING = cql(
  'UPDATE items_by_tag USING TTL ? AND TIMESTAMP ? SET available_units = ?, auction_finished = ? WHERE tag = ? AND item_id = ?',
  { idempotent: true },
);
const UPDATE_HISTORY = cql(
  'UPDATE seller_item_history USING TIMESTAMP ? SET available_units = ?, auction_finished = ? WHERE seller = ? AND year_month = ? AND item_id = ?',
  { idempotent: true },
);

function toSummary(row: Row): ItemSummary {
  return {
    id: (row.item_id ?? row.id).toString(),
    seller: row.seller,
    name: row.name,
    unitPrice: row.unit_price,
    offeredUnits: row.offered_units,
    availableUnits: row.available_units,
    startDate: row.start_date,
    endDate: row.end_date,
    tags: [...((row.tags as Set<string> | null) ?? [])].sort(),
    auctionFinished: Boolean(row.auction_finished),
  };
}

function toItem(row: Row): ItemRecord {
  return { ...toSummary(row), description: row.description ?? '', listingTs: row.listing_ts };
}

/** The UTC month of an item's creation, from its timeuuid: the seller history partition. */
export const itemMonth = (id: string) => monthBucket(timeUuidDate(id));

/** The listing write timestamp that reflects `sold` units sold: later sales always win. */
const listingTimestamp = (item: ItemRecord) => item.listingTs.add(item.offeredUnits - item.availableUnits);

const SERIAL_READ_ATTEMPTS = 5;

/** Items whose learned stock an instance keeps (a few numbers each): the hot ones are those bound last. */
const LEARNED_STOCK_ITEMS = 1000;

function isTimeout(err: unknown): boolean {
  const { errors, types } = cassandra;
  return isUnknownOutcome(err) || (err instanceof errors.ResponseError && err.code === types.responseErrorCodes.readTimeout);
}

export class ItemStore {
  /** Binds of this instance, one at a time per item (the partition). */
  private readonly binds = new OneAtATime();
  /**
   * The lowest stock this instance has learned of each item it bound last (at most LEARNED_STOCK_ITEMS, the
   * oldest dropped). Stock only falls, so the lowest value seen is the latest, and never below the stock as it is.
   */
  private readonly learnedStock = new Map<string, number>();

  constructor(private readonly db: Database) {}

  /** The master row and every listing, in one logged batch: all appear or, after a timeout, eventually all do. */
  async create(item: Omit<ItemRecord, 'listingTs'>): Promise<ItemRecord> {
    // Wall-clock microseconds (not the injectable Clock): write timestamps must order with real writes.
    const listingTs = Long.fromNumber(Date.now() * 1000);
    const full: ItemRecord = { ...item, listingTs };
    const id = TimeUuid.fromString(item.id);
    const tags = new Set(item.tags);
    const listing = [
      id,
      item.seller,
      item.name,
      item.unitPrice,
      item.offeredUnits,
      item.availableUnits,
      item.startDate,
      item.endDate,
      tags,
      item.auctionFinished,
    ];
    await this.db.batch([
      // The master row holds the listing's columns plus the description (4th column).
      { stmt: INSERT_ITEM, params: [...listing.slice(0, 3), item.description, ...listing.slice(3), listingTs] },
      { stmt: INSERT_BY_SELLER, params: [...listing, LISTING_TTL_SECONDS, listingTs] },
      { stmt: INSERT_HISTORY, params: [itemMonth(item.id), ...listing, listingTs] },
      ...item.tags.map((tag) => ({ stmt: INSERT_BY_TAG, params: [tag, ...listing, LISTING_TTL_SECONDS, listingTs] })),
    ]);
    return full;
  }

  async byId(id: string): Promise<ItemRecord | undefined> {
    const row = await this.db.first(SELECT_ITEM, [TimeUuid.fromString(id)]);
    return row ? toItem(row) : undefined;
  }

  /** Batch lookup for the DataLoader: one multi-partition read. */
  async byIds(ids: readonly string[]): Promise<ItemRecord[]> {
    if (ids.length === 0) return [];
    const rs = await this.db.execute(SELECT_ITEMS, [[...new Set(ids)].map((id) => TimeUuid.fromString(id))]);
    return rs.rows.map(toItem);
  }

  /**
   * Binds a purchase to the item if the stock is still what the caller read
   * (or what this instance's binds before it left, when lower). When the
   * outcome is unknown (timeout), a SERIAL read decides: the purchase is bound
   * exactly when its id is in the purchases map. Not applied: availableUnits
   * is the stock as it is now (null: no item).
   */
  async bind(
    itemId: string,
    purchaseId: string,
    quantity: number,
    availableBefore: number,
  ): Promise<{ applied: boolean; availableUnits: number | null }> {
    return this.binds.run(itemId, async () => {
      // A bind queued behind others of this instance starts from the stock they left, not the one its caller read:
      // it then loses only to binds of other instances made since.
      const from = Math.min(availableBefore, this.learnedStock.get(itemId) ?? availableBefore);
      // Too few left: answered as the LWT would, without sending it.
      if (from < quantity) return { applied: false, availableUnits: from };
      const outcome = await this.bindAt(itemId, purchaseId, quantity, from);
      const learned = outcome.applied ? from - quantity : outcome.availableUnits;
      if (learned !== null) this.learn(itemId, learned);
      return outcome;
    });
  }

  private learn(itemId: string, stock: number): void {
    const known = this.learnedStock.get(itemId);
    // Deleted and set again: the Map's order is then the order items were last bound in.
    this.learnedStock.delete(itemId);
    this.learnedStock.set(itemId, Math.min(stock, known ?? stock));
    if (this.learnedStock.size > LEARNED_STOCK_ITEMS) this.learnedStock.delete(this.learnedStock.keys().next().value!);
  }

  private async bindAt(
    itemId: string,
    purchaseId: string,
    quantity: number,
    availableBefore: number,
  ): Promise<{ applied: boolean; availableUnits: number | null }> {
    const after = availableBefore - quantity;
    const params = [after, after === 0, TimeUuid.fromString(purchaseId), quantity, TimeUuid.fromString(itemId), availableBefore];
    const outcome: LwtOutcome = await this.db.lwt(BIND, params, async () => {
      const bound = await this.readBoundSerial(itemId, purchaseId);
      // Shaped like the LWT's own answer: applied, and the stock as it is now.
      return { applied: bound.quantity !== null, row: { available_units: bound.availableUnits } as unknown as Row };
    });
    // When not applied, Cassandra returns the current value of the condition column.
    const available = outcome.row?.available_units;
    return { applied: outcome.applied, availableUnits: typeof available === 'number' ? available : null };
  }

  /**
   * At SERIAL: completes any bind in flight on the item, so the answer is final.
   * quantity is null when the purchase is not bound. A read is safe to repeat,
   * and under contention a SERIAL read can time out: it is tried a few times.
   */
  async readBoundSerial(itemId: string, purchaseId: string): Promise<{ availableUnits: number | null; quantity: number | null }> {
    const params = [TimeUuid.fromString(purchaseId), TimeUuid.fromString(itemId)];
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await this.db.readSerial(SELECT_BOUND, params);
        return { availableUnits: row?.available_units ?? null, quantity: row?.quantity ?? null };
      } catch (err) {
        if (attempt >= SERIAL_READ_ATTEMPTS || !isTimeout(err)) throw err;
        await delay(Math.random() * 50 * attempt);
      }
    }
  }

  async bySeller(seller: string, limit: number, beforeId?: string): Promise<Page<ItemSummary>> {
    const rs = beforeId
      ? await this.db.execute(BY_SELLER_AFTER, [seller, TimeUuid.fromString(beforeId), lookAhead(limit)])
      : await this.db.execute(BY_SELLER_FIRST, [seller, lookAhead(limit)]);
    return pageOf(rs.rows.map(toSummary), limit);
  }

  async byTag(tag: string, limit: number, beforeId?: string): Promise<Page<ItemSummary>> {
    const rs = beforeId
      ? await this.db.execute(BY_TAG_AFTER, [tag, TimeUuid.fromString(beforeId), lookAhead(limit)])
      : await this.db.execute(BY_TAG_FIRST, [tag, lookAhead(limit)]);
    return pageOf(rs.rows.map(toSummary), limit);
  }

  async history(seller: string, yearMonth: number, limit: number, beforeId?: string): Promise<Page<ItemSummary>> {
    const rs = beforeId
      ? await this.db.execute(HISTORY_AFTER, [seller, yearMonth, TimeUuid.fromString(beforeId), lookAhead(limit)])
      : await this.db.execute(HISTORY_FIRST, [seller, yearMonth, lookAhead(limit)]);
    return pageOf(rs.rows.map(toSummary), limit);
  }

  /**
   * Writes the item's current stock into its listings. The seller and tag
   * listings keep the TTL they have left (a listing that has expired is not
   * brought back); the history has none. Every write carries the timestamp of
   * the number of units sold, so concurrent refreshes converge on the latest.
   */
  async refreshListings(item: ItemRecord): Promise<void> {
    const id = TimeUuid.fromString(item.id);
    const ts = listingTimestamp(item);
    const values = [item.availableUnits, item.auctionFinished];
    const refresh = async (ttlStmt: typeof SELLER_LISTING_TTL, updateStmt: typeof UPDATE_SELLER_LISTING, key: string) => {
      const ttl = (await this.db.first(ttlStmt, [key, id]))?.ttl as number | null | undefined;
      // TTL 0 would mean "no TTL": a listing with nothing left is gone, leave it gone.
      if (!ttl) return;
      await this.db.execute(updateStmt, [ttl, ts, ...values, key, id]);
    };
    await Promise.all([
      refresh(SELLER_LISTING_TTL, UPDATE_SELLER_LISTING, item.seller),
      ...item.tags.map((tag) => refresh(TAG_LISTING_TTL, UPDATE_TAG_LISTING, tag)),
      this.db.execute(UPDATE_HISTORY, [ts, ...values, item.seller, itemMonth(item.id), id]),
    ]);
  }
}

