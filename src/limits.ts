/** Every size and count limit of the API, in one place. */
export const Limits = {
  login: { min: 3, max: 32, pattern: /^[a-z0-9._-]+$/ },
  password: { min: 8, max: 128 },
  name: { min: 1, max: 100 },
  bio: { max: 2000 },
  email: { max: 254 },
  /**
   * Verified tokens an instance remembers, so a client's every request does not
   * check the same signature again (revocation is still checked each time).
   * The oldest is forgotten first; at about 0.5 KB each, 10,000 cost ~5 MB.
   */
  verifiedTokenCacheSize: 10_000,
  /**
   * graphql-jit (GRAPHQL_JIT, src/server/jit-execution.ts). Compiling an
   * operation costs about 35 µs of CPU per selection (fragments expanded), and
   * its code stays in memory: an operation is compiled on its second run (one
   * sent once never is) and only if it has at most `maxSelections`
   * selections (the largest of our clients' has 40), and at most
   * `operationsKept` documents keep theirs, the least recently used forgotten
   * first. Any other operation runs interpreted, with the same result.
   */
  jit: { compileOnRun: 2, maxSelections: 300, operationsKept: 500 },
  /** Chat rooms. Names: first character a letter or digit, then letters, digits, '_', '.', '-'. */
  room: {
    name: { min: 3, max: 31, pattern: /^[A-Za-z0-9][A-Za-z0-9_.-]*$/ },
    banner: { max: 280 },
    /**
     * Participants of a room. The set lives in the room's row: every post's
     * membership check reads it, the delete LWT compares it whole, and
     * Room.participants returns it whole (priced at this size). joinRoom
     * refuses with LIMIT_REACHED at the limit; joins racing each other near it
     * may pass it together, by at most the number of joins in flight at that moment.
     */
    maxParticipants: 1000,
    content: { min: 1, max: 4000 },
    /** How long a clientMessageId is remembered (a retry inside it returns the original message). */
    clientMessageIdTtlSeconds: 24 * 3600,
    /** sendTyping publishes at most once per this many seconds per user and room. */
    typingIntervalSeconds: 2,
    /**
     * A roomEvents subscription re-checks, when it delivers an event, that its
     * subscriber still takes part in the room, at most once per this long (one
     * read of the room per instance and window, whatever the subscriber count):
     * a leave whose ParticipantLeft event was lost stops the stream within it.
     */
    participationRecheckMs: 5_000,
    /** deleteRoom retries its LWT this many times while participants keep changing, then gives CONFLICT. */
    deleteAttempts: 5,
    /** leaveRoom retries its LWT this many times while the owner or the participants keep changing, then gives CONFLICT. */
    leaveAttempts: 5,
    /**
     * Invitations one person may have waiting for their answer (the list is one partition, read whole).
     * inviteToRoom refuses with LIMIT_REACHED at it; invitations racing each other near it may pass it together.
     */
    maxPendingInvitations: 100,
    /**
     * Requests to join one room waiting for a decision (its moderators page them; each lives 30 days at most:
     * cql/028). requestToJoin refuses with LIMIT_REACHED at it; requests racing each other near it may pass it together.
     */
    maxPendingJoinRequests: 1_000,
    /**
     * An invite link's uses, at most, and how long it lasts (by default; at most). A redeem retried within
     * retryMinutes of its counted use takes no second one.
     */
    inviteLink: { maxUses: 1000, defaultMinutes: 7 * 24 * 60, maxMinutes: 30 * 24 * 60, retryMinutes: 10 },
    /** Statements per batch when deleteRoom cleans up (users' chat_rooms, its messages' by-author copies). */
    cleanupBatch: 100,
    /** Rows per request when deleteRoom reads a day partition of the deleted room's messages. */
    cleanupFetchSize: 1000,
    /** Deletes in flight at once when deleteRoom drops its messages' poll votes and files (each file's rows, then its bytes). */
    cleanupWritesAtOnce: 8,
    /**
     * How many days back the job that finishes interrupted room cleanups looks
     * (one small read per day): an entry older than that would mean the
     * cleanup failed on every instance, every minute, for a week.
     */
    cleanupRecoveryDays: 7,
    /**
     * The job that completes changes of membership (resolvers/rooms/room-notices.ts)
     * leaves a change listed less than this long ago to its request. A join
     * request is some seven statements, each bounded by the request timeout
     * (12 s by default): 2 minutes outlasts a slow one. The job could write a
     * second system message for a change whose request was still at work,
     * nothing worse. Not a setting: an instance that completed others' fresh
     * changes would do exactly that.
     */
    noticeCompletionGraceMs: 120_000,
    /**
     * A message's id (its place in history) is taken before its write, so
     * writes can commit out of id order. A post sends its message's write only
     * while the id is younger than this; a post slower than that (a stalled
     * clientMessageId claim) fails and its retry takes a new id. Catch-up pages
     * rely on it: see catchUpSettleMs in src/resolvers/rooms/model.ts.
     */
    messageWriteWindowMs: 10_000,
    /**
     * Edits. A message reaches at most maxVersion versions (one per
     * edit). An edit that loses its LWT to another edit of the same message
     * tries again from the new version, up to `attempts` times, then CONFLICT.
     */
    edits: { maxVersion: 100, attempts: 5 },
    /**
     * Reactions: one Unicode emoji each, at most maxKinds distinct emoji per
     * message over its life (kinds are kept when their count falls to 0), and
     * firstReactors people shown per emoji.
     */
    reactions: { maxKinds: 20, firstReactors: 3, emojiMaxLength: 64 },
    /** Polls: 2 to 10 answers of at most 100 characters each, closing at most 32 days after the post (Discord's bounds). */
    poll: { minAnswers: 2, maxAnswers: 10, answerMax: 100, maxOpenDays: 32 },
    /** Pinned messages per room; a pin or unpin retries its LWT this many times while others get in first. */
    maxPins: 50,
    pinAttempts: 100,
    /**
     * Read state: unreadCount is exact up to unreadCap, then reported as
     * capped. Counting walks the history after the marker pageRows at a time,
     * and scans at most scanRows (a run of one's own messages counts nothing):
     * past that the count is reported as capped too.
     */
    readState: { unreadCap: 999, pageRows: 1000, scanRows: 5000 },
    /** Moderation: mutes up to a week, slow mode up to an hour; a ban retries while participants change. */
    moderation: { maxMuteMinutes: 7 * 24 * 60, maxSlowModeSeconds: 3600, banAttempts: 5 },
    /** Messages read from storage per query when roomEvents resumes from a cursor. */
    resumePage: 200,
    /** Mentions parsed from one message's content (the first ones count). */
    maxMentions: 50,
    /** How far the clocks of two instances may disagree: a message id carries the time of the instance that posted it. */
    clockSkewMs: 5_000,
    /**
     * Search within a room. A term is at most maxTermLength
     * characters (longer words are cut there, in the index and in queries
     * alike); a message's first maxTermsPerMessage distinct terms are indexed.
     * A query is at most queryMaxLength characters holding 1 to maxQueryTerms
     * distinct terms (each one more condition in the index). A page reads at
     * most bucketsPerPage day partitions, bucketsAtOnce of them in parallel:
     * a rare term costs a bounded number of queries per page, and the page
     * says where to resume. The backfill (npm run search:backfill) reads
     * backfillPageRows messages a page and writes backfillWritesAtOnce LWTs
     * at a time: a steady, bounded load beside live traffic.
     */
    search: {
      maxTermLength: 64,
      maxTermsPerMessage: 200,
      queryMaxLength: 500,
      maxQueryTerms: 8,
      bucketsPerPage: 60,
      bucketsAtOnce: 6,
      backfillPageRows: 1000,
      backfillWritesAtOnce: 8,
    },
    /**
     * The room_readers backfill (npm run readers:backfill) reads pageRows read
     * markers a page and writes writesAtOnce copies at a time, recording its
     * progress after each page.
     */
    readersBackfill: { pageRows: 1000, writesAtOnce: 8 },
    /**
     * The seats backfill (npm run seats:backfill) reads pageRows room names a page and seats writesAtOnce rooms at
     * a time (each a SERIAL read and an LWT), recording its progress after each page.
     */
    seatsBackfill: { pageRows: 500, writesAtOnce: 4 },
  },
  /**
   * An idempotency key chosen by the client (postMessage's clientMessageId,
   * buyItem's clientPurchaseId): any characters but control characters.
   */
  clientId: { min: 1, max: 64 },
  /**
   * Custom data on a message or a room: a JSON object of at most maxBytes as
   * UTF-8 JSON, nested at most maxDepth deep. It travels in every event and
   * every version of the message, so it stays small.
   */
  metadata: { maxBytes: 4096, maxDepth: 8 },
  /**
   * Attachments. One file per upload request (a multipart body of the
   * operations, its map and one file: 3 parts), at most maxFileBytes; at most
   * perMessage files on one message; at most uploadsPerDay uploads per user
   * and UTC day. A file's head (headBytes) decides its type (sniff.ts). A
   * link to a file (Attachment.url) is good for urlTtlSeconds.
   */
  attachments: { maxFileBytes: 10 * 1024 * 1024, perMessage: 10, uploadsPerDay: 200, headBytes: 64 * 1024, filenameMax: 255, urlTtlSeconds: 3600 },
  /**
   * Reading an upload's body (src/server/http/files/upload-body.ts). An upload streams
   * into storage as it arrives, holding a few 256 KiB chunks of memory, not
   * its file; what it holds for long is a connection and a slot.
   * - perUserAtOnce 3: a client sends a message's files a few at a time (a
   *   browser keeps 6 connections to an origin, shared with queries and
   *   feeds); a fourth at once from one person is refused (RATE_LIMITED,
   *   UPLOADS_AT_ONCE) before its body is read.
   * - perInstanceAtOnce 16: at most 16 × 4 chunk writes in flight to
   *   Cassandra (a few MB) from uploads, and about 16 × 1.5 MB of buffers;
   *   past it SERVICE_UNAVAILABLE. With the cap per user, filling them takes
   *   six people.
   * - minBytesPerSecond 8 KiB over each rateWindowMs of 10 s: 64 kbit/s is
   *   below any uplink a person uploads a photo from, and a body that sends
   *   less (a stall, a trickle) loses its slot within one to two windows, with
   *   REQUEST_TIMEOUT (408) and a closed connection. Time while the server is
   *   not reading (storage taking the chunks slower) does not count.
   * - maxSeconds 300: the whole body within 5 minutes, so a 10 MB file needs
   *   about 35 KB/s on average (Node's own request timeout is 300 s too, and
   *   would close the connection without an answer).
   */
  uploads: { perUserAtOnce: 3, perInstanceAtOnce: 16, minBytesPerSecond: 8 * 1024, rateWindowMs: 10_000, maxSeconds: 300 },
  /** Default and maximum page size of every connection (the inbox has its own, see messenger.inboxPage). */
  page: { default: 50, max: 200 },
  messenger: {
    /** Characters of a direct message, after trimming. */
    content: { min: 1, max: 4000 },
    /**
     * Inbox pages are cut from one read of the owner's whole inbox partition
     * (it must be sorted by last message time), so a page of 500 costs no more
     * reads than a page of 5: the inbox allows larger pages than other lists.
     */
    inboxPage: { default: 50, max: 500 },
    /** Rows per request when reading an inbox partition; a larger inbox pages within its one partition. */
    inboxFetchSize: 5000,
    /** Users one person may block (their list is one partition, read whole). */
    maxBlocked: 1000,
  },
  /** Marketplace items. unitPrice: a positive decimal, at most 2 decimals and 12 integer digits. */
  item: {
    name: { min: 1, max: 200 },
    description: { max: 5000 },
    unitPrice: { scale: 2, integerDigits: 12 },
    offeredUnits: { min: 1, max: 1_000_000 },
    tags: { max: 10 },
    tag: { min: 1, max: 40 },
  },
  /**
   * SERVICE_UNAVAILABLE's retryAfter: storage or pub/sub did not answer. The
   * driver tries a lost node again every second (src/db/cassandra/client.ts), so a
   * client retrying after this long finds it back as soon as it is.
   */
  unavailableRetryAfterSeconds: 2,
  /** buyItem's optional idempotency key, remembered for a day (a retry inside it returns the original purchase). */
  purchase: {
    clientPurchaseIdTtlSeconds: 24 * 3600,
    /** Rows per request when recovery reads an hour of pending purchases. */
    pendingFetchSize: 1000,
  },
  /**
   * Idempotency keys (the Idempotency-Key header, or extensions.idempotencyKey;
   * src/resolvers/idempotency/). A key is kept retentionSeconds (24 h, as
   * clientMessageId and clientPurchaseId are): a client retries within
   * seconds to minutes, or on its next start after a crash, and a day of rows
   * per user and key is small. Keys are 8–255 printable ASCII characters
   * (a UUID fits; a shorter one is too easy to reuse by accident; the
   * IETF draft's keys are strings of that kind). leaseSeconds: an attempt
   * still unanswered after this long (its instance died mid-request) may be
   * taken over by a retry with the same key; a request ends well within it
   * (CASSANDRA_REQUEST_TIMEOUT_MS per statement, a purchase's bind deadline).
   * A retry while the first attempt runs waits up to waitMs for its answer,
   * polling every pollMs, then answers IDEMPOTENCY_KEY_IN_USE.
   */
  idempotency: {
    retentionSeconds: 24 * 3600,
    key: { min: 8, max: 255 },
    leaseSeconds: 60,
    waitMs: 2000,
    pollMs: 100,
  },
} as const;
