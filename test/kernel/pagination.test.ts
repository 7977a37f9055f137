// Opaque cursors: what a page hands back, and what a bad one is refused with.
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/pagination.js';

describe('cursors', () => {
  const isPos = (p: Record<string, unknown>): p is { id: string } => typeof p.id === 'string';
  it('round-trips and rejects garbage with BAD_USER_INPUT naming the field', () => {
    expect(decodeCursor('after', encodeCursor({ id: 'x' }), isPos)).toMatchObject({ id: 'x' });
    expect(() => decodeCursor('after', 'not a cursor', isPos)).toThrow(/after is not a valid cursor/);
    expect(() => decodeCursor('after', encodeCursor({ other: 1 }), isPos)).toThrow(/after/);
  });
});
