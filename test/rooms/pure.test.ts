import { describe, expect, it } from 'vitest';
import { dayBucket, dayBucketStart, isDayBucket, isMonthBucket, monthBucket, monthOfDay } from '../../src/buckets.js';
import { RecentBuckets } from '../../src/db/cassandra/recent-buckets.js';
import { newTimeUuid, timeUuidDate } from '../../src/timeuuids.js';
import { decodeMessageId, encodeMessageId } from '../../src/resolvers/rooms/ids.js';
import { decodeHistoryCursor, encodeHistoryCursor } from '../../src/pagination.js';
import { validBanner, validRoomName } from '../../src/resolvers/rooms/validation.js';
import { validClientId } from '../../src/validation.js';
import { TimeUuid } from '../../src/db/cassandra/client.js';
import { messageTerms, queryTerms, termsOf } from '../../src/resolvers/rooms/messages/search-terms.js';
import { Limits } from '../../src/limits.js';
import { RoomSequencer, type RoomEvent } from '../../src/resolvers/rooms/live/feed.js';
import type { PubSub } from '../../src/pubsub/pubsub.js';
import { pino } from 'pino';

describe('day buckets', () => {
  it('round-trips a bucket to its UTC midnight and rejects days that do not exist', () => {
    expect(dayBucketStart(20240229).toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(dayBucket(dayBucketStart(20251231))).toBe(20251231);
    expect(isDayBucket(20240229)).toBe(true);
    expect(isDayBucket(20250229)).toBe(false);
    expect(isDayBucket(20251301)).toBe(false);
    expect(isDayBucket('20250101')).toBe(false);
    expect(isMonthBucket(202512)).toBe(true);
    expect(isMonthBucket(202513)).toBe(false);
    // A day's month bucket is the month bucket of any moment of that day.
    const lastMoment = new Date('2025-12-31T23:59:59.999Z');
    expect(monthOfDay(dayBucket(lastMoment))).toBe(monthBucket(lastMoment));
    expect(monthOfDay(20260101)).toBe(202601);
  });
});

describe('message time uuids', () => {
  it('sort in the order they were made, even thousands within one millisecond', () => {
    const at = new Date('2025-06-01T12:00:00.000Z');
    const ids = Array.from({ length: 12_000 }, () => newTimeUuid(at));
    const key = (u: InstanceType<typeof TimeUuid>) => {
      const { date, ticks } = u.getDatePrecision();
      return BigInt(date.getTime()) * 10_000n + BigInt(ticks);
    };
    for (let i = 1; i < ids.length; i++) expect(key(ids[i]!)).toBeGreaterThan(key(ids[i - 1]!));
    expect(timeUuidDate(ids[0]!.toString()).toISOString()).toBe(at.toISOString());
  });
});

describe('message ids and cursors', () => {
  it('round-trip, and refuse anything not made here', () => {
    const messageId = newTimeUuid(new Date('2025-06-01T12:00:00Z')).toString();
    const key = { roomName: 'games', bucket: 20250601, messageId };
    expect(decodeMessageId('id', encodeMessageId(key))).toEqual(key);
    const forge = (s: string) => Buffer.from(s).toString('base64url');
    for (const bad of [
      'x',
      forge(`m1|games|20250602|${messageId}`), // bucket is not the message's day
      forge(`m1|Games!|20250601|${messageId}`),
      forge(`m2|games|20250601|${messageId}`),
      forge(`m1|games|20250601|not-a-uuid`),
      forge(`m1|games|20250601|${messageId}|extra`),
    ]) {
      expect(() => decodeMessageId("id", bad), Buffer.from(bad, "base64url").toString()).toThrow(/id is not a message id/);
    }
    const cursor = encodeHistoryCursor({ bucket: 20250601, id: messageId });
    expect(decodeHistoryCursor('after', cursor, 'day')).toEqual({ bucket: 20250601, id: messageId });
    expect(() => decodeHistoryCursor('after', cursor, 'month')).toThrow(/after is not a valid cursor/);
    // A cursor of a message that had not settled carries the settled horizon of its page.
    const marked = encodeHistoryCursor({ bucket: 20250601, id: messageId, settled: 1_748_779_200_000 });
    expect(decodeHistoryCursor('before', marked, 'day')).toEqual({ bucket: 20250601, id: messageId, settled: 1_748_779_200_000 });
    for (const s of [-1, 1.5, '1', null]) {
      const forged = Buffer.from(JSON.stringify({ v: 1, b: 20250601, t: messageId, s })).toString('base64url');
      expect(() => decodeHistoryCursor('before', forged, 'day'), String(s)).toThrow(/before is not a valid cursor/);
    }
  });
});

describe('room input rules', () => {
  it('normalizes names to lowercase and trims banners', () => {
    expect(validRoomName('name', '  Games.Room_1-b ')).toBe('games.room_1-b');
    expect(() => validRoomName('name', '-games')).toThrow(/must start with a letter or digit/);
    expect(validBanner('b', '   ')).toBeNull();
    expect(validBanner('b', ' hi ')).toBe('hi');
    expect(validClientId('c', undefined)).toBeNull();
    expect(() => validClientId('c', 'tab\there')).toThrow(/control characters/);
  });
});

describe('recent buckets', () => {
  it('remembers up to its capacity, forgetting the oldest first', () => {
    const recent = new RecentBuckets(2);
    recent.add('a');
    recent.add('b');
    recent.add('c');
    expect([recent.has('a'), recent.has('b'), recent.has('c')]).toEqual([false, true, true]);
  });
});

describe('search terms', () => {
  const fieldOf = (run: () => unknown) => {
    try {
      run();
    } catch (err) {
      return (err as { extensions?: { code?: string; field?: string } }).extensions;
    }
    return undefined;
  };

  it('lowercases, folds compatibility forms, splits on everything but letters, marks and digits, and dedupes', () => {
    expect(termsOf('Hello, WORLD! hello-world… 42nd', 100)).toEqual(['hello', 'world', '42nd']);
    // Fullwidth letters, a ligature and a superscript digit become their plain forms.
    expect(termsOf('ＱＵＯＫＫＡ ﬁsh x²', 100)).toEqual(['quokka', 'fish', 'x2']);
    // Combining marks stay in their word: Devanagari vowel signs, a decomposed accent (composed by NFKC).
    expect(termsOf('नमस्ते café cafe\u0301', 100)).toEqual(['नमस्ते', 'café']);
    expect(termsOf('🎉 -- ... ', 100)).toEqual([]);
  });

  it('cuts long words the same way everywhere and keeps the first terms of a long text', () => {
    const long = 'a'.repeat(Limits.room.search.maxTermLength + 10);
    expect(termsOf(long, 10)).toEqual(['a'.repeat(Limits.room.search.maxTermLength)]);
    expect(queryTerms('query', long)).toEqual(termsOf(long, 10));
    const many = Array.from({ length: Limits.room.search.maxTermsPerMessage + 50 }, (_, i) => `w${i}`).join(' ');
    const terms = messageTerms(many, false);
    expect(terms).toHaveLength(Limits.room.search.maxTermsPerMessage);
    expect(terms[0]).toBe('w0');
    expect(messageTerms('alice joins the room', true)).toEqual([]);
  });

  it('refuses a query without words, with too many words, or too long, naming the field', () => {
    expect(queryTerms('query', 'Quokka? LAKE!')).toEqual(['quokka', 'lake']);
    const tooMany = Array.from({ length: Limits.room.search.maxQueryTerms + 1 }, (_, i) => `w${i}`).join(' ');
    expect(queryTerms('query', tooMany.replace(/ w\d+$/, ''))).toHaveLength(Limits.room.search.maxQueryTerms);
    for (const bad of ['', '   ', '?!', tooMany, 'x'.repeat(Limits.room.search.queryMaxLength + 1)]) {
      expect(fieldOf(() => queryTerms('query', bad)), JSON.stringify(bad)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'query' });
    }
  });
});

