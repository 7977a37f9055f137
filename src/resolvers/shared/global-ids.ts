/**
 * Global object ids (Relay's object identification): every object a client
 * may refetch with node(id:) has one opaque `id` that says its type and holds
 * its key, so no two objects of any types share one.
 *
 * The form is base64url of "<Type>:<key>" (a room "Room:lobby", an item
 * "Item:<timeuuid>", a direct message "DirectMessage:<a>:<b>:<timeuuid>").
 * A room message keeps the id it always had: that id (rooms/ids.ts) already
 * names its type and holds its whole key. Each argument that took one of these
 * types' ids before they became global (itemId, purchaseId) takes both forms,
 * so an id a client stored earlier still works.
 */
import { badInput } from '../../errors.js';
import { decodeMessageId } from '../rooms/ids.js';

/** The types that implement Node, by the name the schema gives them. */
export const NODE_TYPES = ['User', 'Room', 'Message', 'Conversation', 'DirectMessage', 'Item', 'Purchase'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

const isNodeType = (name: string): name is NodeType => (NODE_TYPES as readonly string[]).includes(name);

/** The longest id decoded: the longest key (a direct message's) is well under it. */
const MAX_ID_LENGTH = 512;

export interface GlobalId {
  typename: NodeType;
  /** The object's key within its type (a room message's is its whole id). */
  id: string;
}

export function globalId(typename: NodeType, key: string): string {
  // The message id is already global: it is served as it is.
  if (typename === 'Message') return key;
  return Buffer.from(`${typename}:${key}`).toString('base64url');
}

/** The type and key an id names, or null when it is not a global id at all. */
function parse(id: string): GlobalId | null {
  if (id.length === 0 || id.length > MAX_ID_LENGTH || !/^[A-Za-z0-9_-]+$/.test(id)) return null;
  const text = Buffer.from(id, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const typename = colon > 0 ? text.slice(0, colon) : '';
  if (isNodeType(typename) && typename !== 'Message' && colon < text.length - 1) return { typename, id: text.slice(colon + 1) };
  try {
    decodeMessageId('id', id);
    return { typename: 'Message', id };
  } catch {
    return null;
  }
}

/** node(id:)'s and nodes(ids:)'s reading of an id: anything but a global id is BAD_USER_INPUT. */
export function decodeGlobalId(field: string, id: string): GlobalId {
  const parsed = parse(id);
  if (!parsed) throw badInput(field, `${field} is not an object id`);
  return parsed;
}

/**
 * The key of an id given where one of `typename` is expected: the global form's
 * key, or the id as it is (the form served before ids were global, and the
 * caller validates it). A global id of another type is BAD_USER_INPUT.
 */
export function keyOf(field: string, typename: NodeType, id: string): string {
  const parsed = parse(id);
  if (!parsed) return id;
  if (parsed.typename !== typename) throw badInput(field, `${field} is the id of a ${parsed.typename}, not of a ${typename}`);
  return parsed.id;
}
