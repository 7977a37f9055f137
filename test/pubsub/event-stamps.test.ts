// Event stamps: each live event heard once across a publisher reconnect, and where a feed started to lose events.
import { describe, expect, it } from 'vitest';
import { DUPLICATE, EventStamp, HeardEvents } from '../../src/pubsub/event-stamps.js';
import { lostFrom } from '../../src/pubsub/pubsub.js';
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
