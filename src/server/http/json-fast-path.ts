/**
 * The request almost every client sends, a POST of a JSON query or mutation,
 * served without Yoga's fetch-API layer (a whatwg-node Request per
 * request, its onRequest, onRequestParse and onResultProcess hooks, a
 * Response and its copy onto the socket were the cost that set Parley apart
 * from the same schema in Mercurius).
 *
 * Only the HTTP layer is left out. The operation runs through Yoga's own
 * getResultForParams: every onParams hook (trusted documents, Yoga's check of
 * the parameters), envelop's parse, validate, context and execute with every
 * plugin (limits, masking, compiled execution, metrics, tracing's operation
 * span), and the status, the headers and the body are those Yoga's result
 * processor would make (src/server/http/regular-answer.ts), so the answer is the
 * one Yoga would give, byte for byte (test/server/json-fast-path.test.ts compares).
 *
 * Prepared operations skip Yoga's pipeline as well. An operation Yoga has
 * parsed, validated (limits included) and compiled (src/server/jit-execution.ts
 * keeps it by its text) needs none of that again: its later runs build the
 * context, run the compiled code and mask the errors as Yoga's masking does,
 * and count in the metrics as Yoga's plugins count them. Per request that is
 * what envelop's orchestration of every plugin's hooks costs. Anything else the pipeline would do first (a refused token,
 * variables that do not coerce) sends the request through the pipeline, which
 * answers it; with traces on, every operation goes through it, for its span.
 *
 * What takes this path is decided before anything runs, from the headers
 * and then the body: anything this file does not know to be an ordinary
 * query or mutation (another method, path or content type, a browser's
 * cross-origin request, an Accept header that wants a stream, a body that is
 * not one JSON object of the usual parameters, a subscription, a document
 * that does not parse) goes to Yoga whole, its body handed over as read.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { GraphQLError, parse, type ExecutionResult, type OperationTypeNode } from 'graphql';
import { createGraphQLError, getInstrumented, isAsyncIterable, type YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { TrustedDocuments } from './trusted-documents.js';
import { maskError } from '../error-masking.js';
import { executeCompiled, variablesCoerce, type Compiled, type CompiledOperations } from '../jit-execution.js';
import type { PreparedOperationMetrics } from '../../observability/metrics-plugins.js';
import { regularAnswer } from './regular-answer.js';
import type { Shedding } from './load-shedding.js';
import { carriesIdempotencyKey } from '../idempotency.js';

type Result = ExecutionResult | AsyncIterable<ExecutionResult>;
type Params = YogaInitialContext['params'] & { documentId?: string };

/** What the fast path uses of the Yoga instance: its request listener and its operation pipeline. */
export interface YogaPipeline {
  (req: IncomingMessage, res: ServerResponse): unknown;
  /** Yoga's masking of an operation's errors (logging what it masks), applied as Yoga applies it. */
  maskedErrorsOpts: { maskError: (error: GraphQLError, message: string) => Error; errorMessage: string } | null;
  getResultForParams(payload: { params: Params; request: Request }, context: Record<string, unknown>): Result | Promise<Result>;
  instrumentation?: { operation?: unknown; request?: unknown; requestParse?: unknown; resultProcess?: unknown };
  waitUntil(promise: Promise<unknown>): void;
  graphqlEndpoint: string;
}

export interface FastPathOptions {
  /** Bodies above this go to Yoga, which refuses them (413). */
  maxBodyBytes: number;
  /** Documents longer than this in tokens are not parsed here (Yoga's limit refuses them). */
  maxTokens: number;
  trusted: TrustedDocuments;
  logger: Logger;
  /**
   * Operations Yoga has parsed, validated and compiled, run here without its
   * pipeline in a context from `context`, counted by `metrics` (when on);
   * absent, every operation goes through Yoga's pipeline.
   */
  prepared?: {
    operations: CompiledOperations;
    context: (req: IncomingMessage) => Promise<unknown>;
    metrics?: PreparedOperationMetrics;
    /** Operations answered, while they would be refused, as their last refused run was (load-shedding.ts). */
    shedding?: Shedding;
  };
}

/**
 * A request listener that serves ordinary JSON queries and mutations itself
 * and hands everything else to `yoga`. Yoga with instrumentation of the HTTP
 * layer itself (none of Parley's plugins has any) is served by Yoga alone.
 */
export function withJsonFastPath(yoga: YogaPipeline, options: FastPathOptions): RequestListener {
  const { instrumentation } = yoga;
  if (instrumentation?.request || instrumentation?.requestParse || instrumentation?.resultProcess) return yoga;
  return new JsonFastPath(yoga, options).listener;
}

