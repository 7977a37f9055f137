/**
 * Storage of clientPurchaseId claims (purchase_client_ids): which purchase a
 * buyer's clientPurchaseId stands for. Every write is an LWT on the claim's
 * own partition, so attempts racing with one id agree on one purchase.
 */
import { cql, TimeUuid, type Database, type Row } from '../cassandra/client.js';

export interface PurchaseClaim {
  purchaseId: string;
  itemId: string;
  quantity: number;
}

const CLAIM = cql(
  `INSERT INTO purchase_client_ids (buyer, client_purchase_id, purchase_id, item_id, quantity)
   VALUES (?, ?, ?, ?, ?) IF NOT EXISTS USING TTL ?`,
  { idempotent: false },
);
const TAKE_OVER = cql(
  `UPDATE purchase_client_ids USING TTL ? SET purchase_id = ?, item_id = ?, quantity = ?
   WHERE buyer = ? AND client_purchase_id = ? IF purchase_id = ?`,
  { idempotent: false },
);
const RELEASE = cql('DELETE FROM purchase_client_ids WHERE buyer = ? AND client_purchase_id = ? IF purchase_id = ?', {
  idempotent: false,
});
const SELECT_CLAIM = cql('SELECT purchase_id, item_id, quantity FROM purchase_client_ids WHERE buyer = ? AND client_purchase_id = ?', {
  idempotent: true,
});

const toClaim = (row: Row): PurchaseClaim => ({
  purchaseId: row.purchase_id.toString(),
  itemId: row.item_id.toString(),
  quantity: row.quantity,
});

export class PurchaseClaimStore {
  constructor(private readonly db: Database) {}

  /**
   * Claims `clientId` for `proposal` unless a claim exists. Answers whether
   * this call claimed it and the claim that holds (the proposal, or the one
   * that was there first).
   */
  async claim(buyer: string, clientId: string, proposal: PurchaseClaim, ttlSeconds: number): Promise<{ claimed: boolean; claim: PurchaseClaim }> {
    const key = [buyer, clientId];
    const outcome = await this.db.lwt(
      CLAIM,
      [...key, TimeUuid.fromString(proposal.purchaseId), TimeUuid.fromString(proposal.itemId), proposal.quantity, ttlSeconds],
      async () => {
        const row = await this.db.readSerial(SELECT_CLAIM, key);
        return { applied: row?.purchase_id.toString() === proposal.purchaseId, row };
      },
    );
    if (outcome.applied) return { claimed: true, claim: proposal };
    // Not applied: the claim that won (returned by the LWT, or read back after a timeout).
    const row = outcome.row?.purchase_id ? outcome.row : await this.db.readSerial(SELECT_CLAIM, key);
    if (!row?.purchase_id) throw new Error('clientPurchaseId claim lost and not readable');
    return { claimed: false, claim: toClaim(row) };
  }

  /** The claim as it stands (a plain read: polled while another attempt finishes). */
  async read(buyer: string, clientId: string): Promise<PurchaseClaim | undefined> {
    const row = await this.db.first(SELECT_CLAIM, [buyer, clientId]);
    return row ? toClaim(row) : undefined;
  }

  /** Moves the claim from a purchase that can no longer bind to a new one; false when it no longer named `from`. */
  async takeOver(buyer: string, clientId: string, from: string, to: PurchaseClaim, ttlSeconds: number): Promise<boolean> {
    const key = [buyer, clientId];
    const outcome = await this.db.lwt(
      TAKE_OVER,
      [ttlSeconds, TimeUuid.fromString(to.purchaseId), TimeUuid.fromString(to.itemId), to.quantity, ...key, TimeUuid.fromString(from)],
      async () => {
        const row = await this.db.readSerial(SELECT_CLAIM, key);
        return { applied: row?.purchase_id.toString() === to.purchaseId };
      },
    );
    return outcome.applied;
  }

  /** Drops the claim if it still names `purchaseId` (whose purchase certainly never bound). */
  async release(buyer: string, clientId: string, purchaseId: string): Promise<void> {
    const key = [buyer, clientId];
    await this.db.lwt(RELEASE, [...key, TimeUuid.fromString(purchaseId)], async () => {
      const row = await this.db.readSerial(SELECT_CLAIM, key);
      return { applied: row?.purchase_id.toString() !== purchaseId };
    });
  }
}
