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
  private readonly flush = () => {
    const wires = this.corked;
    this.corked = [];
    for (const wire of wires) wire.uncork();
  };

  write(wire: Writable, frame: Buffer): void {
    if (wire.writableCorked === 0) {
      wire.cork();
      if (this.corked.push(wire) === 1) setImmediate(this.flush);
    }
    wire.write(frame);
  }
}
