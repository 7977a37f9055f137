// Settings read from the environment.
import { describe, expect, it } from 'vitest';
import { parseReplication } from '../../src/config.js';

describe('config', () => {
  it('parses per-DC replication', () => {
    expect(parseReplication('dc1:3, dc2:2')).toEqual({ dc1: 3, dc2: 2 });
    expect(() => parseReplication('dc1')).toThrow(/CASSANDRA_REPLICATION/);
  });
});
