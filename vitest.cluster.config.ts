/**
 * `npm run test:cluster`: what only a cluster shows, against the local three-node cluster at replication factor 3
 * (test/cluster/global-setup.ts starts it when it does not answer): the invariant race tests, unchanged, and the
 * tests of test/cluster/.
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      // The races each LWT or batch guards, with three replicas to agree: register, createRoom, join against
      // delete, ban against join, accept against revoke, approval against decline, accepts for the last seats, a link's redeemers, join against a room made private,
      // transfer against leave, buyers against stock, DMs and unread counts, edits, deletions and reactions.
      'test/accounts/accounts.test.ts',
      'test/rooms/concurrency.test.ts',
      'test/rooms/messages/concurrency.test.ts',
      'test/rooms/messages/polls-races.test.ts',
      'test/rooms/access/moderation.test.ts',
      'test/rooms/access/invitations.test.ts',
      'test/rooms/access/join-requests.test.ts',
      'test/rooms/access/seats.test.ts',
      'test/rooms/access/roles.test.ts',
      'test/marketplace/concurrency.test.ts',
      'test/marketplace/hot-item.test.ts',
      'test/rooms/read-marker-races.test.ts',
      'test/messenger/concurrency.test.ts',
      // Requests racing on one idempotency key: one claim, one record.
      'test/idempotency/keys.test.ts',
      'test/cluster/**/*.test.ts',
    ],
    exclude: [],
    globalSetup: ['test/cluster/global-setup.ts'],
  },
});
