/**
 * ReactionChanged events, coalesced per message: a burst of reactions to one
 * message (fifty people adding 👍 at once) makes one event per instance and
 * window, carrying the counts as they are when it is sent, rather than one
 * event per reaction.
 */
import type { Logger } from 'pino';

interface Due {
  timer: NodeJS.Timeout;
  send: () => Promise<void>;
}

export class ReactionEvents {
  /** Messages with an event due, by room and message id. */
  private readonly due = new Map<string, Due>();

  constructor(
    private readonly windowMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * A reaction of this message changed: `send` runs once the window has passed
   * (once for every change inside it). Its failure loses a live event, never a
   * reaction (they are stored): it is logged.
   */
  changed(roomName: string, messageId: string, send: () => Promise<void>): void {
    const key = `${roomName}\u0000${messageId}`;
    if (this.due.has(key)) return;
    const timer = setTimeout(() => void this.run(key), this.windowMs);
    this.due.set(key, { timer, send });
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
    await due.send().catch((err) => this.logger.warn({ err }, 'ReactionChanged not published'));
  }
}
