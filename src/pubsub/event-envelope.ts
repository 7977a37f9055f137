/**
 * Each event once, across a publisher's reconnects to Redis.
 *
 * ioredis resends a command that was in flight when its connection dropped
 * (autoResendUnfulfilledCommands). Redis may have run that PUBLISH already,
 * and then every subscriber would hear the event twice. So each instance
 * stamps what it publishes with its own id and a number, counted in the order
 * it sends them, and a subscriber drops an event whose number is not above the
 * last it heard from that instance on that channel. Redis runs one
 * connection's commands in order and ioredis resends before anything queued
 * after (RedisBackedPubSub keeps that order through the handshake too), so a
 * number at or below the last one heard can only be such a resend.
 */
import { randomBytes } from 'node:crypto';

/** What travels through Redis: the event, from whom, and its place in that publisher's order. */
export interface Envelope {
  from: string;
  seq: number;
  event: unknown;
}

/** One instance's stamp: its id, made at start, and the number of its next event. */
export class EventStamp {
  readonly from = randomBytes(9).toString('base64url');
  private seq = 0;

  /** To be called when the event is sent, not when it is made: numbers follow the order on the wire. */
  wrap(event: unknown): Envelope {
    return { from: this.from, seq: ++this.seq, event };
  }
}

/** Publishers remembered per channel; past it the longest unheard is forgotten (instances restart with new ids). */
const PUBLISHERS_KEPT = 64;

/** The last number heard from each publisher, per channel, for as long as this instance listens to the channel. */
export class HeardSequences {
  private readonly byChannel = new Map<string, Map<string, number>>();

  /**
   * The event an arrival carries, or DUPLICATE when it is a resend of one
   * heard already. An arrival that is no envelope (an instance of a version
   * before envelopes, during a rolling upgrade) is an event as it is.
   */
  open(channel: string, arrival: unknown): unknown {
    if (!isEnvelope(arrival)) return arrival;
    let heard = this.byChannel.get(channel);
    if (!heard) this.byChannel.set(channel, (heard = new Map()));
    const last = heard.get(arrival.from);
    if (last !== undefined && arrival.seq <= last) return DUPLICATE;
    // Deleted and set again, so the Map's first key is the publisher heard least recently.
    if (last !== undefined) heard.delete(arrival.from);
    else if (heard.size >= PUBLISHERS_KEPT) heard.delete(heard.keys().next().value!);
    heard.set(arrival.from, arrival.seq);
    return arrival.event;
  }

  /** The channel is no longer listened to: what it heard is of no use. */
  forget(channel: string): void {
    this.byChannel.delete(channel);
  }
}

export const DUPLICATE: unique symbol = Symbol('a resent event heard already');

function isEnvelope(arrival: unknown): arrival is Envelope {
  if (typeof arrival !== 'object' || arrival === null) return false;
  const { from, seq } = arrival as Partial<Envelope>;
  return typeof from === 'string' && typeof seq === 'number' && 'event' in arrival;
}
