/**
 * The driver policies that keep one slow, stalled or just-dead node from holding requests up: where a request goes
 * first, when it is also sent to a second node, and which timeouts are not retried on the same node.
 */
import cassandra from 'cassandra-driver';

const { policies, errors } = cassandra;
type Host = cassandra.Host;

/**
 * The driver's retry rules, but for a batchlog write that timed out: the default retries it on the same
 * coordinator, which picks its batchlog nodes among the same few and waits a whole timeout again; Database.batch
 * runs such a batch unlogged instead, at once.
 */
export class RetryPolicy extends policies.retry.RetryPolicy {
  override onWriteTimeout(): cassandra.policies.retry.DecisionInfo {
    return this.rethrowResult();
  }
}

/**
 * One more execution of an idempotent statement, on the next node of its query plan, when the first has not
 * answered after a delay; the first answer wins. The driver only ever speculates on statements marked idempotent.
 * A read waits `readDelayMs`; a write, which costs its replicas more when run twice, `writeDelayMs`: a write to a
 * healthy coordinator waits for a quorum of replicas, so one slow replica does not hold it back, but a write whose
 * coordinator stalls would otherwise wait for the whole request timeout. Batches are not speculated on: a logged
 * batch sent to a second coordinator waits for the same batchlog nodes (Database.batch runs it unlogged instead).
 * A delay of 0 turns that kind off.
 */
export class SpeculativeExecutions implements cassandra.policies.speculativeExecution.SpeculativeExecutionPolicy {
  constructor(
    private readonly readDelayMs: number,
    private readonly writeDelayMs: number,
  ) {}

  init(): void {}

  shutdown(): void {}

  newPlan(_keyspace: string, queryInfo: string | Array<object>): { nextExecution: () => number } {
    const delay = typeof queryInfo !== 'string' ? 0 : /^\s*SELECT\b/i.test(queryInfo) ? this.readDelayMs : this.writeDelayMs;
    let more = delay > 0 ? 1 : 0;
    return { nextExecution: () => (more-- > 0 ? delay : -1) };
  }

  getOptions(): Map<string, object> {
    return new Map<string, object>([
      ['readDelay', Object(this.readDelayMs)],
      ['writeDelay', Object(this.writeDelayMs)],
      ['maxSpeculativeExecutions', Object(1)],
    ]);
  }
}

/**
 * Which nodes answer, from what the driver saw. A node is not answering once a request to it timed out (the
 * client's own timeout) or an LWT was given up on it (Database.lwt), until it answers one again, an error
 * included (Database probes each such node every 2 s, since no request goes to it while others answer); nor while
 * it has requests in flight and answered none in the last 200-400 ms (the driver's own count). The driver's default
 * health check waits for 10 requests in flight,
 * which a service under steady load never piles on one node: every request routed to a stalled node waited for it.
 * It is the driver's request tracker, passing each outcome on to `next` (the instance's metrics).
 */
// The driver wants an instance of its RequestTracker class, which its typings declare as an interface.
const { RequestTracker } = cassandra.tracker as unknown as { RequestTracker: new () => cassandra.tracker.RequestTracker };

export class NodeHealth extends RequestTracker {
  /** Nodes seen not to answer: no request goes to them while another node answers, until they answer a probe. */
  private readonly silent = new Set<Host>();
  /** When each node last answered anything, an error included (Date.now()). */
  private readonly lastAnswer = new WeakMap<Host, number>();

  constructor(private readonly next?: cassandra.tracker.RequestTracker) {
    super();
  }

  readonly answering = (host: Host): boolean => {
    if (this.silent.has(host)) return false;
    // Both counters are the driver's own, missing from its typings (getResponseCount is internal to it).
    const counted = host as Host & { getInFlight(): number; getResponseCount(): number };
    return !(counted.getInFlight() > 0 && counted.getResponseCount() === 0);
  };

  /** `host` is not answering until it answers a request again. */
  markSilent(host: Host): void {
    this.silent.add(host);
  }

  /** The nodes seen not to answer, to probe (Database): one that answers is counted as answering again. */
  silentHosts(): Host[] {
    return [...this.silent];
  }

  /** How long `host` has answered nothing (Infinity if it never answered). */
  silentForMs(host: Host): number {
    const at = this.lastAnswer.get(host);
    return at === undefined ? Number.POSITIVE_INFINITY : Date.now() - at;
  }

  override onSuccess(host: Host, ...rest: SuccessRest): void {
    this.silent.delete(host);
    this.lastAnswer.set(host, Date.now());
    this.next?.onSuccess(host, ...rest);
  }

  override onError(host: Host, query: string | Array<{ query: string; params?: unknown }>, parameters: unknown[] | Record<string, unknown> | null, executionOptions: cassandra.ExecutionOptions, requestLength: number, err: Error, latency: number[]): void {
    if (err instanceof errors.OperationTimedOutError) this.silent.add(host);
    else if (!(err as { isSocketError?: boolean }).isSocketError) {
      // An error the node sent is an answer.
      this.silent.delete(host);
      this.lastAnswer.set(host, Date.now());
    }
    this.next?.onError(host, query, parameters, executionOptions, requestLength, err, latency);
  }

  override shutdown(): void {
    this.next?.shutdown();
  }
}

type SuccessRest = Parameters<cassandra.tracker.RequestTracker['onSuccess']> extends [Host, ...infer R] ? R : never;

type Plan = (err: Error | null, hosts?: Iterator<Host>) => void;
type PlanOptions = { getRoutingKey(): Buffer | undefined; getKeyspace(): string | undefined; getRawQueryOptions(): object } | undefined;

