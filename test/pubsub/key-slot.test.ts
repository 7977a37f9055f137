// The hash slot of a key or sharded channel, as a Redis Cluster computes it (CLUSTER KEYSLOT).
import { describe, expect, it } from 'vitest';
import { keySlot } from '../../src/pubsub/key-slot.js';

describe('key slots', () => {
  it('is CRC16/XMODEM of the key modulo 16384', () => {
    // Redis's own reference values (cluster spec: "123456789" has CRC16 0x31C3).
    expect(keySlot('123456789')).toBe(0x31c3);
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('')).toBe(0);
  });

  it('hashes only the first non-empty hash tag', () => {
    // Checked against CLUSTER KEYSLOT of Redis 7.0.
    expect(keySlot('{user1000}.following')).toBe(3443);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('foo{}{bar}')).toBe(8363); // an empty first tag: the whole key
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'));
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
  });
});
