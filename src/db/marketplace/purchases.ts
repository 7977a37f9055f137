/**
 * Storage of purchases: the purchases table, each buyer's history, each
 * item's completed purchases and the pending_purchases index that crash
 * recovery reads. One prepared statement
 * per query.
 */
import type cassandra from 'cassandra-driver';
import { cql, Long, TimeUuid, type BigDecimal, type Database, type Row } from '../cassandra/client.js';
import { hourBucket } from '../../buckets.js';
import { Limits } from '../../limits.js';
import { lookAhead, pageOf, type Page } from '../cassandra/page.js';

/** An unbound purchase (and its pending entry) disappears after a day. */
export const PURCHASE_TTL_SECONDS = 24 * 3600;

export type PurchaseStatus = 'CREATED' | 'COMPLETED';

export interface PurchaseRecord {
  id: string;
  itemId: string;
  buyer: string;
  seller: string;
  unitPrice: BigDecimal;
  quantity: number;
  status: PurchaseStatus;
  createdAt: Date;
}

/** A purchase as stored, with the write timestamp (µs) of its CREATED row. */
export interface StoredPurchase extends PurchaseRecord {
  writtenAt: cassandra.types.Long;
}

const COLUMNS = 'id, item_id, buyer, seller, unit_price, quantity, status, created_at';

// Explicit timestamps: the COMPLETED rewrite must win over the CREATED row even
// when another instance, whose clock may lag, completes it.
const INSERT_CREATED = cql(`INSERT INTO purchases (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?`, {
  idempotent: true,
});
const INSERT_PENDING = cql(
  'INSERT INTO pending_purchases (hour, purchase_id, item_id) VALUES (?, ?, ?) USING TTL ? AND TIMESTAMP ?',
  { idempotent: true },
);
// Every column, no TTL: an INSERT leaves the TTL on any column it does not rewrite.
const INSERT_COMPLETED = cql(`INSERT INTO purchases (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?`, {
  idempotent: true,
});
const INSERT_BY_BUYER = cql(
  `INSERT INTO purchases_by_buyer (buyer, purchase_id, item_id, seller, unit_price, quantity, status, created_at)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?`,
  { idempotent: true },
);
const INSERT_BY_ITEM = cql(
  `INSERT INTO purchases_by_item (item_id, purchase_id, buyer, unit_price, quantity, created_at)
   VALUES (?, ?, ?, ?, ?, ?) USING TIMESTAMP ?`,
  { idempotent: true },
);
const DELETE_PENDING = cql('DELETE FROM pending_purchases USING TIMESTAMP ? WHERE hour = ? AND purchase_id = ?', {
  idempotent: true,
});

const SELECT_ONE = cql(`SELECT ${COLUMNS}, WRITETIME(status) AS written_at FROM purchases WHERE id = ?`, { idempotent: true });
const SELECT_MANY = cql(`SELECT ${COLUMNS}, WRITETIME(status) AS written_at FROM purchases WHERE id IN ?`, {
  idempotent: true,
});
const BY_BUYER_FIRST = cql(
  'SELECT purchase_id, item_id, buyer, seller, unit_price, quantity, status, created_at FROM purchases_by_buyer WHERE buyer = ? LIMIT ?',
  { idempotent: true },
);
const BY_BUYER_AFTER = cql(
  'SELECT purchase_id, item_id, buyer, seller, unit_price, quantity, status, created_at FROM purchases_by_buyer WHERE buyer = ? AND purchase_id < ? LIMIT ?',
  { idempotent: true },
);
const BY_ITEM_FIRST = cql(
  'SELECT purchase_id, buyer, unit_price, quantity, created_at FROM purchases_by_item WHERE item_id = ? LIMIT ?',
  { idempotent: true },
);
const BY_ITEM_AFTER = cql(
  'SELECT purchase_id, buyer, unit_price, quantity, created_at FROM purchases_by_item WHERE item_id = ? AND purchase_id < ? LIMIT ?',
  { idempotent: true },
);
const SELECT_PENDING = cql('SELECT purchase_id, item_id FROM pending_purchases WHERE hour = ?', { idempotent: true });

function toPurchase(row: Row): PurchaseRecord {
  return {
    id: (row.purchase_id ?? row.id).toString(),
    itemId: row.item_id.toString(),
    buyer: row.buyer,
    seller: row.seller,
    unitPrice: row.unit_price,
    quantity: row.quantity,
    status: row.status as PurchaseStatus,
    createdAt: row.created_at,
  };
}

const toStored = (row: Row): StoredPurchase => ({ ...toPurchase(row), writtenAt: row.written_at });

const nowMicros = () => Long.fromNumber(Date.now() * 1000);

/** The hour partition of pending_purchases a purchase is indexed under. */
const pendingHour = (p: PurchaseRecord) => hourBucket(p.createdAt);

export class PurchaseStore {
  constructor(private readonly db: Database) {}

