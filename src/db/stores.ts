/** Every store, built on one Database. Add a domain's store here. */
import type { Database } from './cassandra/client.js';
import { UserStore } from './accounts/users.js';
import { SessionStore } from './accounts/sessions.js';
import { DirectMessageStore } from './messenger/direct-messages.js';
import { InboxStore } from './messenger/inbox.js';
import { BlockStore } from './messenger/blocks.js';
import { ItemStore } from './marketplace/items.js';
import { PurchaseStore } from './marketplace/purchases.js';
import { PurchaseClaimStore } from './marketplace/purchase-claims.js';
import { RoomStore } from './rooms/rooms.js';
import { RoomMessageStore } from './rooms/messages/room-messages.js';
import { MessageClientIdStore } from './rooms/messages/message-client-ids.js';
import { MessagesByAuthorStore } from './rooms/messages/messages-by-author.js';
import { MessageEditStore } from './rooms/messages/message-edits.js';
import { ReactionStore } from './rooms/messages/reactions.js';
import { PollVoteStore } from './rooms/messages/poll-votes.js';
import { ThreadStore } from './rooms/messages/threads.js';
import { PinStore } from './rooms/messages/pins.js';
import { ReadStateStore } from './rooms/read-state.js';
import { ModerationStore } from './rooms/moderation.js';
import { InvitationStore } from './rooms/invitations.js';
import { InviteLinkStore } from './rooms/invite-links.js';
import { JoinRequestStore } from './rooms/join-requests.js';
import { AuditLogStore } from './rooms/audit-log.js';
import { MessageSearchStore } from './rooms/messages/message-search.js';
import { RoomCleanupStore } from './rooms/room-cleanups.js';
import { PendingNoticeStore } from './rooms/pending-notices.js';
import { SearchBackfillStore } from './rooms/messages/search-backfill.js';
import { AttachmentStore } from './files/attachments.js';
import { CassandraFileBytes, type FileBytes } from './files/file-bytes.js';

export function createStores(db: Database) {
  const roomMessages = new RoomMessageStore(db);
  return {
    users: new UserStore(db),
    sessions: new SessionStore(db),
    directMessages: new DirectMessageStore(db),
    inbox: new InboxStore(db),
    blocks: new BlockStore(db),
    items: new ItemStore(db),
    purchases: new PurchaseStore(db),
    purchaseClaims: new PurchaseClaimStore(db),
    rooms: new RoomStore(db),
    roomMessages,
    messageClientIds: new MessageClientIdStore(db, roomMessages),
    messagesByAuthor: new MessagesByAuthorStore(db),
    messageEdits: new MessageEditStore(db),
    reactions: new ReactionStore(db),
    pollVotes: new PollVoteStore(db),
    threads: new ThreadStore(db, roomMessages),
    pins: new PinStore(db),
    readState: new ReadStateStore(db),
    moderation: new ModerationStore(db),
    invitations: new InvitationStore(db),
    inviteLinks: new InviteLinkStore(db),
    joinRequests: new JoinRequestStore(db),
    auditLog: new AuditLogStore(db),
    messageSearch: new MessageSearchStore(db),
    roomCleanups: new RoomCleanupStore(db),
    pendingNotices: new PendingNoticeStore(db),
    searchBackfill: new SearchBackfillStore(db),
    attachments: new AttachmentStore(db),
    fileBytes: new CassandraFileBytes(db) as FileBytes,
  };
}

export type Stores = ReturnType<typeof createStores>;
