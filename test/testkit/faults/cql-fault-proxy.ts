/**
 * A proxy in front of this run's Cassandra node that reads the CQL native
 * protocol frames a client sends (v3/v4 framing: what the driver speaks), so a
 * test can stage what a node of a cluster still settling answers: requests
 * whose CQL matches a pattern answered with an error of the test's choosing (a
 * keyspace this coordinator does not know yet, say), or a node that demands
 * credentials and refuses them. Everything else goes to the node untouched.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

const HEADER_BYTES = 9;
const FLAG_CUSTOM_PAYLOAD = 0x04;
const Opcode = { ERROR: 0x00, STARTUP: 0x01, AUTHENTICATE: 0x03, QUERY: 0x07, PREPARE: 0x09, AUTH_RESPONSE: 0x0f } as const;
/** Error codes of the protocol that a test stages. */
export const CqlErrorCode = { BAD_CREDENTIALS: 0x0100, INVALID: 0x2200 } as const;

function frame(request: Buffer, opcode: number, body: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = 0x80 | (request[0]! & 0x7f); // a response, in the request's protocol version
  header.writeInt16BE(request.readInt16BE(2), 2); // the request's stream
  header[4] = opcode;
  header.writeInt32BE(body.length, 5);
  return Buffer.concat([header, body]);
}

/** A protocol [string]: a 2-byte length, then UTF-8. */
function shortString(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function errorFrame(request: Buffer, code: number, message: string): Buffer {
  const codeBytes = Buffer.alloc(4);
  codeBytes.writeInt32BE(code);
  return frame(request, Opcode.ERROR, Buffer.concat([codeBytes, shortString(message)]));
}

/** The CQL of a QUERY or PREPARE request (a [long string] first in its body); undefined for any other. */
function cqlOf(request: Buffer): string | undefined {
  const opcode = request[4];
  if ((opcode !== Opcode.QUERY && opcode !== Opcode.PREPARE) || request[1]! & FLAG_CUSTOM_PAYLOAD) return undefined;
  const length = request.readInt32BE(HEADER_BYTES);
  return request.toString('utf8', HEADER_BYTES + 4, HEADER_BYTES + 4 + length);
}

export class CqlFaultProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private failing?: { pattern: RegExp; code: number; message: string };
  private refusingCredentials = false;
  /** Requests the proxy answered itself, with a staged error. */
  answered = 0;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** From now until heal(), every QUERY or PREPARE whose CQL matches `pattern` is answered with this error. */
  failMatching(pattern: RegExp, code: number, message: string): void {
    this.failing = { pattern, code, message };
  }

  heal(): void {
    this.failing = undefined;
  }

  /** From now on, the node demands credentials (as with PasswordAuthenticator) and refuses whatever it is sent. */
  refuseCredentials(): void {
    this.refusingCredentials = true;
  }

  async open(): Promise<void> {
    this.server = createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  private relay(client: Socket): void {
    const upstream = connect(this.targetPort, this.targetHost);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= HEADER_BYTES) {
        const size = HEADER_BYTES + pending.readInt32BE(5);
        if (pending.length < size) break;
        const request = pending.subarray(0, size);
        pending = pending.subarray(size);
        const staged = this.stagedAnswer(request);
        if (staged) client.write(staged);
        else upstream.write(request);
      }
    });
  }

  /** What the proxy answers itself instead of relaying `request`, if anything. */
  private stagedAnswer(request: Buffer): Buffer | undefined {
    const opcode = request[4];
    if (this.refusingCredentials && opcode === Opcode.STARTUP) {
      return frame(request, Opcode.AUTHENTICATE, shortString('org.apache.cassandra.auth.PasswordAuthenticator'));
    }
    if (this.refusingCredentials && opcode === Opcode.AUTH_RESPONSE) {
      this.answered += 1;
      return errorFrame(request, CqlErrorCode.BAD_CREDENTIALS, 'Provided username parley and/or password are incorrect');
    }
    const cql = cqlOf(request);
    if (!this.failing || cql === undefined || !this.failing.pattern.test(cql)) return undefined;
    this.answered += 1;
    return errorFrame(request, this.failing.code, this.failing.message);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}

/** A fault proxy of its own in front of this run's Cassandra node, open, and the environment that sends an app's CQL through it. */
export async function cqlFaultProxy(): Promise<{ proxy: CqlFaultProxy; env: { CASSANDRA_CONTACT_POINTS: string } }> {
  const { inject } = await import('vitest');
  const [host, port] = inject('cassandraContactPoint').split(':');
  const proxy = new CqlFaultProxy(host!, Number(port));
  await proxy.open();
  return { proxy, env: { CASSANDRA_CONTACT_POINTS: `127.0.0.1:${proxy.port}` } };
}