  /** Step 2: the purchase (CREATED, 24-hour TTL) and its pending entry, in one logged batch. */
  async create(p: PurchaseRecord): Promise<StoredPurchase> {
    const writtenAt = nowMicros();
    const id = TimeUuid.fromString(p.id);
    await this.db.batch([
      {
        stmt: INSERT_CREATED,
        params: [id, TimeUuid.fromString(p.itemId), p.buyer, p.seller, p.unitPrice, p.quantity, 'CREATED', p.createdAt, PURCHASE_TTL_SECONDS, writtenAt],
      },
      { stmt: INSERT_PENDING, params: [pendingHour(p), id, TimeUuid.fromString(p.itemId), PURCHASE_TTL_SECONDS, writtenAt] },
    ]);
    return { ...p, status: 'CREATED', writtenAt };
  }

  /**
   * Step 4a: the purchase made permanent (every column rewritten without TTL)
   * and added to the buyer's history and the item's purchases, in one logged
   * batch. Idempotent.
   */
  async complete(p: StoredPurchase): Promise<PurchaseRecord> {
    const ts = laterOf(nowMicros(), p.writtenAt.add(1));
    const id = TimeUuid.fromString(p.id);
    const itemId = TimeUuid.fromString(p.itemId);
    await this.db.batch([
      { stmt: INSERT_COMPLETED, params: [id, itemId, p.buyer, p.seller, p.unitPrice, p.quantity, 'COMPLETED', p.createdAt, ts] },
      { stmt: INSERT_BY_BUYER, params: [p.buyer, id, itemId, p.seller, p.unitPrice, p.quantity, 'COMPLETED', p.createdAt, ts] },
      { stmt: INSERT_BY_ITEM, params: [itemId, id, p.buyer, p.unitPrice, p.quantity, p.createdAt, ts] },
    ]);
    return { ...toPlain(p), status: 'COMPLETED' };
  }

  /** Step 4c, last: nothing is left for recovery to do. */
  async clearPending(p: StoredPurchase): Promise<void> {
    const ts = laterOf(nowMicros(), p.writtenAt.add(1));
    await this.db.execute(DELETE_PENDING, [ts, pendingHour(p), TimeUuid.fromString(p.id)]);
  }

  /** Recovery: forgets the pending entry of a purchase that will never bind (its CREATED row expires by itself). */
  async dropPending(hour: number, purchaseId: string): Promise<void> {
    await this.db.execute(DELETE_PENDING, [nowMicros(), hour, TimeUuid.fromString(purchaseId)]);
  }

  async byId(id: string): Promise<StoredPurchase | undefined> {
    const row = await this.db.first(SELECT_ONE, [TimeUuid.fromString(id)]);
    return row ? toStored(row) : undefined;
  }

  async byIds(ids: readonly string[]): Promise<StoredPurchase[]> {
    if (ids.length === 0) return [];
    const rs = await this.db.execute(SELECT_MANY, [[...new Set(ids)].map((id) => TimeUuid.fromString(id))]);
    return rs.rows.map(toStored);
  }

  async byBuyer(buyer: string, limit: number, beforeId?: string): Promise<Page<PurchaseRecord>> {
    const rs = beforeId
      ? await this.db.execute(BY_BUYER_AFTER, [buyer, TimeUuid.fromString(beforeId), lookAhead(limit)])
      : await this.db.execute(BY_BUYER_FIRST, [buyer, lookAhead(limit)]);
    return pageOf(rs.rows.map(toPurchase), limit);
  }

  /** An item's completed purchases, newest first (the seller and the status are implied by the partition). */
  async byItem(item: { id: string; seller: string }, limit: number, beforeId?: string): Promise<Page<PurchaseRecord>> {
    const itemId = TimeUuid.fromString(item.id);
    const rs = beforeId
      ? await this.db.execute(BY_ITEM_AFTER, [itemId, TimeUuid.fromString(beforeId), lookAhead(limit)])
      : await this.db.execute(BY_ITEM_FIRST, [itemId, lookAhead(limit)]);
    const rows = rs.rows.map((row): PurchaseRecord => ({
      id: row.purchase_id.toString(),
      itemId: item.id,
      buyer: row.buyer,
      seller: item.seller,
      unitPrice: row.unit_price,
      quantity: row.quantity,
      status: 'COMPLETED',
      createdAt: row.created_at,
    }));
    return pageOf(rows, limit);
  }

  /** The purchases not yet completed that were created in one UTC hour. */
  async pendingInHour(hour: number): Promise<Array<{ purchaseId: string; itemId: string }>> {
    const out: Array<{ purchaseId: string; itemId: string }> = [];
    let pageState: string | undefined;
    do {
      const rs = await this.db.execute(SELECT_PENDING, [hour], { fetchSize: Limits.purchase.pendingFetchSize, pageState });
      for (const r of rs.rows) out.push({ purchaseId: r.purchase_id.toString(), itemId: r.item_id.toString() });
      pageState = rs.pageState ?? undefined;
    } while (pageState);
    return out;
  }
}

function laterOf(a: cassandra.types.Long, b: cassandra.types.Long): cassandra.types.Long {
  return a.greaterThan(b) ? a : b;
}

function toPlain(p: StoredPurchase): PurchaseRecord {
  const { writtenAt: _writtenAt, ...rest } = p;
  return rest;
}
