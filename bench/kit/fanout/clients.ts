/**
 * Subscriber sockets for the fan-out benchmark, in a process of their own so
 * that receiving (hundreds of thousands of frames a second at the top of the
 * ramp) does not share an event loop with the poster. The parent drives it
 * with JSON lines on stdin and reads one JSON line per command on stdout.
 *
 * Parley and the relay floor are read by the very same code: a plain `ws`
 * socket speaking graphql-ws by hand (connection_init, subscribe, next). The
 * frames are scanned with indexOf rather than JSON.parse, so the client's cost
 * per frame stays small and equal for both contenders.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

/**
 * Milliseconds on the machine's monotonic clock, which every process shares
 * (CLOCK_MONOTONIC): a send time stamped by the poster and a receipt stamped
 * here subtract exactly, whatever NTP does to the wall clock meanwhile.
 */
export const clockMs = () => Number(process.hrtime.bigint()) / 1e6;

/** A delivered post's content starts with this, then `<seq>:<sent at, ms since the epoch>:`. */
export const MARK = 'fo:';
/** Latency histogram: 0.1 ms bins up to 60 s (later receipts land in the last bin). */
const BIN_MS = 0.1;
const BINS = 600_000;

export interface OpenCommand {
  /** ws:// URL of the graphql-ws endpoint. */
  url: string;
  /** One socket per token (connectionParams.authorization). */
  tokens: string[];
  query: string;
  variables: Record<string, unknown>;
  /** Sequence numbers stay below this (sizes each socket's bitmap). */
  maxSeq: number;
  /** The loopback address the sockets connect from (each address has its own 64k ports). */
  localAddress?: string;
}

export interface Counts {
  /** Marked frames since the last collect (duplicates included). */
  received: number;
  /** Sockets that have received at least one marked frame since they opened. */
  live: number;
  /** Sockets the server closed since they opened (not reset by collect), by close code. */
  closed: Record<string, number>;
}

export interface Collected extends Counts {
  /** Distinct deliveries of the posts [from, to) not skipped, over every socket. */
  delivered: number;
  lost: number;
  duplicated: number;
  /** Frames whose message id sorts before one the socket already had (history order broken). */
  outOfOrder: number;
  /** Sparse latency histogram: [bin, count] pairs. */
  hist: Array<[number, number]>;
  lastReceipt: number;
  /** Frames that were neither a marked post nor the ack, and the first few of them. */
  other: number;
  otherSamples: string[];
  /** The first marked frame this process received, to compare the contenders' frames. */
  sample: string;
}

/** The parent's handle on one subscriber process. */
export interface FanoutClients {
  /** The subscriber process's id (its CPU is read from /proc). */
  pid: number;
  open(cmd: OpenCommand): Promise<void>;
  counts(): Promise<Counts>;
  collect(from: number, to: number, skip: number[]): Promise<Collected>;
  stop(): Promise<void>;
}

