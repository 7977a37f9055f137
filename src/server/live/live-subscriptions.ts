/**
 * What every subscription's results pass through, whatever its transport:
 * they end with the session that opened it (src/server/live/live-session.ts), and
 * the subscription counts in parley_subscriptions_active until it ends,
 * however it ends. Both are one hand-written iterator with its methods on the
 * prototype, not a wrapper (and closures) each: an idle subscription holds
 * every layer it is wrapped in, and a pending next() in each, for hours.
 */
import { isAsyncIterable, type Plugin as YogaPlugin } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import { refreshLoaders, type Context } from '../../resolvers/context.js';
import { sessionEndResult } from './live-session.js';
import type { Metrics, Transport } from '../../observability/metrics.js';

export function useLiveSubscriptions(metrics: Metrics): YogaPlugin {
  // One hooks object for every subscription: envelop keeps what onSubscribe returns for the stream's life.
  const hooks = {
    onSubscribeResult({ args, result, setResult }: { args: { contextValue: unknown }; result: unknown; setResult: (r: never) => void }) {
      if (!isAsyncIterable(result)) return;
      const ctx = args.contextValue as Context & { ws?: unknown };
      // The subscribe step's loaders (and the rows they cached) serve no event: each event gets fresh ones.
      refreshLoaders(ctx);
      const results = (result as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator]();
      setResult(new LiveResults(results, ctx, metrics, ctx.ws ? 'ws' : 'http') as never);
    },
  };
  return { onSubscribe: () => hooks };
}

class LiveResults implements AsyncIterableIterator<ExecutionResult> {
  private over = false;

  constructor(
    private readonly source: AsyncIterator<ExecutionResult>,
    private readonly ctx: Context,
    private readonly metrics: Metrics,
    private readonly transport: Transport,
  ) {
    metrics.subscriptionStarted(transport);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.over) return Promise.resolve({ value: undefined, done: true });
    return this.source.next().then(
      (step) => this.deliver(step),
      (err: unknown) => {
        this.end();
        throw err;
      },
    );
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    this.end();
    await this.source.return?.();
    return { value: undefined, done: true };
  }

  async throw(err?: unknown): Promise<IteratorResult<ExecutionResult>> {
    await this.return();
    throw err;
  }

  /**
   * A result as it comes (synchronously: no promise per event), or, once the
   * session has ended, one UNAUTHENTICATED error in its place and the end.
   */
  private deliver(step: IteratorResult<ExecutionResult>): IteratorResult<ExecutionResult> | Promise<IteratorResult<ExecutionResult>> {
    if (step.done) {
      this.end();
      return step;
    }
    const ended = sessionEndResult(this.ctx);
    if (!ended) return step;
    return this.return().then(() => ({ value: ended, done: false }));
  }

  private end(): void {
    if (this.over) return;
    this.over = true;
    this.metrics.subscriptionEnded(this.transport);
  }
}
