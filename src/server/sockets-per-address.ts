/**
 * How many WebSockets each client address holds open on this instance, so
 * one address cannot hold every socket (and the memory and subscriptions they
 * carry) of an instance. Checked when an upgrade is verified and counted once
 * it has opened: upgrades verified at the same moment may pass the cap by the
 * few in flight, never by more.
 */
import type { WebSocket } from 'ws';

export class OpenSocketsPerAddress {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  full(address: string): boolean {
    return (this.open.get(address) ?? 0) >= this.max;
  }

  opened(socket: WebSocket, address: string): void {
    this.open.set(address, (this.open.get(address) ?? 0) + 1);
    socket.once('close', () => {
      const left = (this.open.get(address) ?? 1) - 1;
      if (left > 0) this.open.set(address, left);
      else this.open.delete(address);
    });
  }
}
