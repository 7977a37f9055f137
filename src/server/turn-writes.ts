import type { Writable } from 'node:stream';

/**
 * The frames written to the sockets in one turn of the event loop leave
 * together, one write per socket: the first frame corks its socket, and one
 * callback after the turn's work uncorks every socket corked in it. A burst
 * of events (posts arriving faster than they are sent, as Redis hands over
 * several messages in one read) then costs a socket one system call, where
 * it cost one per frame; a lone event costs the cork and uncork.
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
      if (this.corked.push(wire) === 1) process.nextTick(this.flush);
    }
    wire.write(frame);
  }
}
