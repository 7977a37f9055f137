/**
 * A TCP proxy in front of a real service (the Cassandra node, Redis), so a
 * test can make it unreachable for one app instance or one connection (and
 * bring it back) without touching what other tests use.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { App } from '../../../src/app.js';
import type { StartOptions } from '../app.js';

export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private relayed = 0;
  private afterRelayed?: { bytes: number; action: () => void };
  private onRequest?: () => void;
  private repliesDropped = false;
  private requestsDropped = false;
  private refusing = false;
  /** While held (see hold), what would be relayed either way, in order. */
  private held?: Array<() => void>;
  /** Connections taken and cut at once while refusing (see refuseConnections): a client's attempts to reach the service. */
  refused = 0;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Listens (again), relaying everything; a proxy that was refusing connections relays the new ones again. */
  async open(port = this.port): Promise<void> {
    this.repliesDropped = false;
    this.requestsDropped = false;
    this.refusing = false;
    if (this.server) return;
    this.server = createServer((client) => {
      if (this.refusing) {
        this.refused += 1;
        // A reset, as from a port nothing listens on: a driver that saw a plain close would wait out its read timeout.
        client.resetAndDestroy();
        return;
      }
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      upstream.on('data', (chunk: Buffer) => {
        this.countRelayed(chunk.length);
        this.relay(() => !this.repliesDropped && client.write(chunk));
      });
      client.on('data', (chunk: Buffer) => {
        this.relay(() => !this.requestsDropped && upstream.write(chunk));
        const action = this.onRequest;
        this.onRequest = undefined;
        action?.();
      });
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  private relay(send: () => void): void {
    if (this.held) this.held.push(send);
    else send();
  }

  /**
   * From now until `release()`, nothing goes through either way: it waits in
   * the proxy, in order (a stalled network). What the target has is then all
   * it will have if the client dies before the release: a test can look at
   * the target's state and kill the client with that state fixed.
   */
  hold(): void {
    this.held ??= [];
  }

  /** Sends on, in order, what waited since `hold()`, and relays again. */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const send of held) send();
  }

  /** Runs `action` once, right after the next bytes from a client were relayed (say, to cut a request's connection once it was sent). */
  onceRequested(action: () => void): void {
    this.onRequest = action;
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

  /**
   * From now until `open()`, the service is down behind a port that still
   * listens: the open connections are cut, and each new one is cut as it
   * comes, counted in `refused`, so a test can wait for a client's attempts to
   * reconnect instead of for a time.
   */
  refuseConnections(): void {
    this.refusing = true;
    for (const s of this.sockets) s.destroy();
  }

  get isOpen(): boolean {
    return this.server !== undefined;
  }

  /** Refuses new connections and cuts the open ones (what was held is dropped). */
  async close(): Promise<void> {
    this.held = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}

/**
 * A proxy of its own in front of this run's Cassandra node, open, and the
 * environment that sends an app's (or a CLI's) CQL through it.
 */
export async function cassandraProxy(): Promise<{ proxy: TcpProxy; env: { CASSANDRA_CONTACT_POINTS: string } }> {
  // Loaded here, not at the top: the benchmarks use TcpProxy outside vitest, where these cannot load.
  const { inject } = await import('vitest');
  const [host, port] = inject('cassandraContactPoint').split(':');
  const proxy = new TcpProxy(host!, Number(port));
  await proxy.open();
  return { proxy, env: { CASSANDRA_CONTACT_POINTS: `127.0.0.1:${proxy.port}` } };
}

/** An app instance (testkit/app.ts) whose Cassandra traffic goes through a closable proxy of its own, open. */
export async function startAppBehindCassandraProxy(opts: StartOptions = {}): Promise<{ app: App; proxy: TcpProxy }> {
  const { proxy, env } = await cassandraProxy();
  const { startApp } = await import('../app.js');
  const app = await startApp({ ...opts, env: { ...opts.env, ...env } });
  return { app, proxy };
}
