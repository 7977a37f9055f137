/**
 * Queries and mutations run as JavaScript that graphql-jit compiles for their
 * document and operation, instead of through graphql-js's interpreter, which
 * pays a promise, a path and a lookup per field of every item of every page.
 *
 * Subscriptions keep Yoga's executor: their streams, ended with their session
 * and counted while live (live-subscriptions.ts), are graphql-js's subscribe.
 *
 * Only execution changes. Parsing, validation (armor's limits) and the hooks
 * around execution (error masking, metrics, tracing) run as before, and the
 * cost limit is Pothos' check in the root resolvers, which graphql-jit calls
 * with a complete resolve info.
 */
import { getVariableValues } from '@graphql-tools/executor';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import {
  getNamedType,
  getOperationAST,
  isSpecifiedScalarType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type Source,
} from 'graphql';
import type { Plugin as YogaPlugin } from 'graphql-yoga';

type Execute = (args: ExecutionArgs) => ReturnType<CompiledQuery['query']>;
type Result = Awaited<ReturnType<Execute>>;

export interface JitLimits {
  /** The run of an operation that compiles it; the runs before are interpreted. */
  compileOnRun: number;
  /** Larger operations (selections, fragments expanded) are never compiled. */
  maxSelections: number;
  /** Documents whose operations are remembered, compiled or counted. */
  operationsKept: number;
}

export interface Compiled {
  schema: GraphQLSchema;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  query: CompiledQuery['query'];
}

/**
 * The cache is this app's own: a compiled operation holds the resolvers of the
 * moment it was compiled, and tracing wraps them in place when its app is
 * built, before that app executes anything.
 */
export function useJitExecution(cache: CompiledOperations): YogaPlugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const compiled = cache.get(args.schema, args.document, args.operationName);
      if (compiled) setExecuteFn(((a: ExecutionArgs) => runCompiled(compiled, a, executeFn as Execute)) as typeof executeFn);
    },
  };
}

/**
 * Variables are first coerced as Yoga's executor does: when that fails, the
 * request goes to Yoga's executor, whose errors (messages, input paths, HTTP
 * 400) are the API's. graphql-jit then coerces the client's variables itself;
 * it cannot be given the values coerced here, since it would parse them again
 * and a scalar's parseValue takes the client's form (DateTime: text, not a Date).
 */
function runCompiled(compiled: Compiled, args: ExecutionArgs, yogaExecute: Execute): ReturnType<Execute> {
  if (!variablesCoerce(compiled, args.variableValues)) return yogaExecute(args);
  return executeCompiled(compiled, args.contextValue, args.variableValues, args.rootValue);
}

/** Whether the variables coerce as Yoga's executor coerces them; those that do not are Yoga's to answer. */
export function variablesCoerce(compiled: Compiled, variableValues: Record<string, unknown> | null | undefined): boolean {
  return !getVariableValues(compiled.schema, compiled.operation.variableDefinitions ?? [], variableValues ?? {}).errors;
}

/** The result of a compiled operation, whose variables coerce (variablesCoerce). */
export function executeCompiled(
  compiled: Compiled,
  contextValue: unknown,
  variableValues: Record<string, unknown> | null | undefined,
  rootValue?: unknown,
): ReturnType<Execute> {
  const result = compiled.query(rootValue, contextValue, variableValues ?? {});
  const source = compiled.document.loc?.source;
  return result instanceof Promise ? result.then((r) => located(r, source)) : located(result, source);
}

/**
 * graphql-jit's errors carry their locations as lines and columns only, and
 * Yoga rebuilds each error from its nodes, or source and positions, before
 * sending it: they would lose their locations. Each is given the source and
 * the positions graphql-js would have given it (in place: a new error per
 * error was one more costly construction on every refused request).
 */
function located(result: Result, source: Source | undefined): Result {
  if (!result.errors || !source) return result;
  const lineStarts = [0];
  for (const m of source.body.matchAll(/\r\n|[\n\r]/g)) lineStarts.push(m.index + m[0].length);
  for (const e of result.errors) {
    if (e.source || !e.locations) continue;
    Object.assign(e, { source, positions: e.locations.map(({ line, column }) => lineStarts[line - 1]! + column - 1) });
  }
  return result;
}

/**
 * What is known of each operation, by document: its runs so far until it is
 * compiled, then its compiled form, or null when it stays interpreted. Yoga's
 * parser cache hands out one document object per distinct text, so the
 * object's identity is the key.
 *
 * Every document here reached execution, so Yoga parsed and validated it
 * (limits and trusted documents included): those that have a compiled
 * operation are also found by their text, for the JSON fast path to run
 * without parsing or validating them again (prepared()).
 */