/** The driver's DefaultLoadBalancingPolicy, with the health check its constructor takes and its typings leave out. */
const HealthCheckedDefault = policies.loadBalancing.DefaultLoadBalancingPolicy as unknown as new (options: {
  localDc: string;
  healthCheck: (host: Host) => boolean;
}) => {
  init(client: cassandra.Client, hosts: unknown, callback: (err?: Error) => void): void;
  newQueryPlan(keyspace: string, executionOptions: PlanOptions, callback: Plan): void;
};

/**
 * The driver's default balancing (token aware, the local data center, the less busy of two replicas first), with
 * NodeHealth's `answering` as its health check: a node not answering goes to the back of each query plan (StallAware),
 * so new requests, speculative executions and retries go to the others.
 */
export function stallAwareBalancing(localDc: string, answering: (host: Host) => boolean): cassandra.policies.loadBalancing.LoadBalancingPolicy {
  return new StallAware({ localDc, healthCheck: answering }) as unknown as cassandra.policies.loadBalancing.LoadBalancingPolicy;
}

/**
 * HealthCheckedDefault, with the hosts that answer first in every plan. The driver's own health check misses two cases:
 * - a plan without a routing key (a statement's preparation, which the driver sends before the statement first runs,
 *   and any statement outside a keyspace's partitions) is round robin over the local hosts: one of every three first
 *   runs of a statement waited a whole request timeout on a stalled node;
 * - a partition's replicas are reordered only while most of them answer. A node slowed by a stalled one (its requests
 *   wait on the stalled replica) is, for moments, in flight with no answer for 200 ms: two of three then count as not
 *   answering, the driver kept its order, and one request in three went to the stalled node and waited there the
 *   whole request timeout. Here the one that answers goes first.
 * Among those that answer, and among those that do not, the driver's order stands: the replicas, the less busy of two
 * first.
 */
class StallAware extends HealthCheckedDefault {
  constructor(private readonly options: { localDc: string; healthCheck: (host: Host) => boolean }) {
    super(options);
  }

  override newQueryPlan(keyspace: string, executionOptions: PlanOptions, callback: Plan): void {
    super.newQueryPlan(keyspace, executionOptions, (err, plan) => (err ? callback(err, plan) : callback(null, answeringFirst(plan!, this.options.healthCheck))));
  }
}

function* answeringFirst(plan: Iterator<Host>, answering: (host: Host) => boolean): Generator<Host> {
  const later: Host[] = [];
  for (let next = plan.next(); !next.done; next = plan.next()) {
    if (answering(next.value)) yield next.value;
    else later.push(next.value);
  }
  yield* later;
}

/** The execution profile lightweight transactions and SERIAL reads run with (Database.lwt, Database.readSerial). */
export const LWT_PROFILE = 'lwt';

/**
 * For lightweight transactions and SERIAL reads: each partition's replicas in ring order, its primary replica first,
 * then every other local node as the default plan has them. While the primary answers, every instance has the LWTs
 * of one partition coordinated by that one node: Paxos rounds of one partition begun by several coordinators
 * pre-empt each other's ballots and time out under contention (races at RF 3 answered SERVICE_UNAVAILABLE when
 * they were spread). A replica not answering goes to the back, as in stallAwareBalancing.
 */
export function primaryFirstBalancing(localDc: string, answering: (host: Host) => boolean): cassandra.policies.loadBalancing.LoadBalancingPolicy {
  class PrimaryFirst extends StallAware {
    private client?: cassandra.Client;

    override init(client: cassandra.Client, hosts: unknown, callback: (err?: Error) => void): void {
      this.client = client;
      super.init(client, hosts, callback);
    }

    override newQueryPlan(keyspace: string, executionOptions: PlanOptions, callback: Plan): void {
      const routingKey = executionOptions?.getRoutingKey();
      const ks = executionOptions?.getKeyspace() ?? keyspace;
      const replicas = ks && routingKey ? (this.client?.getReplicas(ks, routingKey) ?? []) : [];
      const local = replicas.filter((host) => host.isUp() && host.datacenter === localDc);
      const first = [...local.filter(answering), ...local.filter((host) => !answering(host))];
      super.newQueryPlan(keyspace, executionOptions, (err, rest) => {
        if (err) return callback(err, rest);
        const plan = first.length === 0 ? rest! : primaryThenRest(first, rest!);
        const options = executionOptions?.getRawQueryOptions();
        callback(null, options ? recordingCoordinator(options, plan) : plan);
      });
    }
  }
  return new PrimaryFirst({ localDc, healthCheck: answering }) as unknown as cassandra.policies.loadBalancing.LoadBalancingPolicy;
}

/** Where recordingCoordinator keeps, on a request's own options object, the node its current execution went to. */
const COORDINATOR = Symbol('coordinator');
type Recorded = { [COORDINATOR]?: Host };

/**
 * Where a request run with LWT_PROFILE and these very options (the object passed to the driver's execute) is now:
 * the last node its plan gave out. An LWT is never speculated on, so that node has its one execution.
 */
export const coordinatorOf = (options: object): Host | undefined => (options as Recorded)[COORDINATOR];

function* recordingCoordinator(options: object, plan: Iterator<Host>): Generator<Host> {
  for (let next = plan.next(); !next.done; next = plan.next()) {
    (options as Recorded)[COORDINATOR] = next.value;
    yield next.value;
  }
}

function* primaryThenRest(first: Host[], rest: Iterator<Host>): Generator<Host> {
  yield* first;
  for (let next = rest.next(); !next.done; next = rest.next()) if (!first.includes(next.value)) yield next.value;
}