describe('room publish order', () => {
  /** A pub/sub whose every publish waits until the test answers it, as a slow broker would. */
  function heldPubSub() {
    const sent: Array<{ content: string; answer: (err?: Error) => void }> = [];
    const pubsub = {
      publish: (_channel: string, event: unknown) =>
        new Promise<void>((resolve, reject) => {
          const content = (event as { message: { content: string } }).message.content;
          sent.push({ content, answer: (err) => (err ? reject(err) : resolve()) });
        }),
    } as unknown as PubSub;
    return { sent, sequencer: new RoomSequencer(pubsub, pino({ level: 'silent' })) };
  }
  const posted = (content: string) => [{ kind: 'MessagePosted', roomName: 'r', message: { content } } as unknown as RoomEvent];
  const settled = async (p: Promise<unknown>) => {
    let done = false;
    void p.then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    return done;
  };

  it('sends in turn order without waiting for earlier answers, and answers each turn on its own events', async () => {
    const { sent, sequencer } = heldPubSub();
    const [first, second, third] = [sequencer.take('r'), sequencer.take('r'), sequencer.take('r')];
    const thirdOut = third.publish(posted('3'));
    const secondOut = second.publish(posted('2'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(0); // the first turn's write is still running
    const firstOut = first.publish(posted('1'));
    await new Promise((resolve) => setImmediate(resolve));
    // Pipelined: all three are out, in turn order, though none is answered yet.
    expect(sent.map((s) => s.content)).toEqual(['1', '2', '3']);
    sent[1]!.answer();
    expect(await settled(secondOut)).toBe(true);
    expect(await settled(firstOut)).toBe(false);
    sent[0]!.answer(new Error('broker gone')); // logged, not thrown: the message itself is written
    sent[2]!.answer();
    await Promise.all([firstOut, thirdOut]);
  });

  it('lets later turns go past a cancelled one', async () => {
    const { sent, sequencer } = heldPubSub();
    const [failed, next] = [sequencer.take('r'), sequencer.take('r')];
    const nextOut = next.publish(posted('after'));
    failed.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((s) => s.content)).toEqual(['after']);
    sent[0]!.answer();
    await nextOut;
  });
});
