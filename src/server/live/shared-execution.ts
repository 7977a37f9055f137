/**
 * A subscription event is executed once per instance for all the subscribers
 * who would get the same result, not once per subscriber (with a
 * thousand subscribers of a room, executing each event's selection per
 * subscriber was a large share of the fan-out's CPU).
 *
 * The engine's subscribe (graphql-tools: the source stream, then an execute
 * per subscriber and event) is replaced by graphql's createSourceEventStream
 * and, per event, one execute per sharing key: the document, the operation
 * name, the variables, and the viewer's login when the operation selects a
 * field marked readsViewer (src/schema/shared/viewer-dependent.ts). Results
 * are kept by the event object itself: both pub/sub engines hand one parsed
 * object to every listener of the instance (src/pubsub/listeners.ts), so the
 * results go when the last subscriber has taken the event.
 *
 * Only that execution is shared. What a subscriber's stream yields stays its
 * own (it skips its own typing, re-checks its access, and its AccessEnded or
 * FeedInterrupted items are objects of its own, never shared), and every
 * plugin's hooks (masking, error metrics, the session's end) run on each
 * subscriber's results, as before. The execution runs with the context of the
 * first subscriber to take the event; by the rule above, no field it runs
 * reads that context's viewer unless the key carries it.
 *
 * And where the transport offers it (graphql-ws: websocket.ts), a shared
 * result goes to the subscriber's socket directly: the source stream hands
 * its event over as it arrives (pubsub.ts's DirectConsumer), and the result,
 * executed once for the key, is written as a frame at once, without a
 * promise or an iterator step per subscriber in the layers above. Only
 * results those layers would pass on unchanged go that way: one with errors
 * (masking, error metrics), one still being executed, or one for a session
 * that has ended (live-subscriptions.ts answers it) goes the long way, and
 * the source holds later events back until it has.
 *
 * What an event's executions read is shared too, across keys and viewers:
 * each runs with its subscriber's context over one set of loaders per event
 * (contextForEvent in src/resolvers/context.ts), so a document executed once
 * per viewer still reads a poll's votes, a room's readers or a forwarded
 * original once per event, and each viewer's answer (myAnswers, seenBy, who
 * may see forwardedFrom) is worked out from that one read.
 */
import {
  createSourceEventStream,
  execute,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
} from 'graphql';
import { isAsyncIterable, isPromise, type Plugin as YogaPlugin } from 'graphql-yoga';
import { contextForEvent, type Context, type RequestValues } from '../../resolvers/context.js';
import { isDirectlyTakeable, TAKE_DIRECTLY, type DirectConsumer } from '../../pubsub/pubsub.js';
import { ViewerDependence } from '../viewer-dependence.js';

type Result = ExecutionResult | Promise<ExecutionResult>;
type Subscribe = (args: ExecutionArgs) => unknown;

/** Where a subscription's results can be written at once (a graphql-ws operation's socket). */
export interface DirectSink {
  /** Delivers the result itself, or returns false to let it go through every layer's hooks. */
  deliver(result: ExecutionResult): boolean;
}

const DIRECT_SINK = Symbol('directSink');

/** The transport offers a subscription's context a sink for its results. */
export function offerDirectSink(contextValue: object, sink: DirectSink): void {
  (contextValue as { [DIRECT_SINK]?: DirectSink })[DIRECT_SINK] = sink;
}

export function useSharedEventExecution(): YogaPlugin {
  const sharing = new EventSharing();
  return {
    onSubscribe: ({ subscribeFn, setSubscribeFn }) => {
      setSubscribeFn(((args: ExecutionArgs) => sharing.subscribe(args, subscribeFn as Subscribe)) as never);
    },
  };
}

/** The results of the events being delivered, and what tells one subscription's key from another's. */
export class EventSharing {
  /** Each event's results by sharing key, for as long as some subscriber's queue holds the event. */
  private readonly results = new WeakMap<object, Map<string, Result>>();
  /** Each event's loaders, shared by every execution of it, for as long as the event is held. */
  private readonly loaders = new WeakMap<object, RequestValues>();
  private readonly documentIds = new WeakMap<DocumentNode, number>();
  private nextDocumentId = 0;
  private readonly viewerDependence = new ViewerDependence();

  async subscribe(args: ExecutionArgs, engine: Subscribe): Promise<unknown> {
    // What the engine would refuse (no such operation, variables that do not coerce) gets the engine's own answer.
    if (!isWellFormed(args)) return engine(args);
    const source = await createSourceEventStream(args);
    if (!isAsyncIterable(source)) return source;
    const results = new SharedEventResults(source[Symbol.asyncIterator](), args, this.keyOf(args), this);
    results.takeDirectlyIfOffered();
    return results;
  }

