// What an upload is, from its bytes: the allowlist and image dimensions (src/resolvers/files/sniff.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sniff } from '../../src/resolvers/files/sniff.js';
import { projectPath } from '../../src/project-root.js';

const bytes = (...parts: Array<number[] | string | Buffer>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.isBuffer(p) ? p : Buffer.from(p))));
const u16be = (n: number) => [n >> 8, n & 0xff];
const u16le = (n: number) => [n & 0xff, n >> 8];

describe('sniffing uploads', () => {
  it('reads a real PNG and its size', () => {
    // The reference client's screenshot, as Chromium wrote it.
    const png = readFileSync(projectPath('examples', 'web-chat', 'screenshot.png'));
    expect(sniff(png.subarray(0, 64), false)).toEqual({ contentType: 'image/png', width: 1100, height: 760 });
  });

  it('reads a JPEG frame header past other segments, a GIF and each kind of WebP', () => {
    const app0 = bytes([0xff, 0xe0], u16be(16), 'JFIF\0', [1, 1, 0, 0, 1, 0, 1, 0, 0]);
    const sof = bytes([0xff, 0xc2], u16be(17), [8], u16be(480), u16be(640), [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    expect(sniff(bytes([0xff, 0xd8], app0, sof, [0xff, 0xda]), false)).toEqual({ contentType: 'image/jpeg', width: 640, height: 480 });
    expect(sniff(bytes('GIF89a', u16le(32), u16le(16), [0, 0, 0]), false)).toEqual({ contentType: 'image/gif', width: 32, height: 16 });
    const riff = (chunk: string, body: number[]) => bytes('RIFF', [0, 0, 0, 0], 'WEBP', chunk, [0, 0, 0, 0], body);
    expect(sniff(riff('VP8X', [0, 0, 0, 0, 99, 0, 0, 49, 0, 0, 0, 0, 0, 0]), false)).toMatchObject({ width: 100, height: 50 });
    // VP8L: a signature byte, then 14 bits of width - 1 and 14 of height - 1.
    const vp8l = (w: number, h: number) => {
      const bits = (w - 1) | ((h - 1) << 14);
      return [0x2f, bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, (bits >> 24) & 0xff, 0, 0, 0, 0];
    };
    expect(sniff(riff('VP8L', vp8l(300, 200)), false)).toMatchObject({ contentType: 'image/webp', width: 300, height: 200 });
    expect(sniff(riff('VP8 ', [0, 0, 0, 0x9d, 0x01, 0x2a, ...u16le(64), ...u16le(48), 0, 0, 0, 0]), false)).toMatchObject({ width: 64, height: 48 });
  });

  it('takes PDF and UTF-8 text, and refuses everything else whatever its name claims', () => {
    expect(sniff(bytes('%PDF-1.7\n'), false)?.contentType).toBe('application/pdf');
    expect(sniff(Buffer.from('Grüße aus Kraków\r\n\ttabs fine'), true)?.contentType).toBe('text/plain; charset=utf-8');
    // A head that ends inside a character is still text; a whole file that does is not.
    const cut = Buffer.from('żółw').subarray(0, 3);
    expect(sniff(cut, false)?.contentType).toBe('text/plain; charset=utf-8');
    expect(sniff(cut, true)).toBeNull();
    // An executable, an HTML page with a script (text, but a NUL gives a binary away), a ZIP, random bytes, nothing.
    expect(sniff(bytes('MZ', [0x90, 0, 3, 0, 0, 0]), false)).toBeNull();
    expect(sniff(bytes('PK', [3, 4, 20, 0]), false)).toBeNull();
    expect(sniff(bytes([0xde, 0xad, 0xbe, 0xef, 0, 1, 2]), false)).toBeNull();
    expect(sniff(Buffer.alloc(0), true)).toBeNull();
  });
});

describe('sniffing hostile headers', () => {
  it('keeps no dimension a CQL int cannot hold, and never reads past a short head', () => {
    const png = (w: number, h: number) => {
      const head = Buffer.alloc(24);
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head);
      head.write('IHDR', 12, 'latin1');
      head.writeUInt32BE(w, 16);
      head.writeUInt32BE(h, 20);
      return head;
    };
    expect(sniff(png(0xffffffff, 10), false)).toEqual({ contentType: 'image/png', width: null, height: null });
    for (let n = 0; n < 30; n++) expect(() => sniff(png(10, 10).subarray(0, n), false)).not.toThrow();
  });
});