/** The fast path's listener and the steps it takes: which requests it serves, and how it runs and answers them. */
class JsonFastPath {
  private readonly endpoint: string;
  private readonly kinds: OperationKinds;
  private readonly unexpected: ReturnType<typeof maskError>;
  private readonly mediaTypes = new AcceptedMediaTypes();
  /** Operations run without the pipeline; none when tracing instruments operations (its span must cover every one). */
  private readonly prepared: FastPathOptions['prepared'];
  /** Each prepared operation's last refused result, for shedding (its errors are located, not yet masked). */
  private readonly refusals = new WeakMap<Compiled, ExecutionResult>();

  constructor(
    private readonly yoga: YogaPipeline,
    private readonly options: FastPathOptions,
  ) {
    this.endpoint = yoga.graphqlEndpoint;
    this.kinds = new OperationKinds(options.maxTokens);
    this.unexpected = maskError(options.logger);
    this.prepared = yoga.instrumentation?.operation ? undefined : options.prepared;
  }

  readonly listener: RequestListener = (req, res) => {
    const mediaType = ordinaryHeaders(req, this.endpoint, this.options.maxBodyBytes) ? this.mediaTypes.of(req.headers.accept) : undefined;
    const { yoga } = this;
    if (mediaType === undefined) return yoga(req, res);
    // Continued in a promise's reaction, so the request's async context (its id, its logs) carries on.
    readBody(req)
      .then(
        (body) => this.serve(req, res, body, mediaType),
        // The client went away before its body was in: nobody to answer.
        () => res.destroy(),
      )
      .catch((err: unknown) => {
        this.options.logger.error({ err }, 'JSON fast path failed');
        res.destroy();
      });
  };

  private serve(req: IncomingMessage, res: ServerResponse, body: Buffer, mediaType: string): unknown {
    const params = ordinaryParams(body);
    const text = params && this.documentText(params);
    if (text === undefined) return this.handOver(req, res, body);
    const compiled = this.prepared?.operations.prepared(text, params!.operationName);
    // A request with an idempotency key runs through the pipeline, whose plugin (src/server/idempotency.ts) keeps its answer.
    if (compiled && !carriesIdempotencyKey(req.headers, params!.extensions)) return this.runPrepared(req, res, params!, compiled, mediaType);
    const kind = this.kinds.of(text, params!.operationName ?? undefined);
    if (kind !== 'query' && kind !== 'mutation') return this.handOver(req, res, body);
    return this.viaPipeline(req, res, params!, mediaType);
  }

  private run(params: Params, request: Request, context: Record<string, unknown>): Result | Promise<Result> {
    const { yoga } = this;
    const operation = yoga.instrumentation?.operation;
    if (!operation) return yoga.getResultForParams({ params, request }, context);
    // As Yoga's own handler runs it, so tracing's operation span covers the operation alike.
    const instrumented = getInstrumented({ context, request }) as { asyncFn: (hook: unknown, fn: typeof yoga.getResultForParams) => typeof yoga.getResultForParams };
    return instrumented.asyncFn(operation, yoga.getResultForParams)({ params, request }, context);
  }

  private viaPipeline(req: IncomingMessage, res: ServerResponse, params: Params, mediaType: string): Promise<void> {
    if (this.options.logger.isLevelEnabled('trace')) this.options.logger.trace('served by the JSON fast path');
    const context: Record<string, unknown> = { req, res, waitUntil: this.yoga.waitUntil };
    return Promise.resolve()
      .then(() => this.run(params, new NodeRequest(req, this.endpoint) as unknown as Request, context))
      .then(
        (result) => send(res, ordinary(result), mediaType),
        // Yoga's pipeline answers the operation's own errors; what it throws (a context that could not be built, a bug) too.
        (err: unknown) => send(res, { errors: [this.thrown(err)] }, mediaType),
      );
  }