  /** The result of executing the operation over `event`, made by the first subscriber of `key` to ask. */
  resultFor(event: unknown, args: ExecutionArgs, key: string): Result {
    if (typeof event !== 'object' || event === null) return execute({ ...args, rootValue: event });
    let byKey = this.results.get(event);
    if (!byKey) this.results.set(event, (byKey = new Map()));
    let result = byKey.get(key);
    if (!result) byKey.set(key, (result = execute({ ...args, rootValue: event, contextValue: this.contextFor(event, args.contextValue as Context) })));
    return result;
  }

  /** The subscriber's context for executing `event`, over the event's loaders. */
  private contextFor(event: object, ctx: Context): Context {
    let loaders = this.loaders.get(event);
    if (!loaders) this.loaders.set(event, (loaders = new Map()));
    return contextForEvent(ctx, loaders);
  }

  /**
   * Made once per subscription. The parts cannot run into each other: an
   * operation name is a GraphQL name, and JSON escapes control characters.
   */
  private keyOf(args: ExecutionArgs): string {
    let id = this.documentIds.get(args.document);
    if (id === undefined) this.documentIds.set(args.document, (id = this.nextDocumentId++));
    const key = `${id}\n${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? {})}`;
    if (!this.viewerDependence.of(args.schema, args.document, args.operationName)) return key;
    return `${key}\n${(args.contextValue as Context).viewer?.login ?? ''}`;
  }
}

function isWellFormed({ schema, document, operationName, variableValues }: ExecutionArgs): boolean {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== 'subscription') return false;
  return !getVariableValues(schema, operation.variableDefinitions ?? [], variableValues ?? {}, { maxErrors: 1 }).errors;
}

/**
 * One subscriber's results: one hand-written iterator over its source stream,
 * where graphql-tools had a mapping iterator, a flattening one, and an async
 * generator per event. It holds its source, its arguments and its key.
 */
class SharedEventResults implements AsyncIterableIterator<ExecutionResult>, DirectConsumer<unknown> {
  private sink: DirectSink | undefined;

  constructor(
    private readonly source: AsyncIterator<unknown>,
    private readonly args: ExecutionArgs,
    private readonly key: string,
    private readonly sharing: EventSharing,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** With a sink offered and a source that can hand events over, results go straight to the sink when they can. */
  takeDirectlyIfOffered(): void {
    const sink = (this.args.contextValue as { [DIRECT_SINK]?: DirectSink } | undefined)?.[DIRECT_SINK];
    if (sink && isDirectlyTakeable(this.source) && this.source[TAKE_DIRECTLY](this)) this.sink = sink;
  }

  /** An event the source hands over: its shared result to the sink, if it is ready and nothing would change it. */
  take(event: unknown): boolean {
    let result: Result;
    try {
      result = this.sharing.resultFor(event, this.args, this.key);
    } catch {
      return false; // next() runs it again, and fails as it always did
    }
    if (isPromise(result) || result.errors?.length) return false;
    return this.sink!.deliver(result);
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    return this.source.next().then(
      (step) => (step.done ? step : this.resultOf(step.value)),
      (err: unknown) => this.abort(sourceError(err, this.args)),
    );
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    await this.source.return?.();
    return { value: undefined, done: true };
  }

  async throw(err?: unknown): Promise<IteratorResult<ExecutionResult>> {
    await this.return();
    throw err;
  }

  private resultOf(event: unknown): IteratorResult<ExecutionResult> | Promise<IteratorResult<ExecutionResult>> {
    let result: Result;
    try {
      result = this.sharing.resultFor(event, this.args, this.key);
    } catch (err) {
      return this.abort(err);
    }
    if (!isPromise(result)) return { value: result, done: false };
    return result.then(
      (value) => ({ value, done: false }),
      (err: unknown) => this.abort(err),
    );
  }

  /** As graphql-tools did: a failure ends the source stream, then is thrown. */
  private abort(err: unknown): Promise<never> {
    const rethrow = () => {
      throw err;
    };
    return Promise.resolve(this.source.return?.()).then(rethrow, rethrow);
  }
}

/** The source stream's own failure, located at the operation as graphql-tools located it. */
function sourceError(err: unknown, args: ExecutionArgs): unknown {
  const operation = getOperationAST(args.document, args.operationName);
  const locate = (e: unknown) =>
    new GraphQLError(e instanceof Error ? e.message : String(e), { originalError: e instanceof Error ? e : undefined, nodes: operation ?? undefined });
  return err instanceof AggregateError ? new AggregateError(err.errors.map(locate), err.message) : locate(err);
}