export class CompiledOperations {
  /** Each document's operations by name; null stands for no name given (a document of one operation). */
  private readonly byDocument = new Map<DocumentNode, Map<string | null, Compiled | null | number>>();
  private readonly byText = new Map<string, DocumentNode>();

  constructor(private readonly limits: JitLimits) {}

  get(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Compiled | null {
    const operations = this.touch(document) ?? new Map<string | null, Compiled | null | number>();
    this.keep(document, operations);
    const key = operationName ?? null;
    const known = operations.get(key);
    if (typeof known === 'object') return known;
    const operation = getOperationAST(document, operationName);
    // No such operation: Yoga's executor says so. Not recorded, so made-up names cannot grow the entry.
    if (!operation) return null;
    const runs = (known ?? 0) + 1;
    const compiled = runs < this.limits.compileOnRun ? runs : compile(schema, document, operation, this.limits.maxSelections);
    operations.set(key, compiled);
    if (typeof compiled === 'number' || !compiled) return null;
    const text = document.loc?.source.body;
    if (text !== undefined) this.byText.set(text, document);
    return compiled;
  }

  /**
   * The compiled operation of a document Yoga has parsed, validated and run
   * before, by the document's text and the operation's name (as
   * getOperationAST picks: absent for a document of one operation).
   */
  prepared(text: string, operationName: string | null | undefined): Compiled | undefined {
    const document = this.byText.get(text);
    const operations = document && this.touch(document);
    if (!operations) return undefined;
    this.keep(document, operations);
    const known = operations.get(operationName ?? null);
    return typeof known === 'object' && known !== null ? known : undefined;
  }

  /** A document's entry, taken out to be put back as the most recently used. */
  private touch(document: DocumentNode): Map<string | null, Compiled | null | number> | undefined {
    const operations = this.byDocument.get(document);
    if (operations) this.byDocument.delete(document);
    return operations;
  }

  /** A Map iterates in insertion order: re-inserted on each use, its first key is the least recently used. */
  private keep(document: DocumentNode, operations: Map<string | null, Compiled | null | number>): void {
    this.byDocument.set(document, operations);
    if (this.byDocument.size <= this.limits.operationsKept) return;
    const oldest = this.byDocument.keys().next().value!;
    this.byDocument.delete(oldest);
    const text = oldest.loc?.source.body;
    if (text !== undefined && this.byText.get(text) === oldest) this.byText.delete(text);
  }
}

function compile(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, maxSelections: number): Compiled | null {
  if (operation.operation === 'subscription' || !defaultsSurviveJit(schema, operation)) return null;
  if (!selectionsWithin(document, operation, maxSelections)) return null;
  const compiled = compileQuery(schema, document, operation.name?.value);
  // A document graphql-jit cannot compile still runs, interpreted.
  return isCompiledQuery(compiled) ? { schema, document, operation, query: compiled.query } : null;
}

/**
 * graphql-jit writes a variable's default value into its code as JSON: a
 * default of a custom scalar (a DateTime's Date), an enum or an input object
 * would not come out as graphql-js coerces it. And it ignores the default of
 * a non-null variable (`$n: Int! = 5`, left out, is "not provided" to it,
 * 5 to graphql-js). Such operations stay interpreted.
 */
function defaultsSurviveJit(schema: GraphQLSchema, operation: OperationDefinitionNode): boolean {
  return (operation.variableDefinitions ?? []).every((definition) => {
    if (!definition.defaultValue) return true;
    if (definition.type.kind === Kind.NON_NULL_TYPE) return false;
    const type = typeFromAST(schema, definition.type);
    return type !== undefined && isSpecifiedScalarType(getNamedType(type));
  });
}

/**
 * Whether the operation has at most `max` selections, its fragments expanded
 * wherever they are spread (as graphql-jit compiles them). Counting stops past
 * `max`, so a document of fragments spread in fragments costs no more to count.
 */
function selectionsWithin(document: DocumentNode, operation: OperationDefinitionNode, max: number): boolean {
  const fragments = new Map<string, SelectionSetNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d.selectionSet);
  let left = max;
  const within = (set: SelectionSetNode | undefined): boolean =>
    set === undefined ||
    set.selections.every((s) => {
      if (--left < 0) return false;
      if (s.kind === Kind.FIELD) return within(s.selectionSet);
      return within(s.kind === Kind.INLINE_FRAGMENT ? s.selectionSet : fragments.get(s.name.value));
    });
  return within(operation.selectionSet);
}