  /**
   * A prepared operation, run as Yoga's pipeline would run it once past
   * parsing and validation: context, compiled execution, Yoga's masking of
   * the errors. Variables that do not coerce go through the pipeline, which
   * answers them with the errors it gives (nothing has run yet, not even
   * the token check); a context that cannot be built (a refused token,
   * storage down) is answered as the pipeline answers it.
   */
  private async runPrepared(req: IncomingMessage, res: ServerResponse, params: Params, compiled: Compiled, mediaType: string): Promise<void> {
    if (!variablesCoerce(compiled, params.variables)) return this.viaPipeline(req, res, params, mediaType);
    const { context, metrics, shedding } = this.prepared!;
    const { logger } = this.options;
    const run = { req, document: compiled.document, operationName: params.operationName, contextSeconds: 0 };
    const refusal = shedding?.refusesNow(compiled, req) ? this.refusals.get(compiled) : undefined;
    if (refusal) {
      if (logger.isLevelEnabled('trace')) logger.trace('refused as its last run was (load shedding)');
      this.counted(() => metrics?.ran({ ...run, executeSeconds: 0, result: refusal }));
      return send(res, this.masked(refusal), mediaType);
    }
    if (logger.isLevelEnabled('trace')) logger.trace('served as a prepared operation');
    const started = performance.now();
    let contextValue: unknown;
    try {
      contextValue = await context(req);
    } catch (err) {
      run.contextSeconds = (performance.now() - started) / 1000;
      this.counted(() => metrics?.contextFailed({ ...run, error: err }));
      return send(res, { errors: [this.thrown(err)] }, mediaType);
    }
    const executing = performance.now();
    run.contextSeconds = (executing - started) / 1000;
    let result: ExecutionResult;
    try {
      result = await executeCompiled(compiled, contextValue, params.variables);
    } catch (err) {
      // graphql-jit answers a resolver's errors in the result; what it throws is not the client's doing.
      return send(res, { errors: [this.thrown(err)] }, mediaType);
    }
    const executeSeconds = (performance.now() - executing) / 1000;
    if (shedding?.isRefusal(compiled, result)) this.refusals.set(compiled, result);
    this.counted(() => metrics?.ran({ ...run, executeSeconds, result }));
    send(res, this.masked(result), mediaType);
  }

  /** Metrics that fail must not cost the client its answer (the operation has run). */
  private counted(record: () => void): void {
    try {
      record();
    } catch (err) {
      this.options.logger.error({ err }, 'metrics of a prepared operation failed');
    }
  }

  /**
   * What the pipeline throws, answered as Yoga's handler answers it: masked
   * by Yoga's masker, which logs what it masks and leaves an error it has
   * masked already as it is (a context's error is masked where it is thrown).
   */
  private thrown(err: unknown): GraphQLError {
    const masking = this.yoga.maskedErrorsOpts;
    const masked = masking ? masking.maskError(err as GraphQLError, masking.errorMessage) : this.unexpected(err);
    return masked instanceof GraphQLError ? masked : createGraphQLError(masked.message, { originalError: masked });
  }

  /** As Yoga's masking plugin does it after execution. */
  private masked(result: ExecutionResult): ExecutionResult {
    const masking = this.yoga.maskedErrorsOpts;
    if (!result.errors || !masking) return result;
    return { ...result, errors: result.errors.map((e) => masking.maskError(e, masking.errorMessage) as GraphQLError) };
  }

  /** Yoga's listener, given the body already read (whatwg-node takes a read body from `req.body`). */
  private handOver(req: IncomingMessage, res: ServerResponse, body: Buffer): unknown {
    (req as IncomingMessage & { body?: Buffer }).body = body;
    const { yoga } = this;
    return yoga(req, res);
  }

  /** The document the parameters name (sent, or trusted by id), or undefined for Yoga to refuse. */
  private documentText(params: Params): string | undefined {
    let text: string | undefined;
    try {
      text = this.options.trusted.resolve(params) ?? params.query;
    } catch {
      return undefined; // Yoga's onParams hook refuses it, with its own code.
    }
    return typeof text === 'string' ? text : undefined;
  }
}

/** POST to the endpoint, JSON with a length within the limit, from no foreign page (those need CORS, Yoga's). */
function ordinaryHeaders(req: IncomingMessage, endpoint: string, maxBodyBytes: number): boolean {
  if (req.method !== 'POST' || req.url !== endpoint) return false;
  const h = req.headers;
  if (h.origin !== undefined || h['transfer-encoding'] !== undefined) return false;
  const length = Number(h['content-length']);
  if (!(length > 0 && length <= maxBodyBytes)) return false;
  const type = h['content-type']?.toLowerCase();
  return type === 'application/json' || type === 'application/json; charset=utf-8' || type === 'application/json;charset=utf-8';
}

/** Why a body never came; one object, since every request's stream closes, most after their end. */
const CLOSED_EARLY = new Error('request closed before its body ended');

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.once('error', reject);
    req.once('close', () => ended || reject(CLOSED_EARLY));
  });
}

const PARAM_NAMES: ReadonlySet<string> = new Set(['query', 'variables', 'operationName', 'extensions', 'documentId']);

