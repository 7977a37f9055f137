/**
 * Each `next` payload serialized once, however many sockets it goes to.
 *
 * graphql-ws stringifies every message whole, per subscriber: with one result
 * shared by a thousand subscribers (src/server/live/shared-execution.ts), that was
 * a thousand JSON.stringify calls of the same payload. Its hooks let us do
 * better without changing a byte: onNext returns the payload it sends for a
 * result, and its JSON is made once per result; the message replacer writes
 * a stand-in for that payload and keeps its JSON, which the transport's send
 * (called at once with the message's text, see graphql-ws's emit.next) puts
 * in the stand-in's place. The frame is the text JSON.stringify would have
 * written for the whole message: `{"id":…,"type":"next","payload":…}`.
 */
import type { ExecutionResult } from 'graphql';

/** A payload and its JSON, as graphql-ws would have written it. */
export class PayloadJson {
  /** UTF-8 bytes of the text, counted once for every socket it goes to. */
  readonly bytes: number;
  /** The first operation's frame prefix and its whole WebSocket frame; most clients number their operations alike. */
  private prefix: string | undefined;
  private frame: Buffer | undefined;
  /** Frames for the other prefixes, made when a second one asks. */
  private others: Map<string, Buffer> | undefined;

  constructor(readonly text: string) {
    this.bytes = Buffer.byteLength(text);
  }

  /**
   * The whole WebSocket frame (header included) of the `next` message with
   * this payload after `prefix` (see SharedFrames.nextFramePrefix), encoded
   * once for every socket whose operation has that id: a server's frames are
   * not masked, so each of those sockets is sent the very same bytes.
   */
  frameFor(prefix: string): Buffer {
    if (prefix === this.prefix) return this.frame!;
    if (this.prefix === undefined) {
      this.prefix = prefix;
      return (this.frame = textFrame(prefix, this.text, this.bytes));
    }
    this.others ??= new Map();
    let frame = this.others.get(prefix);
    if (!frame) this.others.set(prefix, (frame = textFrame(prefix, this.text, this.bytes)));
    return frame;
  }
}

/**
 * One unfragmented, unmasked WebSocket text frame (RFC 6455, 5.2) holding
 * `prefix`, `text` (of `textBytes` UTF-8 bytes) and the message's closing brace.
 */
function textFrame(prefix: string, text: string, textBytes: number): Buffer {
  const length = Buffer.byteLength(prefix) + textBytes + 1;
  const headerBytes = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerBytes + length);
  frame[0] = 0x81; // FIN, opcode 1 (text)
  if (length < 126) frame[1] = length;
  else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  let at = headerBytes + frame.write(prefix, headerBytes);
  at += frame.write(text, at);
  frame[at] = 0x7d; // }
  return frame;
}

/** The stand-in's value and where it sits: the payload is the last member of a graphql-ws message. */
const STAND_IN = 0;
const PAYLOAD_AT = ',"payload":';
const STAND_IN_END = `${PAYLOAD_AT}${STAND_IN}}`;

export class SharedFrames {
  private readonly byResult = new WeakMap<object, PayloadJson>();
  /** The JSON the replacer stood in for, until the send that follows the stringify. */
  private pending: string | undefined;
  /** graphql-ws's jsonMessageReplacer. */
  readonly replacer: (this: unknown, key: string, value: unknown) => unknown;

  constructor() {
    const frames = this;
    this.replacer = function (key, value) {
      // Key '' is the message itself, first of each stringify: nothing pends from an earlier one.
      if (key === '') frames.pending = undefined;
      else if (value instanceof PayloadJson) {
        frames.pending = value.text;
        return STAND_IN;
      }
      return value;
    };
  }

  /** graphql-ws's onNext: the payload to send for `result`, one object (and one JSON) per result. */
  payloadOf(result: ExecutionResult): PayloadJson | undefined {
    if (typeof result !== 'object' || result === null) return undefined;
    let payload = this.byResult.get(result);
    if (!payload) this.byResult.set(result, (payload = new PayloadJson(JSON.stringify(wirePayload(result)))));
    return payload;
  }

  /** What comes before the payload in operation `id`'s `next` frames, as graphql-ws writes them. */
  static nextFramePrefix(id: string): string {
    return `{"id":${JSON.stringify(id)},"type":"next"${PAYLOAD_AT}`;
  }

  /** The frame to send for a message's text: the payload's JSON in place of its stand-in. */
  frame(data: string): string {
    const text = this.pending;
    if (text === undefined) return data;
    this.pending = undefined;
    if (!data.endsWith(STAND_IN_END)) throw new Error('graphql-ws message without its payload last');
    return `${data.slice(0, -STAND_IN_END.length)}${PAYLOAD_AT}${text}}`;
  }
}

/** What graphql-ws's emit.next builds for a result: the result with its errors last, each as toJSON gives it. */
function wirePayload(result: ExecutionResult): Record<string, unknown> {
  const { errors, ...rest } = result;
  return errors ? { ...rest, errors: errors.map((e) => e.toJSON()) } : rest;
}
