/**
 * Global object ids as a client reads them (docs/api.md: base64url of
 * "<Type>:<key>"), decoded here on their own, apart from the server's code, so
 * a test that checks a row in CQL by an id the API gave finds the row's key.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The global id of an object of `type` with this key. */
export const globalIdOf = (type: string, key: string) => Buffer.from(`${type}:${key}`).toString('base64url');

/** The type and key a global id holds. */
export function decodeId(id: string): { type: string; key: string } {
  const text = Buffer.from(id, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 1) throw new Error(`${id} is not a global id`);
  return { type: text.slice(0, colon), key: text.slice(colon + 1) };
}

/** The key of an id from the API: a global id's key, or a bare timeuuid as it is. */
export const keyOf = (id: string) => (UUID.test(id) ? id : decodeId(id).key);
