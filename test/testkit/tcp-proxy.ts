/**
 * A TCP proxy in front of a real service (the Cassandra node, Redis), so a
 * test can make it unreachable for one app instance or one connection (and
 * bring it back) without touching what other tests use.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private relayed = 0;
  private afterRelayed?: { bytes: number; action: () => void };
  private repliesDropped = false;
  private requestsDropped = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async open(port = this.port): Promise<void> {
    this.repliesDropped = false;
    this.requestsDropped = false;
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      upstream.on('data', (chunk: Buffer) => {
        this.countRelayed(chunk.length);
        if (!this.repliesDropped) client.write(chunk);
      });
      client.on('data', (chunk: Buffer) => {
        if (!this.requestsDropped) upstream.write(chunk);
      });
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Runs `action` once, when `bytes` more have come back from the node (say, to cut storage off midway through a read). */
  onceRelayed(bytes: number, action: () => void): void {
    this.afterRelayed = { bytes: this.relayed + bytes, action };
  }

  private countRelayed(n: number): void {
    this.relayed += n;
    if (this.afterRelayed && this.relayed >= this.afterRelayed.bytes) {
      const { action } = this.afterRelayed;
      this.afterRelayed = undefined;
      action();
    }
  }

  /**
   * From now until the proxy is closed, what the target sends back is thrown
   * away: requests still reach it, their answers never arrive (a connection
   * that drops after a command ran, before its reply came).
   */
  dropReplies(): void {
    this.repliesDropped = true;
  }

  /** From now until the proxy is closed, nothing gets through either way (the connection looks up to both ends). */
  dropEverything(): void {
    this.repliesDropped = true;
    this.requestsDropped = true;
  }

  get isOpen(): boolean {
    return this.server !== undefined;
  }

  /** Refuses new connections and cuts the open ones. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}
