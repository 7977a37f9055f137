/**
 * Each event once, across a publisher's reconnects to Redis.
 *
 * ioredis resends a command that was in flight when its connection dropped
 * (autoResendUnfulfilledCommands). Redis may have run that PUBLISH already,
 * and then every subscriber would hear the event twice. So each instance
 * stamps what it publishes with its own id and a number, counted across all
 * its channels in the order it sends them, and a subscriber drops an event
 * whose number it has heard from that instance already.
 *
 * Only repeats are dropped, never an event heard late: ioredis can send a
 * resent command after commands it queued later (when the new connection
 * fails while it resends), and an event that comes out of order still comes.
 *
 * The stamp is two fields added to the event, not a wrapper around it, and is
 * taken off again on arrival: an instance of a version before stamps ignores
 * fields it does not know, and an unstamped event from it is taken as it is,
 * so instances of both versions can run side by side during an upgrade.
 */
import { randomBytes } from 'node:crypto';

const PUBLISHER = '_publisher';
const SEQ = '_seq';

type Stamped = Record<string, unknown> & { [PUBLISHER]: string; [SEQ]: number };

/** One instance's stamp: its id, made at start, and the number of its next event. */
export class EventStamp {
  readonly publisher = randomBytes(9).toString('base64url');
  private seq = 0;

  /**
   * The event with this instance's stamp (a copy: the caller's object is left
   * alone). To be called when the event is sent, not when it is made: numbers
   * follow the order of the wire. Anything but an object goes unstamped.
   */
  stamp(event: unknown): unknown {
    if (typeof event !== 'object' || event === null || Array.isArray(event)) return event;
    return { ...event, [PUBLISHER]: this.publisher, [SEQ]: ++this.seq };
  }
}

/**
 * Numbers remembered per publisher: how far back a repeat is recognised. A
 * resend repeats what was in flight at a drop, at most the publisher's
 * unanswered commands; an older number is taken as new (a repeat then beats a loss).
 */
const WINDOW = 1 << 16;
/** Publishers remembered; past it the one heard least recently is forgotten (instances restart with new ids). */
const PUBLISHERS_KEPT = 64;

/** The numbers heard from one publisher: the highest, and which of the WINDOW below it. */
class HeardWindow {
  private highest = 0;
  private readonly bits = new Uint32Array(WINDOW / 32);

  /** True the first time `seq` is heard (within the window), false for a repeat. */
  hear(seq: number): boolean {
    if (seq > this.highest) {
      this.clear(this.highest + 1, seq);
      this.highest = seq;
    } else if (this.highest - seq >= WINDOW) {
      return true;
    } else if (this.isSet(seq)) {
      return false;
    }
    this.set(seq);
    return true;
  }

  /** Forgets the numbers from..to (the window's slots are reused as it moves up). */
  private clear(from: number, to: number): void {
    if (to - from + 1 >= WINDOW) {
      this.bits.fill(0);
      return;
    }
    let n = from;
    while (n <= to) {
      const word = (n % WINDOW) >>> 5;
      // Whole words at once: a listener of a quiet channel hears a busy publisher's numbers with wide gaps.
      if ((n & 31) === 0 && to - n >= 31) {
        this.bits[word] = 0;
        n += 32;
      } else {
        this.bits[word]! &= ~(1 << (n & 31));
        n += 1;
      }
    }
  }

  private isSet(seq: number): boolean {
    return (this.bits[(seq % WINDOW) >>> 5]! & (1 << (seq & 31))) !== 0;
  }

  private set(seq: number): void {
    this.bits[(seq % WINDOW) >>> 5]! |= 1 << (seq & 31);
  }
}

/** What this instance has heard from each publisher, across all the channels it listens to. */
export class HeardEvents {
  private readonly byPublisher = new Map<string, HeardWindow>();

  /**
   * The event an arrival carries, its stamp taken off, or DUPLICATE when it
   * repeats one heard already. An arrival without a stamp is an event as it is.
   */
  open(arrival: unknown): unknown {
    if (!isStamped(arrival)) return arrival;
    const { [PUBLISHER]: publisher, [SEQ]: seq, ...event } = arrival;
    let heard = this.byPublisher.get(publisher);
    if (heard) {
      // Deleted and set again, so the Map's first key is the publisher heard least recently.
      this.byPublisher.delete(publisher);
    } else {
      heard = new HeardWindow();
      if (this.byPublisher.size >= PUBLISHERS_KEPT) this.byPublisher.delete(this.byPublisher.keys().next().value!);
    }
    this.byPublisher.set(publisher, heard);
    return heard.hear(seq) ? event : DUPLICATE;
  }
}

export const DUPLICATE: unique symbol = Symbol('a resent event heard already');

function isStamped(arrival: unknown): arrival is Stamped {
  if (typeof arrival !== 'object' || arrival === null) return false;
  const stamped = arrival as Partial<Stamped>;
  return typeof stamped[PUBLISHER] === 'string' && Number.isSafeInteger(stamped[SEQ]);
}
