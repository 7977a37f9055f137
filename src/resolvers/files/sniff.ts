/**
 * What an uploaded file is, from its first bytes, never from the client's
 * claim: the allowlist of types Parley serves, and an image's dimensions (so
 * a client lays it out before loading it). Anything not recognised here is
 * refused: a file is served only with the type its bytes proved.
 */

export interface Sniffed {
  contentType: SniffedType;
  width: number | null;
  height: number | null;
}

export const SNIFFED_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain; charset=utf-8'] as const;
export type SniffedType = (typeof SNIFFED_TYPES)[number];

const startsWith = (head: Buffer, ascii: string, at = 0) => head.subarray(at, at + ascii.length).toString('latin1') === ascii;
/** Dimensions as stored (a CQL int): none when a header claims zero or more than 2^31 - 1. */
const image = (contentType: SniffedType, width: number, height: number): Sniffed =>
  width > 0 && height > 0 && width <= 0x7fffffff && height <= 0x7fffffff ? { contentType, width, height } : { contentType, width: null, height: null };

function png(head: Buffer): Sniffed | null {
  if (!head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return null;
  if (head.byteLength < 24 || !startsWith(head, 'IHDR', 12)) return null;
  return image('image/png', head.readUInt32BE(16), head.readUInt32BE(20));
}

function gif(head: Buffer): Sniffed | null {
  if (!(startsWith(head, 'GIF87a') || startsWith(head, 'GIF89a')) || head.byteLength < 10) return null;
  return image('image/gif', head.readUInt16LE(6), head.readUInt16LE(8));
}

function jpeg(head: Buffer): Sniffed | null {
  if (head.byteLength < 4 || head[0] !== 0xff || head[1] !== 0xd8 || head[2] !== 0xff) return null;
  // Walk the segments to the frame header (SOFn, but DHT C4, JPG C8 and DAC CC), which holds the size.
  let at = 2;
  while (at + 9 < head.byteLength) {
    if (head[at] !== 0xff) return { contentType: 'image/jpeg', width: null, height: null };
    const marker = head[at + 1]!;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    const length = head.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return image('image/jpeg', head.readUInt16BE(at + 7), head.readUInt16BE(at + 5));
    }
    if (marker === 0xda || length < 2) break;
    at += 2 + length;
  }
  return { contentType: 'image/jpeg', width: null, height: null };
}

function webp(head: Buffer): Sniffed | null {
  if (!startsWith(head, 'RIFF') || !startsWith(head, 'WEBP', 8)) return null;
  const known = { contentType: 'image/webp', width: null, height: null } as const;
  if (head.byteLength < 30) return head.byteLength >= 25 && startsWith(head, 'VP8L', 12) ? vp8l(head) : known;
  if (startsWith(head, 'VP8X', 12)) return image('image/webp', 1 + head.readUIntLE(24, 3), 1 + head.readUIntLE(27, 3));
  if (startsWith(head, 'VP8L', 12)) return vp8l(head);
  if (startsWith(head, 'VP8 ', 12)) return image('image/webp', head.readUInt16LE(26) & 0x3fff, head.readUInt16LE(28) & 0x3fff);
  return known;
}

/** A lossless WebP's size: after its signature byte, 14 bits of width - 1 and 14 of height - 1. */
function vp8l(head: Buffer): Sniffed {
  const bits = head.readUInt32LE(21);
  return image('image/webp', 1 + (bits & 0x3fff), 1 + ((bits >> 14) & 0x3fff));
}

/** Text: valid UTF-8 without control characters but tab, CR and LF (a character the head cuts in two is left for later). */
function text(head: Buffer, whole: boolean): Sniffed | null {
  if (head.byteLength === 0) return null;
  let chars: string;
  try {
    // stream: an incomplete sequence at the end of a head is held back, not an error.
    chars = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !whole });
  } catch {
    return null;
  }
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(chars) ? null : { contentType: 'text/plain; charset=utf-8', width: null, height: null };
}

/**
 * The type of a file from its head (its first bytes; `whole` when they are the whole file), with an image's
 * dimensions when its head holds them; null for anything off the allowlist.
 */
export function sniff(head: Buffer, whole: boolean): Sniffed | null {
  if (startsWith(head, '%PDF-')) return { contentType: 'application/pdf', width: null, height: null };
  return png(head) ?? jpeg(head) ?? gif(head) ?? webp(head) ?? text(head, whole);
}
