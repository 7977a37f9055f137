// WebSocket frames: one shared encoding per event, and the frames of one turn in one write.
import { describe, expect, it } from 'vitest';
import type { EventEmitter } from 'node:events';
import { SharedFrames } from '../../src/server/live/shared-frames.js';
import { Writable } from 'node:stream';
import { TurnWrites } from '../../src/server/live/turn-writes.js';
import * as ws from 'ws';

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
