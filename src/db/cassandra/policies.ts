/**
 * The driver policies that keep one slow, stalled or just-dead node from holding requests up: where a request goes
 * first, when it is also sent to a second node, and which timeouts are not retried on the same node.
 */
import cassandra from 'cassandra-driver';

const { policies } = cassandra;
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
 * Whether a node is answering: it is not when it has requests in flight and has answered none in the last
 * 200-400 ms (the driver's own count). The driver's default waits for 10 requests in flight, which a service under
 * light or steady load never piles on one node: every request routed to a stalled node then waited for it.
 */
export const answering = (host: Host): boolean => {
  // Both counters are the driver's own, missing from its typings (getResponseCount is internal to it).
  const counted = host as Host & { getInFlight(): number; getResponseCount(): number };
  return !(counted.getInFlight() > 0 && counted.getResponseCount() === 0);
};

/**
 * The driver's default balancing (token aware, the local data center, the less busy of two replicas first), with
 * `answering` as its health check: a replica not answering goes to the back of each query plan while most
 * replicas still answer, so new requests, speculative executions and retries go to the others.
 */
export function stallAwareBalancing(localDc: string): cassandra.policies.loadBalancing.LoadBalancingPolicy {
  // The health check is a constructor option of the driver's DefaultLoadBalancingPolicy its typings leave out.
  const Policy = policies.loadBalancing.DefaultLoadBalancingPolicy as unknown as new (options: {
    localDc: string;
    healthCheck: (host: Host) => boolean;
  }) => cassandra.policies.loadBalancing.LoadBalancingPolicy;
  return new Policy({ localDc, healthCheck: answering });
}
