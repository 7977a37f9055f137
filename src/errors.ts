/**
 * The one list of error codes a client can see in `extensions.code`.
 * Anything thrown that is not an AppError is masked as INTERNAL_SERVER_ERROR.
 */
import { GraphQLError } from 'graphql';
import { Limits } from './limits.js';

export const ErrorCode = {
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  LOGIN_TAKEN: 'LOGIN_TAKEN',
  INVALID_CREDENTIALS: 'INVALID_CREDENTIALS',
  /** Too many of something in a window, or at once: retry after extensions.retryAfter seconds; extensions.reason says which limit. */
  RATE_LIMITED: 'RATE_LIMITED',
  /**
   * A count the API bounds is at its maximum (extensions.limit names it, extensions.max gives it): the input is
   * well formed, but this action would take the count past it until something is removed.
   */
  LIMIT_REACHED: 'LIMIT_REACHED',
  CONFLICT: 'CONFLICT',
  /** The HTTP request is malformed: a body that is not JSON, a missing query, a wrong method. */
  BAD_REQUEST: 'BAD_REQUEST',
  /** The HTTP body is over 1 MiB (answered 413). */
  REQUEST_ENTITY_TOO_LARGE: 'REQUEST_ENTITY_TOO_LARGE',
  /**
   * An upload's body came in slower than the server reads it (under its minimum rate, or past its time: see
   * Limits.uploads): answered 408, the connection closed. Send it again, at a steadier pace.
   */
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  /** The operation text is not GraphQL. */
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  /** The operation does not fit the schema (unknown field, missing argument...). */
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  /** Operation over the depth, alias, token, directive or cost limit. */
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  /** A WebSocket already runs the maximum number of operations. */
  TOO_MANY_SUBSCRIPTIONS: 'TOO_MANY_SUBSCRIPTIONS',
  /**
   * A live feed's subscriber fell more than extensions.maxBufferedEvents events
   * behind: the events buffered for it were delivered, then the feed ended.
   * Subscribe again and catch up: roomEvents with `after:` the last cursor
   * received; the other feeds by querying what they follow.
   */
  FELL_BEHIND: 'FELL_BEHIND',
  /** A documentId (or persistedQuery hash) that no trusted-documents manifest holds. */
  TRUSTED_DOCUMENT_NOT_FOUND: 'TRUSTED_DOCUMENT_NOT_FOUND',
  /** The server runs trusted documents only (TRUSTED_DOCUMENTS=only) and was sent a document's text. */
  TRUSTED_DOCUMENTS_ONLY: 'TRUSTED_DOCUMENTS_ONLY',
  /**
   * Storage (Cassandra) or pub/sub (Redis) did not answer: nothing is wrong with the request.
   * Retry after extensions.retryAfter seconds; extensions.service says which.
   */
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
  /**
   * The Idempotency-Key was used by this viewer in the last 24 hours for another operation or other variables
   * (answered 422): choose a new key for a new request.
   */
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  /**
   * A request with this Idempotency-Key is still running (answered 409): retry with the same key after
   * extensions.retryAfter seconds to get its answer.
   */
  IDEMPOTENCY_KEY_IN_USE: 'IDEMPOTENCY_KEY_IN_USE',
  /**
   * The mutation sent with this Idempotency-Key ran, but its answer was too large to keep (answered 422): query
   * what it changed instead of retrying it.
   */
  IDEMPOTENCY_RESPONSE_TOO_LARGE: 'IDEMPOTENCY_RESPONSE_TOO_LARGE',
  // chat rooms
  ROOM_EXISTS: 'ROOM_EXISTS',
  /** The message can no longer be edited: extensions.reason is DELETED, HIDDEN or SYSTEM_MESSAGE. */
  MESSAGE_NOT_EDITABLE: 'MESSAGE_NOT_EDITABLE',
  /** A moderator banned this user from the room: they cannot join or post. */
  BANNED: 'BANNED',
  /** A moderator muted this user in the room until extensions.mutedUntil (extensions.retryAfter seconds). */
  MUTED: 'MUTED',
  /** The poll closed at extensions.closedAt: it takes no more votes. */
  POLL_CLOSED: 'POLL_CLOSED',
  // marketplace
  AUCTION_FINISHED: 'AUCTION_FINISHED',
  NOT_ENOUGH_UNITS: 'NOT_ENOUGH_UNITS',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** extensions.reason of a RATE_LIMITED refusal: which limit it hit. */
export const RateLimitReason = {
  /** The room's slow mode: one message per Room.slowModeSeconds per participant. */
  SLOW_MODE: 'SLOW_MODE',
  /** The per-user send limit, across every room (ROOM_POSTS_PER_WINDOW per ROOM_POST_WINDOW_SECONDS). */
  POST_RATE: 'POST_RATE',
  /** Sign-ups from this address in the last hour. */
  SIGN_UPS: 'SIGN_UPS',
  /** Failed password checks of this login, or from this address. */
  FAILED_LOGINS: 'FAILED_LOGINS',
  /** Every password-hashing slot and queue place of the server is taken (logins, sign-ups, password changes). */
  SERVER_BUSY: 'SERVER_BUSY',
  /** Live connections (WebSockets and event streams) from this address. */
  LIVE_CONNECTIONS: 'LIVE_CONNECTIONS',
  /** Uploads one user has under way at once on an instance (Limits.uploads.perUserAtOnce). */
  UPLOADS_AT_ONCE: 'UPLOADS_AT_ONCE',
} as const;
export type RateLimitReason = (typeof RateLimitReason)[keyof typeof RateLimitReason];

/** extensions.limit of a LIMIT_REACHED refusal: which count is at its maximum. */
export const LimitName = {
  PARTICIPANTS_PER_ROOM: 'PARTICIPANTS_PER_ROOM',
  PINS_PER_ROOM: 'PINS_PER_ROOM',
  EDITS_PER_MESSAGE: 'EDITS_PER_MESSAGE',
  REACTION_KINDS_PER_MESSAGE: 'REACTION_KINDS_PER_MESSAGE',
  BLOCKED_USERS: 'BLOCKED_USERS',
  /** Files attached to one message. */
  ATTACHMENTS_PER_MESSAGE: 'ATTACHMENTS_PER_MESSAGE',
  /** Files one user uploads in a UTC day. */
  UPLOADS_PER_DAY: 'UPLOADS_PER_DAY',
  /** Invitations waiting for one person's answer. */
  PENDING_INVITATIONS: 'PENDING_INVITATIONS',
  /** Requests to join one room waiting for a decision. */
  PENDING_JOIN_REQUESTS: 'PENDING_JOIN_REQUESTS',
  /** Uses of one invite link. */
  INVITE_LINK_USES: 'INVITE_LINK_USES',
} as const;
export type LimitName = (typeof LimitName)[keyof typeof LimitName];

/** extensions.reason of MESSAGE_NOT_EDITABLE. */
export const NotEditableReason = {
  DELETED: 'DELETED',
  HIDDEN: 'HIDDEN',
  SYSTEM_MESSAGE: 'SYSTEM_MESSAGE',
} as const;
export type NotEditableReason = (typeof NotEditableReason)[keyof typeof NotEditableReason];

export interface AppErrorExtensions {
  /** The input field at fault, as a dotted path such as "input.login". */
  field?: string;
  /** Seconds until a rate-limited call may be retried. */
  retryAfter?: number;
  /** Which rule refused (RATE_LIMITED, MESSAGE_NOT_EDITABLE). */
  reason?: string;
  [key: string]: unknown;
}

/**
 * Makes an error without capturing a stack trace. For a refusal (an answer,
 * not a bug: its stack is never shown nor logged) and for a GraphQLError that
 * wraps another (graphql-js gives it its original's stack anyway). V8 captures
 * the stack of every error made, and each wrapper of a refusal formats it
 * again by reading originalError.stack: that was most of the CPU of a refused
 * request.
 */
export function withoutStackTrace<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export class AppError extends GraphQLError {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, extensions: AppErrorExtensions = {}) {
    // A refusal: no stack trace. withoutStackTrace's steps, inline: super() cannot be called from a closure.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message, { extensions: { code, ...extensions } });
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.code = code;
  }
}

