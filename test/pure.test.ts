import { describe, expect, it } from 'vitest';
import { dayBucket, monthBucket, nextMonth, parseMonth, previousMonth } from '../src/buckets.js';
import { decodeCursor, encodeCursor } from '../src/pagination.js';
import { parseCql } from '../src/db/cassandra/migrate.js';
import { parseReplication } from '../src/config.js';
import { VerifiedTokens } from '../src/auth/verified-tokens.js';
import * as ws from 'ws';
import type { EventEmitter } from 'node:events';
import { SharedFrames } from '../src/server/shared-frames.js';
import { Writable } from 'node:stream';
import { TurnWrites } from '../src/server/turn-writes.js';
import { GraphQLError } from 'graphql';
import { mask } from '../src/server/error-masking.js';
import { DUPLICATE, EventStamp, HeardSequences } from '../src/pubsub/event-envelope.js';

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

describe('event envelopes (each event once across a publisher reconnect)', () => {
  it("drops an event at or below the last number heard from its publisher on that channel, and nothing else", () => {
    const a = new EventStamp();
    const b = new EventStamp();
    const heard = new HeardSequences();
    const a1 = a.wrap('a1');
    const a2 = a.wrap('a2');
    const b1 = b.wrap('b1');
    expect(heard.open('room.x', a1)).toBe('a1');
    expect(heard.open('room.x', a2)).toBe('a2');
    expect(heard.open('room.x', a2)).toBe(DUPLICATE); // ioredis's resend
    expect(heard.open('room.x', a1)).toBe(DUPLICATE);
    expect(heard.open('room.x', b1)).toBe('b1'); // another publisher counts on its own
    expect(heard.open('room.y', a1)).toBe('a1'); // so does another channel
    expect(heard.open('room.x', a.wrap('a3'))).toBe('a3');
  });

  it('forgets a channel no longer listened to, and takes an event without an envelope as it is', () => {
    const a = new EventStamp();
    const heard = new HeardSequences();
    const a1 = a.wrap({ kind: 'MessagePosted' });
    heard.open('room.x', a1);
    heard.forget('room.x');
    expect(heard.open('room.x', a1)).toEqual({ kind: 'MessagePosted' });
    expect(heard.open('room.x', { kind: 'MessagePosted', seq: 1 })).toEqual({ kind: 'MessagePosted', seq: 1 });
  });

  it('remembers the 64 publishers heard most recently on a channel', () => {
    const heard = new HeardSequences();
    const first = new EventStamp();
    const resent = first.wrap('first');
    heard.open('room.x', resent);
    const others = Array.from({ length: 63 }, () => new EventStamp());
    const theirs = others.map((o) => o.wrap('other'));
    theirs.forEach((event) => heard.open('room.x', event));
    expect(heard.open('room.x', resent)).toBe(DUPLICATE); // 64 publishers: all known
    heard.open('room.x', first.wrap('first again')); // now others[0] is the one heard least recently
    heard.open('room.x', new EventStamp().wrap('a 65th publisher'));
    expect(heard.open('room.x', resent)).toBe(DUPLICATE);
    expect(heard.open('room.x', theirs[1])).toBe(DUPLICATE);
    expect(heard.open('room.x', theirs[0])).toBe('other'); // forgotten
  });
});