export function startFanoutClients(): FanoutClients {
  const child: ChildProcess = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
    env: { ...process.env, PARLEY_FANOUT_CLIENTS: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting: Array<{ resolve: (v: unknown) => void; reject: (e: Error) => void }> = [];
  let exited = false;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const reply = JSON.parse(line) as { error?: string };
    const w = waiting.shift();
    if (reply.error) w?.reject(new Error(`fan-out clients: ${reply.error}`));
    else w?.resolve(reply);
  });
  child.once('exit', (code) => {
    exited = true;
    for (const w of waiting.splice(0)) w.reject(new Error(`fan-out clients exited with ${code}`));
  });
  // Replies come in command order: each command is answered before the next is read.
  const ask = <T>(cmd: object) =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(new Error('fan-out clients have exited'));
      waiting.push({ resolve: resolve as (v: unknown) => void, reject });
      child.stdin!.write(JSON.stringify(cmd) + '\n');
    });
  return {
    pid: child.pid!,
    open: async (cmd) => void (await ask({ cmd: 'open', ...cmd })),
    counts: () => ask<Counts>({ cmd: 'counts' }),
    collect: (from, to, skip) => ask<Collected>({ cmd: 'collect', from, to, skip }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        // Closing stdin ends the child (it also ends that way if this process dies).
        child.stdin!.end();
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
}

/** One subscriber: what it received, by sequence number, and the newest message id (order key) it had. */
interface Sub {
  seen: Uint8Array;
  lastKey: string;
  live: boolean;
}

if (process.env.PARLEY_FANOUT_CLIENTS) {
  const sockets: WebSocket[] = [];
  const subs: Sub[] = [];
  let hist = new Uint32Array(BINS);
  let received = 0;
  let duplicated = 0;
  let outOfOrder = 0;
  let lastReceipt = 0;
  let other = 0;
  let otherSamples: string[] = [];
  let sample = '';
  const closed: Record<string, number> = {};
  let stopping = false;

  /** A message id is base64url of `m1|room|bucket|timeuuid`; its time fields, high first, sort as the history does. */
  const orderKey = (id: string) => {
    const uuid = Buffer.from(id, 'base64url').toString('latin1').split('|')[3] ?? '';
    return uuid.slice(15, 18) + uuid.slice(9, 13) + uuid.slice(0, 8);
  };

  const onFrame = (sub: Sub, text: string) => {
    const at = clockMs();
    const c = text.indexOf(`"content":"${MARK}`);
    if (c < 0) {
      if (text.includes('"type":"connection_ack"') || text.includes('"type":"ping"') || text.includes('"type":"pong"')) return;
      other++;
      if (otherSamples.length < 3) otherSamples.push(text.slice(0, 300));
      return;
    }
    const start = c + 11 + MARK.length;
    const colon = text.indexOf(':', start);
    const seq = Number(text.slice(start, colon));
    const sentAt = Number(text.slice(colon + 1, text.indexOf(':', colon + 1)));
    received++;
    sample ||= text;
    sub.live = true;
    lastReceipt = at;
    if (sub.seen[seq]) {
      duplicated++;
      return;
    }
    sub.seen[seq] = 1;
    const m = text.indexOf('"message":{"id":"');
    if (m >= 0) {
      const key = orderKey(text.slice(m + 17, text.indexOf('"', m + 17)));
      if (key < sub.lastKey) outOfOrder++;
      else sub.lastKey = key;
    }
    hist[Math.min(BINS - 1, Math.max(0, Math.round((at - sentAt) / BIN_MS)))]!++;
  };

  const openOne = (cmd: OpenCommand, token: string) =>
    new Promise<void>((resolve, reject) => {
      const sub: Sub = { seen: new Uint8Array(cmd.maxSeq), lastKey: '', live: false };
      const ws = new WebSocket(cmd.url, 'graphql-transport-ws', { perMessageDeflate: false, localAddress: cmd.localAddress });
      let acked = false;
      ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
      ws.on('message', (data) => {
        const text = data.toString();
        if (!acked && text.includes('"type":"connection_ack"')) {
          acked = true;
          ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: cmd.query, variables: cmd.variables } }));
          resolve();
        }
        onFrame(sub, text);
      });
      // ws answers the server's keep-alive pings itself, as a browser does.
      ws.on('error', (err) => !acked && reject(err));
      ws.on('close', (code) => {
        if (!acked) reject(new Error(`socket closed before connection_ack (${code})`));
        else if (!stopping) closed[code] = (closed[code] ?? 0) + 1;
      });
      sockets.push(ws);
      subs.push(sub);
    });

  const handle = async (msg: { cmd: string } & Record<string, unknown>): Promise<object> => {
    switch (msg.cmd) {
      case 'open': {
        const cmd = msg as unknown as OpenCommand;
        // In batches: a thousand simultaneous handshakes would only measure the accept queue.
        for (let i = 0; i < cmd.tokens.length; i += 50) await Promise.all(cmd.tokens.slice(i, i + 50).map((t) => openOne(cmd, t)));
        return { opened: sockets.length };
      }
      case 'counts':
        return { received, live: subs.filter((s) => s.live).length, closed } satisfies Counts;
      case 'collect': {
        const { from, to } = msg as unknown as { from: number; to: number };
        const skip = new Set(msg.skip as number[]);
        let delivered = 0;
        let lost = 0;
        for (const sub of subs) {
          for (let seq = from; seq < to; seq++) {
            if (skip.has(seq)) continue;
            if (sub.seen[seq]) delivered++;
            else lost++;
          }
        }
        const sparse: Array<[number, number]> = [];
        hist.forEach((n, bin) => n > 0 && sparse.push([bin, n]));
        const out: Collected = { received, live: subs.filter((s) => s.live).length, closed, delivered, lost, duplicated, outOfOrder, hist: sparse, lastReceipt, other, otherSamples, sample };
        hist = new Uint32Array(BINS);
        received = duplicated = outOfOrder = other = lastReceipt = 0;
        otherSamples = [];
        return out;
      }
      default:
        throw new Error(`unknown command ${msg.cmd}`);
    }
  };

  // One command at a time, in order, so replies match the parent's queue.
  let chain = Promise.resolve();
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    chain = chain.then(async () => {
      const reply = await handle(JSON.parse(line)).catch((err: Error) => ({ error: err.message }));
      process.stdout.write(JSON.stringify(reply) + '\n');
    });
  });
  lines.on('close', () => {
    stopping = true;
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  });
}

export { BIN_MS };
