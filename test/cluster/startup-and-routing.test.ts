/**
 * Starting on a cluster that cannot serve yet, and where requests go. An instance started while two of the three
 * nodes are down (no quorum) keeps trying, says why on /ready, and serves once a node is back, without exiting.
 * The driver sends each statement to a replica of its partition (token-aware routing), shown on a keyspace at
 * replication factor 1, where each partition has one replica; the app's own client knows all three replicas of
 * each partition of the run's keyspace (RF 3), so it can send a request to another when one stops answering.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { pino } from 'pino';
import cassandra from 'cassandra-driver';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { clientOptions, Database } from '../../src/db/cassandra/client.js';
import { stallAwareBalancing } from '../../src/db/cassandra/policies.js';
import { clusterContactPoints, killClusterNode, pauseClusterNode, restartClusterNode } from '../../src/local-node/cluster.js';
import { createLogger } from '../../src/observability/logging.js';
import { MeDocument } from '../generated/graphql.js';
import { testEnv } from '../testkit/app.js';
import { gql } from '../testkit/http.js';
import { eventually } from '../testkit/poll.js';
import { signUp } from '../testkit/data/users.js';

const started: App[] = [];
afterAll(async () => {
  await Promise.all(started.map((app) => app.stop()));
  // Whatever the test did, the cluster is whole again for the next file.
  for (const node of [0, 1, 2]) await restartClusterNode(node);
}, 600_000);

describe('routing', () => {
  it('sends each statement to the replica of its partition', async () => {
    const keyspace = `parley_routing_${Date.now().toString(36)}`;
    const config = loadConfig({ CASSANDRA_CONTACT_POINTS: clusterContactPoints() });
    const client = new cassandra.Client(clientOptions(config.cassandra, clusterContactPoints().split(',')));
    try {
      await client.connect();
      await client.execute(`CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`);
      await client.execute(`CREATE TABLE ${keyspace}.t (k text PRIMARY KEY, v int)`);
      await eventually(async () => (client.metadata as unknown as { checkSchemaAgreement(): Promise<boolean> }).checkSchemaAgreement(), {
        what: 'schema agreement',
      });
      await client.metadata.refreshKeyspace(keyspace);
      const queried = new Set<string>();
      for (let i = 0; i < 30; i++) {
        const k = `key-${i}`;
        const rs = await client.execute(`SELECT v FROM ${keyspace}.t WHERE k = ?`, [k], { prepare: true });
        const replicas = client.getReplicas(keyspace, Buffer.from(k, 'utf8')).map((h) => h.address);
        expect(replicas).toHaveLength(1);
        expect(rs.info.queriedHost).toBe(replicas[0]);
        queried.add(rs.info.queriedHost);
      }
      // Thirty keys spread over the three nodes' ranges: every node coordinated some. (The keyspace stays, as the
      // run's does: see test/cluster/global-setup.ts.)
      expect(queried.size).toBe(3);
    } finally {
      await client.shutdown();
    }
  });
});

describe('the app’s client', () => {
  it('knows every replica of each partition at RF 3, and sends requests to each of them', async () => {
    const config = loadConfig({ CASSANDRA_CONTACT_POINTS: clusterContactPoints(), CASSANDRA_KEYSPACE: inject('keyspace') });
    const db = new Database(config.cassandra, pino({ level: 'silent' }), config.cassandra.contactPoints);
    try {
      await db.connect();
      for (let i = 0; i < 30; i++) {
        const login = `routing-${i}`;
        const replicas = db.client.getReplicas(inject('keyspace'), Buffer.from(login, 'utf8')).map((h) => h.address);
        expect(replicas.sort(), login).toEqual(clusterContactPoints().split(',').sort());
      }
      // One partition read 30 times goes to more than its primary replica (all it knew when it could not read the
      // keyspace's replication: every request went there first).
      const coordinators = new Set<string>();
      for (let i = 0; i < 30; i++) {
        coordinators.add((await db.client.execute('SELECT login FROM users WHERE login = ?', ['routing'], { prepare: true })).info.queriedHost);
      }
      expect(coordinators.size).toBeGreaterThan(1);
    } finally {
      await db.client.shutdown();
    }
  });
});

describe('nodes that do not answer', () => {
  it('get no request while another replica answers, even when two of the three do not', async () => {
    const config = loadConfig({ CASSANDRA_CONTACT_POINTS: clusterContactPoints(), CASSANDRA_KEYSPACE: inject('keyspace') });
    const [answeringNode, ...silent] = clusterContactPoints().split(',') as [string, string, string];
    // The health check, told that two nodes answer nothing, as NodeHealth says of a stalled node and, for moments, of
    // a node slowed by it (in flight, no answer for 200 ms). The driver reorders a partition's replicas only while most
    // of them answer, and so sent requests to the stalled node. Nothing is stalled here: each request is answered
    // wherever it goes, and where it goes is the policy's choice alone.
    const answering = (host: cassandra.Host) => host.address === answeringNode;
    const options = clientOptions(config.cassandra, clusterContactPoints().split(','), { keyspace: inject('keyspace') });
    const client = new cassandra.Client({ ...options, policies: { ...options.policies, loadBalancing: stallAwareBalancing(config.cassandra.localDataCenter, answering) } });
    try {
      await client.connect();
      const coordinators: string[] = [];
      for (let i = 0; i < 60; i++) {
        const login = `stalled-routing-${i}`;
        expect(client.getReplicas(inject('keyspace'), Buffer.from(login, 'utf8'))).toHaveLength(3);
        coordinators.push((await client.execute('SELECT login FROM users WHERE login = ?', [login], { prepare: true })).info.queriedHost);
      }
      expect(coordinators.filter((host) => silent.includes(host))).toEqual([]);
    } finally {
      await client.shutdown();
    }
  });
});

describe('a node that stalled for a moment', () => {
  it('is sent no request while it stalls, and gets requests again once it answers', async () => {
    const config = loadConfig({ CASSANDRA_CONTACT_POINTS: clusterContactPoints(), CASSANDRA_KEYSPACE: inject('keyspace') });
    const db = new Database(config.cassandra, pino({ level: 'silent' }), config.cassandra.contactPoints);
    const stalled = clusterContactPoints().split(',')[2]!;
    const coordinatorOf = async (i: number) => (await db.client.execute('SELECT login FROM users WHERE login = ?', [`back-${i}`], { prepare: true })).info.queriedHost;
    try {
      await db.connect();
      const host = db.client.hosts.get(stalled)!;
      const resume = pauseClusterNode(2);
      try {
        // The instance sees it not answer: a request to it times out.
        await db.client.execute('SELECT release_version FROM system.local', [], { host, readTimeout: 500, prepare: false }).then(
          () => expect.fail('the stalled node answered'),
          (err: Error) => expect(err.name).toBe('OperationTimedOutError'),
        );
        const meanwhile = [];
        for (let i = 0; i < 20; i++) meanwhile.push(await coordinatorOf(i));
        expect(meanwhile.filter((h) => h === stalled)).toEqual([]);
      } finally {
        resume();
      }
      // Nothing of the app's goes to a node counted out while the others answer: only the probe counts it back in.
      let i = 0;
      await eventually(async () => (await coordinatorOf(i++)) === stalled, { what: `a request to ${stalled} once it answers again`, timeoutMs: 20_000, intervalMs: 50 });
    } finally {
      await db.shutdown();
    }
  });
});

describe('starting on a cluster', () => {
  it('with two nodes of three down: keeps trying, says why on /ready, and serves once one is back', async () => {
    await Promise.all([killClusterNode(1), killClusterNode(2)]);
    const config = loadConfig(testEnv({ env: { CASSANDRA_STARTUP_TIMEOUT_MS: '300000' } }));
    const app = createApp({ config, logger: createLogger(config), hooks: {} });
    started.push(app);
    const starting = app.start();
    let failed: unknown;
    starting.catch((err: unknown) => (failed = err));
    await eventually(() => app.port !== 0, { what: 'the instance to listen' });

    // Gossip first still counts the dead nodes as up (the quorum read times out), then as down (too few replicas).
    const reason = await eventually(
      async () => {
        const res = await fetch(`${app.url}/ready`);
        const body = (await res.json()) as { reason?: string };
        return res.status === 503 && /^starting: connecting: /.test(body.reason ?? '') ? body.reason : undefined;
      },
      { what: '/ready to say why', timeoutMs: 60_000 },
    );
    expect(reason).toMatch(/LOCAL_QUORUM|timed out|Not enough replicas/i);

    await restartClusterNode(1);
    await starting;
    await restartClusterNode(2);
    expect(failed).toBeUndefined();
    expect((await fetch(`${app.url}/ready`)).status).toBe(200);
    const user = await signUp(app);
    expect((await gql(app, MeDocument, {}, user.token)).data?.me?.login).toBe(user.login);
  }, 600_000);
});
