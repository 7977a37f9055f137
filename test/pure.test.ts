import { describe, expect, it } from 'vitest';
import { dayBucket, monthBucket, nextMonth, parseMonth, previousMonth } from '../src/buckets.js';
import { decodeCursor, encodeCursor } from '../src/pagination.js';
import { parseCql } from '../src/db/cassandra/migrate.js';
import { parseReplication } from '../src/config.js';
import { VerifiedTokens } from '../src/auth/verified-tokens.js';
import * as ws from 'ws';
import type { EventEmitter } from 'node:events';
import { SharedFrames } from '../src/server/live/shared-frames.js';
import { Writable } from 'node:stream';
import { TurnWrites } from '../src/server/live/turn-writes.js';
import { GraphQLError } from 'graphql';
import { mask } from '../src/server/error-masking.js';
import { DUPLICATE, EventStamp, HeardEvents } from '../src/pubsub/event-stamps.js';
import { lostFrom } from '../src/pubsub/pubsub.js';

describe('buckets', () => {
  it('uses UTC days and months', () => {
    expect(dayBucket(new Date('2026-11-22T23:59:59.999Z'))).toBe(20261122);
    expect(dayBucket(new Date('2026-11-23T00:00:00Z'))).toBe(20261123);
    expect(monthBucket(new Date('2026-01-01T00:00:00Z'))).toBe(202601);
  });
  it('steps months across years', () => {
    expect(previousMonth(202601)).toBe(202512);
    expect(nextMonth(202512)).toBe(202601);
    expect(parseMonth('2026-11')).toBe(202611);
    expect(parseMonth('2026-13')).toBeUndefined();
  });
});

describe('cursors', () => {
  const isPos = (p: Record<string, unknown>): p is { id: string } => typeof p.id === 'string';
  it('round-trips and rejects garbage with BAD_USER_INPUT naming the field', () => {
    expect(decodeCursor('after', encodeCursor({ id: 'x' }), isPos)).toMatchObject({ id: 'x' });
    expect(() => decodeCursor('after', 'not a cursor', isPos)).toThrow(/after is not a valid cursor/);
    expect(() => decodeCursor('after', encodeCursor({ other: 1 }), isPos)).toThrow(/after/);
  });
});

describe('cql parsing and config', () => {
  it('splits statements and drops comments', () => {
    expect(parseCql('-- a; comment\nCREATE TABLE a (x int PRIMARY KEY); // trailing;\n/* b; */ CREATE TABLE b (y int PRIMARY KEY);')).toEqual([
      'CREATE TABLE a (x int PRIMARY KEY)',
      'CREATE TABLE b (y int PRIMARY KEY)',
    ]);
  });
  it('parses per-DC replication', () => {
    expect(parseReplication('dc1:3, dc2:2')).toEqual({ dc1: 3, dc2: 2 });
    expect(() => parseReplication('dc1')).toThrow(/CASSANDRA_REPLICATION/);
  });
});

describe('the verified-token cache', () => {
  const session = (expiresAtMs: number) => ({ expiresAt: new Date(expiresAtMs) });

  it('serves a token until its expiry plus the tolerance, then forgets it', () => {
    const cache = new VerifiedTokens<{ expiresAt: Date }>(5_000);
    cache.remember('t', session(10_000));
    expect(cache.get('t', 14_999)).toBeDefined();
    expect(cache.get('t', 15_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the oldest token when full', () => {
    const cache = new VerifiedTokens<{ expiresAt: Date }>(0, 2);
    for (const t of ['a', 'b', 'c']) cache.remember(t, session(60_000));
    expect([cache.get('a', 0), cache.get('b', 0), cache.get('c', 0)].map(Boolean)).toEqual([false, true, true]);
  });
});

describe('shared next frames', () => {
  // ws's frame parser, which @types/ws leaves out.
  const { Receiver } = ws as unknown as { Receiver: new (options: { isServer: boolean }) => EventEmitter & { write(chunk: Buffer): void } };
  /** What a graphql-ws client's socket reads from `frame`: ws's own frame parser, as a client (server frames are unmasked). */
  function received(frame: Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      const receiver = new Receiver({ isServer: false });
      receiver.on('message', (data: Buffer, isBinary: boolean) => (isBinary ? reject(new Error('binary')) : resolve(String(data))));
      receiver.on('error', reject);
      receiver.write(frame);
    });
  }

  it.each([10, 1_000, 70_000])('frames a payload of %i characters as the text graphql-ws would send, once for every socket of an id', async (size) => {
    const frames = new SharedFrames();
    const result = { data: { roomEvents: { content: 'é'.repeat(size) } } };
    const payload = frames.payloadOf(result)!;
    const prefix = SharedFrames.nextFramePrefix('1');
    const frame = payload.frameFor(prefix);
    expect(JSON.parse(await received(frame))).toEqual({ id: '1', type: 'next', payload: result });
    // The same bytes for every socket whose operation is "1", another frame for another id.
    expect(frames.payloadOf(result)!.frameFor(SharedFrames.nextFramePrefix('1'))).toBe(frame);
    const other = payload.frameFor(SharedFrames.nextFramePrefix('sub-2'));
    expect(JSON.parse(await received(other))).toEqual({ id: 'sub-2', type: 'next', payload: result });
    expect(payload.frameFor(prefix)).toBe(frame);
  });
});

