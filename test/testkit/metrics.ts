/**
 * Scrapes /metrics as Prometheus does and reads the numbers: a small parser of
 * the text exposition format: samples, and the type each metric declares.
 */
import type { App } from '../../src/app.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export class Scrape {
  readonly samples: Sample[];

  constructor(readonly text: string) {
    this.samples = parseExposition(text);
  }

  /** Sum of the samples named `name` whose labels include `labels`; 0 when there is none. */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.matching(name, labels).reduce((sum, s) => sum + s.value, 0);
  }

  /** The samples named `name` whose labels include `labels`. */
  matching(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }

  has(name: string): boolean {
    return this.samples.some((s) => s.name === name);
  }

  /** The metric's declared type (`# TYPE name counter`), if it is exposed at all, samples or not. */
  type(name: string): string | undefined {
    return new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(this.text)?.[1];
  }
}

/** GET /metrics; fails unless it answers 200 with the Prometheus text format. */
export async function scrape(app: App, token?: string): Promise<Scrape> {
  const res = await fetch(`${app.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  if (!res.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) {
    throw new Error(`/metrics is not Prometheus text: ${res.headers.get('content-type')}`);
  }
  return new Scrape(await res.text());
}

/** The value of one series on a fresh scrape (for polling with `eventually`). */
export async function metricValue(app: App, name: string, labels: Record<string, string> = {}): Promise<number> {
  return (await scrape(app)).value(name, labels);
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const l = LABEL.exec(body);
      if (!l) throw new Error(`bad labels in: ${line}`);
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1]!, labels, value: sampleValue(m[3]!) });
  }
  return samples;
}

function sampleValue(raw: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  return Number(raw); // NaN for "NaN"
}
