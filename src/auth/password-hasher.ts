/**
 * Every password hash of the process (login, sign-up, the decoy) passes one
 * gate. scrypt at the default cost takes a core for ~0.1–0.3 s and 16 MiB; on
 * libuv's pool, four at once, a burst of logins on a 2-core machine took every
 * core from every other request (the history page fell to a quarter of its
 * rate beside 4 logging-in connections: bench/results/requests.md). With the
 * gate, hashes queue for a bounded number of slots and the rest of the API
 * keeps its cores; past the queue's bound a login is refused with RATE_LIMITED
 * and a retryAfter, not left waiting longer than a client would.
 */
import { AppError, ErrorCode, RateLimitReason } from '../errors.js';
import { hashPassword, verifyPassword, type ScryptParams } from './passwords.js';
import type { ScryptThreads } from './scrypt-threads.js';

/** The gate's refusal: a class of its own, so that a result can be known to be it (src/server/http/load-shedding.ts). */
export class PasswordsBusy extends AppError {
  constructor() {
    super(ErrorCode.RATE_LIMITED, 'Too many logins and sign-ups at once; retry in 1 s', { reason: RateLimitReason.SERVER_BUSY, retryAfter: 1 });
  }
}

/** The gate's bounds (src/config.ts, PASSWORD_HASH_*). */
export interface HashingGate {
  /** Hashes computed at once. */
  concurrency: number;
  /** Hashes that may wait for a slot. */
  queue: number;
  /** How long one may wait before it is refused as if the queue had been full. */
  maxWaitMs: number;
}

export class PasswordHasher {
  private running = 0;
  /** Each waiting hash's hand-over: called with the slot of a hash that finished. */
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly params: ScryptParams,
    private readonly gate: HashingGate,
    /** Where keys are derived, at a lower priority than requests. */
    private readonly threads: ScryptThreads,
  ) {}

  /** Ends the hashing threads (the app's stop). */
  close(): Promise<void> {
    return this.threads.close();
  }

  hash(password: string): Promise<string> {
    return this.gated(() => hashPassword(password, this.params, this.threads.derive));
  }

  verify(password: string, stored: string): Promise<boolean> {
    return this.gated(() => verifyPassword(password, stored, this.threads.derive));
  }

  /**
   * Refuses now, as a hash would be refused, while every slot and place in
   * the queue is taken: a login storm's overflow is then refused before the
   * account is read, not after (a read of Cassandra per refusal).
   */
  requireRoom(): void {
    if (!this.hasRoom()) throw new PasswordsBusy();
  }

  /** Whether a hash asked for now would run or wait, not be refused. */
  hasRoom(): boolean {
    return this.running < this.gate.concurrency || this.waiting.length < this.gate.queue;
  }

  private async gated<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.gate.concurrency) {
      this.running++;
    } else {
      if (this.waiting.length >= this.gate.queue) throw new PasswordsBusy();
      // The slot is handed over by the hash that finishes (below), so `running` stays as it is.
      await this.slotHandedOver();
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /**
   * Waits for a finishing hash's slot, at most maxWaitMs: under load the hashing threads (niced) may serve a
   * login a second or less, and a login at the back of the queue would wait longer than its client. It is
   * refused then as when the queue is full, with a retryAfter, and leaves the queue.
   */
  private slotHandedOver(): Promise<void> {
    return new Promise((resolve, reject) => {
      const handOver = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        // Still queued: a hand-over clears this timer as it takes the waiter out.
        const at = this.waiting.indexOf(handOver);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new PasswordsBusy());
      }, this.gate.maxWaitMs);
      this.waiting.push(handOver);
    });
  }
}
