// The Cassandra helpers' pure parts: cql/ files split into statements, the recent buckets kept per room.
import { describe, expect, it } from 'vitest';
import { parseCql } from '../../src/db/cassandra/migrate.js';
import { RecentBuckets } from '../../src/db/cassandra/recent-buckets.js';
describe('cql parsing', () => {
  it('splits statements and drops comments', () => {
    expect(parseCql('-- a; comment\nCREATE TABLE a (x int PRIMARY KEY); // trailing;\n/* b; */ CREATE TABLE b (y int PRIMARY KEY);')).toEqual([
      'CREATE TABLE a (x int PRIMARY KEY)',
      'CREATE TABLE b (y int PRIMARY KEY)',
    ]);
  });
});

describe('recent buckets', () => {
  it('remembers up to its capacity, forgetting the oldest first', () => {
    const recent = new RecentBuckets(2);
    recent.add('a');
    recent.add('b');
    recent.add('c');
    expect([recent.has('a'), recent.has('b'), recent.has('c')]).toEqual([false, true, true]);
  });
});