describe('frames written in one turn', () => {
  /** A socket stand-in that records each write it gets: one entry per system call a net.Socket would make. */
  function recordingWire() {
    const calls: string[][] = [];
    const wire = new Writable({
      write(chunk: Buffer, _encoding, done) {
        calls.push([chunk.toString()]);
        done();
      },
      writev(chunks, done) {
        calls.push(chunks.map((c) => (c.chunk as Buffer).toString()));
        done();
      },
    });
    return { wire, calls };
  }

  it('leave together, one write per socket, in order; a later turn starts a new write', async () => {
    const writes = new TurnWrites();
    const a = recordingWire();
    const b = recordingWire();
    writes.write(a.wire, Buffer.from('1'));
    writes.write(b.wire, Buffer.from('x'));
    writes.write(a.wire, Buffer.from('2'));
    writes.write(a.wire, Buffer.from('3'));
    // Nothing leaves before the turn's work is done.
    expect([a.calls, b.calls]).toEqual([[], []]);
    await new Promise((resolve) => process.nextTick(resolve));
    expect([a.calls, b.calls]).toEqual([[], []]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.calls).toEqual([['1', '2', '3']]);
    expect(b.calls).toEqual([['x']]);
    writes.write(a.wire, Buffer.from('4'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.calls).toEqual([['1', '2', '3'], ['4']]);
    expect(a.wire.writableCorked).toBe(0);
  });

  it('send a socket its frames at once when one turn gives it 64 KiB, the rest of that turn as they come', async () => {
    const writes = new TurnWrites();
    const a = recordingWire();
    const frame = (n: number) => Buffer.from(String(n).repeat(20 * 1024));
    for (let n = 1; n <= 5; n++) writes.write(a.wire, frame(n));
    expect(a.calls.map((call) => call.map((chunk) => chunk[0]))).toEqual([['1', '2', '3', '4'], ['5']]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.calls).toHaveLength(2);
    // The next turn corks it again.
    writes.write(a.wire, Buffer.from('6'));
    writes.write(a.wire, Buffer.from('7'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.calls.at(-1)).toEqual(['6', '7']);
  });
});

describe('error masking', () => {
  it('labels request errors by kind, and a wrapped failure (a source stream that threw) as internal, never as validation', () => {
    const code = (e: Error) => (e as GraphQLError).extensions?.code;
    expect(code(mask(new GraphQLError('Syntax Error: Unexpected Name "x".')))).toBe('GRAPHQL_PARSE_FAILED');
    expect(code(mask(new GraphQLError('Cannot query field "nope" on type "Query".')))).toBe('GRAPHQL_VALIDATION_FAILED');
    // A variable's scalar that threw is still the client's input.
    const scalarThrew = new GraphQLError('Variable "$at" got invalid value "x"; not a date', { originalError: new TypeError('not a date') });
    expect(code(mask(scalarThrew))).toBe('BAD_USER_INPUT');
    const literalThrew = new GraphQLError('Expected value of type "DateTime!", found "x"; not a date', { originalError: new TypeError('not a date') });
    expect(code(mask(literalThrew))).toBe('GRAPHQL_VALIDATION_FAILED');
    // graphql-tools and our shared execution wrap a source stream's failure without a path.
    const streamFailed = new GraphQLError('socket hang up', { originalError: new Error('socket hang up') });
    expect(code(mask(streamFailed))).toBe('INTERNAL_SERVER_ERROR');
    expect(mask(streamFailed).message).toBe('Unexpected error');
  });
});

describe('event stamps (each event once across a publisher reconnect)', () => {
  /** What a subscriber's HeardEvents makes of arrivals, each as it travels: JSON. */
  const opened = (heard: HeardEvents, ...arrivals: unknown[]) => arrivals.map((a) => heard.open(JSON.parse(JSON.stringify(a))));

  it('drops a repeat of an event heard from the same publisher, and takes the event off its stamp', () => {
    const a = new EventStamp();
    const b = new EventStamp();
    const [a1, a2, b1] = [a.stamp({ n: 'a1' }), a.stamp({ n: 'a2' }), b.stamp({ n: 'b1' })];
    expect(opened(new HeardEvents(), a1, a2, a2, a1, b1, a.stamp({ n: 'a3' }))).toEqual([
      { n: 'a1' },
      { n: 'a2' },
      DUPLICATE, // ioredis's resend
      DUPLICATE,
      { n: 'b1' }, // another publisher counts on its own
      { n: 'a3' },
    ]);
  });

  it('delivers an event heard late, after later ones, once (never drops what it has not heard)', () => {
    const a = new EventStamp();
    const [a1, a2, a3, a4] = ['a1', 'a2', 'a3', 'a4'].map((n) => a.stamp({ n }));
    expect(opened(new HeardEvents(), a1, a3, a4, a2, a2, a3)).toEqual([{ n: 'a1' }, { n: 'a3' }, { n: 'a4' }, { n: 'a2' }, DUPLICATE, DUPLICATE]);
  });

  it("knows repeats across gaps in a publisher's numbers (its events on channels not listened to), wide ones too", () => {
    const a = new EventStamp();
    const heard = new HeardEvents();
    const first = a.stamp({ n: 'first' });
    expect(opened(heard, first)).toEqual([{ n: 'first' }]);
    for (let i = 0; i < 40_000; i++) a.stamp({ elsewhere: i }); // numbers spent on other channels
    const near = a.stamp({ n: 'near' });
    expect(opened(heard, near, first, near)).toEqual([{ n: 'near' }, DUPLICATE, DUPLICATE]);
    for (let i = 0; i < 70_000; i++) a.stamp({ elsewhere: i });
    const far = a.stamp({ n: 'far' }); // past the window: its slots reused, none of them reads as heard
    const later = a.stamp({ n: 'later' });
    expect(opened(heard, far, later, far)).toEqual([{ n: 'far' }, { n: 'later' }, DUPLICATE]);
  });

  it('reuses the slot of a number that left the window without reading it as heard', () => {
    const a = new EventStamp();
    const heard = new HeardEvents();
    expect(opened(heard, a.stamp({ n: 1 }))).toEqual([{ n: 1 }]);
    for (let i = 0; i < 65_534; i++) a.stamp({ elsewhere: i });
    // Numbers 65,536 and 65,537: the second one's slot in a window of 65,536 was number 1's.
    expect(opened(heard, a.stamp({ n: 65_536 }), a.stamp({ n: 65_537 }))).toEqual([{ n: 65_536 }, { n: 65_537 }]);
  });

  it('takes an unstamped event (from an instance before stamps) as it is, and leaves the publisher its own object', () => {
    const event = { kind: 'MessagePosted', roomName: 'r' };
    const stamped = new EventStamp().stamp(event);
    expect(event).toEqual({ kind: 'MessagePosted', roomName: 'r' });
    expect(stamped).toMatchObject(event);
    expect(opened(new HeardEvents(), event, { kind: 'X', _seq: 1 })).toEqual([event, { kind: 'X', _seq: 1 }]);
  });

  it('remembers the 64 publishers heard most recently', () => {
    const heard = new HeardEvents();
    const first = new EventStamp();
    const resent = first.stamp({ n: 'first' });
    const others = Array.from({ length: 63 }, () => new EventStamp());
    const theirs = others.map((o) => o.stamp({ n: 'other' }));
    opened(heard, resent, ...theirs);
    expect(opened(heard, resent)).toEqual([DUPLICATE]); // 64 publishers: all known
    opened(heard, first.stamp({ n: 'first again' }), new EventStamp().stamp({ n: 'a 65th publisher' }));
    // The 65th pushed out the publisher heard least recently: others[0] (first was heard again).
    expect(opened(heard, resent, theirs[1], theirs[0])).toEqual([DUPLICATE, DUPLICATE, { n: 'other' }]);
  });
});

describe('when a feed started to lose events', () => {
  it('is the earliest of what it knew and what it is told, and now when it is told no time', () => {
    const [t1, t2, now] = [new Date('2026-11-26T06:00:00Z'), new Date('2026-11-26T06:00:05Z'), new Date('2026-11-26T06:01:00Z')];
    expect(lostFrom(undefined, undefined, now)).toBe(now);
    expect(lostFrom(undefined, t2, now)).toBe(t2);
    expect(lostFrom(t2, t1, now)).toBe(t1); // a notice of a publish that failed before this instance's own drop
    expect(lostFrom(t1, t2, now)).toBe(t1);
    expect(lostFrom(t1, undefined, now)).toBe(t1);
  });
});
