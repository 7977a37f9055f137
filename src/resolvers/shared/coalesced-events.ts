/**
 * Live events coalesced per subject: a burst of changes to one thing (fifty
 * people adding 👍 to one message, a room's readers moving their markers)
 * makes one event per instance and window, carrying the state as it is when
 * it is sent, rather than one event per change.
 */
import type { Logger } from 'pino';

interface Due {
  timer: NodeJS.Timeout;
  send: () => Promise<void>;
}

export class CoalescedEvents {
  /** Subjects with an event due, by key. */
  private readonly due = new Map<string, Due>();
  /** What the next event of each key carries, gathered over its window (see add). */
  private readonly gathered = new Map<string, Set<string>>();

  constructor(
    private readonly windowMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * The subject `key` changed: `send` runs once the window has passed (once
   * for every change inside it: the first change's `send`). Its failure loses
   * a live event, never a change (they are stored): it is logged.
   */
  changed(key: string, send: () => Promise<void>): void {
    if (this.due.has(key)) return;
    const timer = setTimeout(() => void this.run(key), this.windowMs);
    this.due.set(key, { timer, send });
  }

  /** Adds `item` to what the next event of `key` carries: `send` gets every item added within its window, once. */
  add(key: string, item: string, send: (items: string[]) => Promise<void>): void {
    const items = this.gathered.get(key) ?? new Set<string>();
    items.add(item);
    this.gathered.set(key, items);
    this.changed(key, async () => {
      const all = [...(this.gathered.get(key) ?? [])].sort();
      this.gathered.delete(key);
      await send(all);
    });
  }

  /** Sends every event still due now (the instance is stopping, its pub/sub still open). */
  async flush(): Promise<void> {
    await Promise.all([...this.due.keys()].map((key) => this.run(key)));
  }

  private async run(key: string): Promise<void> {
    const due = this.due.get(key);
    if (!due) return;
    clearTimeout(due.timer);
    this.due.delete(key);
    await due.send().catch((err) => this.logger.warn({ err }, 'Coalesced live event not published'));
  }
}
