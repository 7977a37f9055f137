// A room's publish order on one instance: later turns never publish before earlier ones.
import { describe, expect, it } from 'vitest';
import { RoomSequencer, type RoomEvent } from '../../../src/resolvers/rooms/live/feed.js';
import type { PubSub } from '../../../src/pubsub/pubsub.js';
import { pino } from 'pino';

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
  const r = { name: 'r', kind: 'CHANNEL' } as const;
  const settled = async (p: Promise<unknown>) => {
    let done = false;
    void p.then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    return done;
  };

  it('sends in turn order without waiting for earlier answers, and answers each turn on its own events', async () => {
    const { sent, sequencer } = heldPubSub();
    const [first, second, third] = [sequencer.take(r), sequencer.take(r), sequencer.take(r)];
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
    const [failed, next] = [sequencer.take(r), sequencer.take(r)];
    const nextOut = next.publish(posted('after'));
    failed.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((s) => s.content)).toEqual(['after']);
    sent[0]!.answer();
    await nextOut;
  });
});