export const badInput = (field: string, message: string) => new AppError(ErrorCode.BAD_USER_INPUT, message, { field });
export const notFound = (what: string) => new AppError(ErrorCode.NOT_FOUND, `${what} not found`);
export const forbidden = (message = 'You are not allowed to do this') => new AppError(ErrorCode.FORBIDDEN, message);
export const unauthenticated = () => new AppError(ErrorCode.UNAUTHENTICATED, 'You must be logged in');
export const conflict = (message: string) => new AppError(ErrorCode.CONFLICT, message);
export const rateLimited = (reason: RateLimitReason, message: string, retryAfter: number, extensions: AppErrorExtensions = {}) =>
  new AppError(ErrorCode.RATE_LIMITED, message, { reason, retryAfter, ...extensions });
export const limitReached = (limit: LimitName, max: number, message: string) => new AppError(ErrorCode.LIMIT_REACHED, message, { limit, max });
const NOT_EDITABLE_MESSAGES: Record<NotEditableReason, string> = {
  DELETED: 'The message was deleted: it can no longer be edited',
  HIDDEN: 'The message is hidden: it can no longer be edited',
  SYSTEM_MESSAGE: 'System messages cannot be edited',
};
export const notEditable = (reason: NotEditableReason) =>
  new AppError(ErrorCode.MESSAGE_NOT_EDITABLE, NOT_EDITABLE_MESSAGES[reason], { reason, field: 'messageId' });
export const fellBehind = (maxBufferedEvents: number) =>
  new AppError(
    ErrorCode.FELL_BEHIND,
    `This feed fell more than ${maxBufferedEvents} events behind and ended after the events buffered for it: subscribe again, and catch up ` +
      '(roomEvents resumes with after: the last cursor received; for the other feeds, query what they follow, such as conversations or the item)',
    { maxBufferedEvents },
  );
export const unavailable = (service: 'storage' | 'pubsub') =>
  new AppError(ErrorCode.SERVICE_UNAVAILABLE, `The ${service === 'storage' ? 'database' : 'event bus'} is unavailable: retry shortly`, {
    service,
    retryAfter: Limits.unavailableRetryAfterSeconds,
  });
