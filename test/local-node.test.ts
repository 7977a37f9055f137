/** The launcher keeps real data off a throwaway node. */
import { describe, expect, it, inject } from 'vitest';
import cassandra from 'cassandra-driver';
import { defaultLocalNodeOptions, ensureLocalNode, LocalNodeError } from '../src/local-node/launcher.js';

describe('local node launcher', () => {
  it('reuses a node on the port, except a throwaway one for kept data', async () => {
    const [host, port] = inject('cassandraContactPoint').split(':');
    const client = new cassandra.Client({ contactPoints: [`${host}:${port}`], localDataCenter: 'datacenter1' });
    const name = (await client.execute('SELECT cluster_name FROM system.local')).first()?.cluster_name;
    await client.shutdown();
    const opts = (ephemeral: boolean) => defaultLocalNodeOptions({ host, port: Number(port), ephemeral, log: () => {} });

    // Tests may use any node that answers.
    expect(await ensureLocalNode(opts(true))).toMatchObject({ started: false });
    if (name === 'parley-ephemeral') {
      // npm start must not keep data on a node wiped at its next start.
      await expect(ensureLocalNode(opts(false))).rejects.toThrow(LocalNodeError);
      await expect(ensureLocalNode(opts(false))).rejects.toThrow(/throwaway test node/);
    } else {
      expect(await ensureLocalNode(opts(false))).toMatchObject({ started: false });
    }
  });
});
