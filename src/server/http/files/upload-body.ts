/**
 * The body of one upload, read from its socket by the upload itself rather
 * than through the fetch API's stream, so that whatever its framing
 * (Content-Length or chunked):
 * - every byte is counted against the body limit (413, connection closed);
 * - the client keeps to a minimum rate and a total time (408, connection
 *   closed), judged only while the server waits for it: a window in which the
 *   server stopped reading (its storage taking chunks slower) does not count;
 * - bytes go to the multipart parser no faster than it takes them, and it no
 *   faster than the file's reader, which writes them to Cassandra.
 * Once the upload no longer needs the rest of its body (refused, answered, its
 * file abandoned), the rest is read and dropped within the same bounds, so the
 * connection goes on to the client's next request; past a bound it is closed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { AppError, ErrorCode } from '../../../errors.js';
import { tooLarge } from '../request-body-limit.js';

export interface BodyBounds {
  maxBytes: number;
  /** Bytes the client must send in each window of rateWindowMs in which the server waited for it, per second. */
  minBytesPerSecond: number;
  rateWindowMs: number;
  /** The whole body within this. */
  maxMs: number;
}

export const tooSlow = (bounds: BodyBounds) =>
  new AppError(
    ErrorCode.REQUEST_TIMEOUT,
    `The upload came in too slowly: at least ${bounds.minBytesPerSecond} bytes a second, all of it within ${bounds.maxMs / 1000} s`,
    { minBytesPerSecond: bounds.minBytesPerSecond, maxSeconds: bounds.maxMs / 1000, http: { status: 408, headers: { connection: 'close' } } },
  );

const cutOff = () => new AppError(ErrorCode.BAD_REQUEST, 'The body was cut off', { http: { status: 400 } });

export class UploadBody {
  /** Settles once the body is read to its end within its bounds (resolves), or will not be (rejects with why). */
  readonly whole: Promise<void>;
  private settle!: { resolve: () => void; reject: (error: AppError) => void };
  private sink: Writable | null = null;
  private received = 0;
  private windowStart = 0;
  /** Paused by us, for the sink to take what it was given; and whether it was at any time in this window. */
  private paused = false;
  private pausedInWindow = false;
  private ended = false;
  /** The connection goes once answered: the body is over a bound, or cut off. */
  private closing = false;
  private answered = false;
  private readonly timers: NodeJS.Timeout[];

  constructor(
    private readonly req: IncomingMessage,
    res: ServerResponse,
    private readonly bounds: BodyBounds,
    /** Told of the first failure, whatever its source. */
    private readonly onFailure: (error: AppError) => void,
  ) {
    this.whole = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    this.whole.catch(() => undefined);
    this.timers = [setInterval(this.checkRate, bounds.rateWindowMs), setTimeout(() => this.fail(tooSlow(bounds), true), bounds.maxMs)];
    req.once('end', this.onEnd);
    req.once('error', () => this.fail(cutOff(), true));
    req.once('close', () => !req.complete && this.fail(cutOff(), true));
    res.once('finish', () => {
      this.answered = true;
      if (this.closing) req.socket.destroySoon();
      else if (!this.ended) this.drain();
    });
  }

  /** Starts reading, into `sink` (null: the body is dropped as it comes). */
  start(sink: Writable | null): void {
    this.sink = sink;
    this.req.on('data', this.onData);
  }

  /** Reads the rest and drops it (within the same bounds): the parser and the file's reader want no more. */
  drain(): void {
    if (this.sink) this.sink.off('drain', this.resume);
    this.sink = null;
    this.resume();
  }

  /**
   * Stops at `error`: with `close`, the body is read no further and its connection closes once answered (at once if
   * it was answered already); without, the rest is drained.
   */
  fail(error: AppError, close: boolean): void {
    if (this.ended || this.closing) return;
    if (close) {
      this.closing = true;
      this.stop();
      this.req.off('data', this.onData);
      this.req.pause();
      if (this.answered) this.req.socket.destroySoon();
    } else {
      this.drain();
    }
    this.settle.reject(error);
    this.onFailure(error);
  }

  private onData = (chunk: Buffer) => {
    this.received += chunk.byteLength;
    if (this.received > this.bounds.maxBytes) return this.fail(tooLarge(this.bounds.maxBytes), true);
    if (this.sink && !this.sink.write(chunk)) {
      this.paused = this.pausedInWindow = true;
      this.req.pause();
      this.sink.once('drain', this.resume);
    }
  };

  private resume = () => {
    if (!this.paused || this.closing) return;
    this.paused = false;
    this.req.resume();
  };

  private onEnd = () => {
    this.ended = true;
    this.stop();
    this.sink?.end();
    this.settle.resolve();
  };

  /** A window in which the server waited for the client the whole time must have brought the minimum. */
  private checkRate = () => {
    const brought = this.received - this.windowStart;
    const waited = !this.pausedInWindow;
    this.windowStart = this.received;
    this.pausedInWindow = this.paused;
    if (waited && brought < (this.bounds.minBytesPerSecond * this.bounds.rateWindowMs) / 1000) this.fail(tooSlow(this.bounds), true);
  };

  private stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }
}