/** The body as GraphQL parameters Yoga's checks accept, or undefined for anything else (Yoga answers that). */
function ordinaryParams(body: Buffer): Params | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isPlainObject(value)) return undefined;
  for (const key in value) if (!PARAM_NAMES.has(key)) return undefined;
  const { query, variables, operationName, extensions, documentId } = value;
  if (query !== undefined && typeof query !== 'string') return undefined;
  if (variables != null && !isPlainObject(variables)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (extensions != null && !isPlainObject(extensions)) return undefined;
  // An empty documentId names no trusted document, and Yoga refuses it as a parameter it does not know.
  if (documentId !== undefined && (typeof documentId !== 'string' || documentId === '')) return undefined;
  return value as Params;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A subscription never gets here (isQueryOrMutation): should one, it must not stay subscribed. */
function ordinary(result: Result): ExecutionResult {
  if (!isAsyncIterable(result)) return result;
  void (result as AsyncIterableIterator<unknown>).return?.();
  throw new Error('the JSON fast path ran a subscription');
}

function send(res: ServerResponse, result: ExecutionResult, mediaType: string): void {
  if (res.destroyed || res.writableEnded) return;
  const { status, headers, body } = regularAnswer(result, mediaType);
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The media type Yoga's result processors answer an ordinary (not streamed)
 * result with, for an Accept header, or undefined when its regular processor
 * would not be the one (text/event-stream or multipart/mixed alone).
 * Yoga's rule: the header's utf-8 media types, last first, each against
 * application/graphql-response+json then application/json; the last match wins.
 */
class AcceptedMediaTypes {
  private readonly known = new Map<string, string | undefined>();

  of(accept: string | undefined): string | undefined {
    const header = accept ?? '*/*';
    if (this.known.has(header)) return this.known.get(header);
    const answer = regularMediaType(header);
    // Clients send a handful of distinct headers; a client that varies it on purpose gets no cache entry.
    if (this.known.size < 64) this.known.set(header, answer);
    return answer;
  }
}

const REGULAR_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'];

function regularMediaType(accept: string): string | undefined {
  const asked = accept
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .filter((entry) => (entry.split(';').slice(1).find((p) => p.includes('charset=')) ?? 'charset=utf-8') === 'charset=utf-8')
    .map((entry) => entry.split(';')[0]!)
    .reverse();
  let chosen: string | undefined;
  for (const mediaType of asked) {
    for (const offered of REGULAR_MEDIA_TYPES) if (mediaTypeMatches(mediaType, offered)) chosen = offered;
  }
  return chosen;
}

function mediaTypeMatches(asked: string, offered: string): boolean {
  const [askedType, askedSubtype] = asked.split('/');
  const [type, subtype] = offered.split('/');
  return (askedType === '*' || askedType === type) && (askedSubtype === '*' || askedSubtype === subtype);
}

/**
 * Each document's operations and their kinds, parsed once per distinct text
 * (Yoga parses it again, once, into its own cache). A text that does not
 * parse is remembered as such. The cache starts over when full.
 */
class OperationKinds {
  private readonly byText = new Map<string, Array<[string | undefined, OperationTypeNode]> | null>();
  private static readonly MAX_DOCUMENTS = 1_000;

  constructor(private readonly maxTokens: number) {}

  of(text: string, operationName: string | undefined): OperationTypeNode | undefined {
    let operations = this.byText.get(text);
    if (operations === undefined) {
      operations = this.operationsOf(text);
      if (this.byText.size >= OperationKinds.MAX_DOCUMENTS) this.byText.clear();
      this.byText.set(text, operations);
    }
    if (!operations) return undefined;
    // As getOperationAST picks: by name, or the only one.
    if (operationName !== undefined) return operations.find(([name]) => name === operationName)?.[1];
    return operations.length === 1 ? operations[0]![1] : undefined;
  }

  private operationsOf(text: string): Array<[string | undefined, OperationTypeNode]> | null {
    try {
      const document = parse(text, { noLocation: true, maxTokens: this.maxTokens });
      const operations: Array<[string | undefined, OperationTypeNode]> = [];
      for (const definition of document.definitions) {
        if (definition.kind === 'OperationDefinition') operations.push([definition.name?.value, definition.operation]);
      }
      return operations.length > 0 ? operations : null;
    } catch {
      return null;
    }
  }
}

/**
 * The Request Yoga's hooks see in the operation's context, read from the node
 * request on demand: its method, its URL and its headers. Nothing in the
 * pipeline of an ordinary query or mutation reads its body.
 */
class NodeRequest {
  readonly method: string;

  constructor(
    private readonly req: IncomingMessage,
    private readonly endpoint: string,
  ) {
    this.method = req.method ?? 'POST';
  }

  get url(): string {
    return `http://${this.req.headers.host ?? 'localhost'}${this.endpoint}`;
  }

  get headers(): NodeHeaders {
    return new NodeHeaders(this.req.headers);
  }
}

class NodeHeaders {
  constructor(private readonly headers: IncomingMessage['headers']) {}

  get(name: string): string | null {
    const value = this.headers[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  has(name: string): boolean {
    return this.headers[name.toLowerCase()] !== undefined;
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const name of Object.keys(this.headers)) callback(this.get(name)!, name);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.headers)) yield [name, this.get(name)!];
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}
