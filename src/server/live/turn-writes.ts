import type { Writable } from 'node:stream';

/**
 * The frames written to the sockets in one turn of the event loop leave
 * together, one write per socket: the first frame corks its socket, and one
 * callback once the turn has handled its input (setImmediate: after every
 * Redis message, request and reply read in it) uncorks every socket corked
 * in it. A burst of events (posts arriving faster than they are sent) then
 * costs a socket one system call, where it cost one per frame; a lone event
 * costs the cork and uncork. (Uncorking at the end of each callback instead,
 * by process.nextTick, served 107,744 deliveries/s at most in
 * npm run bench fanout against 118,692 this way, one trial run each.)
 */
export class TurnWrites {
  private corked: Writable[] = [];
  /** Sockets sent their frames early in this turn (FLUSH_BYTES): the rest of the turn's go as they come. */
  private readonly early = new Set<Writable>();
  private readonly flush = () => {
    const wires = this.corked;
    this.corked = [];
    this.early.clear();
    for (const wire of wires) uncork(wire);
  };

  write(wire: Writable, frame: Buffer): void {
    if (wire.writableCorked === 0 && !this.early.has(wire)) {
      wire.cork();
      if (this.corked.push(wire) === 1) setImmediate(this.flush);
    }
    wire.write(frame);
    // A socket that holds this much from one turn sends it now: one system call's worth already, and what a
    // stream holds counts as unsent against the slow-consumer bound, which a kernel taking it would not.
    if (wire.writableCorked > 0 && wire.writableLength >= FLUSH_BYTES) {
      uncork(wire);
      this.early.add(wire);
    }
  }
}

const FLUSH_BYTES = 64 * 1024;

/**
 * The cork this class put on `wire` taken off (once more than it was put on
 * does nothing), whatever happens to it: one socket's failure must not leave
 * the others corked.
 */
function uncork(wire: Writable): void {
  try {
    wire.uncork();
  } catch {
    // A socket that fails here fails for its own reader; its error reaches its listeners.
  }
}
