// Conversation keys and direct messages made from an id.
import { describe, expect, it } from 'vitest';
import { conversationKey, directMessage } from '../../src/resolvers/messenger/model.js';
import { newTimeUuid } from '../../src/timeuuids.js';

describe('conversation keys', () => {
  it('are the two logins in sorted order, whoever sends', () => {
    expect(conversationKey('bob', 'alice')).toBe('alice:bob');
    expect(conversationKey('alice', 'bob')).toBe('alice:bob');
  });
  it('put a message in the month bucket of its time', () => {
    const m = directMessage(newTimeUuid(new Date('2025-12-31T23:59:59.999Z'), 'microsecond'), 'zed', 'amy', 'hi');
    expect(m).toMatchObject({ month: 202512, sender: 'zed', recipient: 'amy' });
    expect(conversationKey(m.sender, m.recipient)).toBe('amy:zed');
  });
});
