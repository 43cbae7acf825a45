#!/usr/bin/env node
/**
 * Draws Belfry's icon (a white bell on a blue rounded square) without any image library and writes
 * what electron-builder needs: build/icons/<n>x<n>.png (Linux), build/icon.png (1024), build/icon.ico
 * (Windows, PNG entries), build/icon.icns (macOS, PNG entries) and build/tray.png (+ @2x).
 * Run: node build/make-icons.mjs (the outputs are committed, so packaging needs no extra step).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
function png(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  const raw = Buffer.alloc((size * 4 + 1) * size);
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    rgba.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// Shapes in a 64×64 design space, as signed distances (negative inside).
const roundRect = (x, y, cx, cy, hw, hh, r) => {
  const qx = Math.abs(x - cx) - hw + r;
  const qy = Math.abs(y - cy) - hh + r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
};
const circle = (x, y, cx, cy, r) => Math.hypot(x - cx, y - cy) - r;
function bell(x, y) {
  // Dome (circle) + body widening to the rim + rim bar + clapper.
  const dome = circle(x, y, 32, 26, 13);
  const t = Math.min(Math.max((y - 26) / 17, 0), 1);
  const half = 13 + t * 5;
  const body = y >= 26 && y <= 43 ? Math.abs(x - 32) - half : 99;
  const rim = roundRect(x, y, 32, 44.5, 20, 2.5, 2);
  const clapper = circle(x, y, 32, 51, 4.5);
  const knob = circle(x, y, 32, 12, 3);
  return Math.min(dome, body, rim, clapper, knob);
}

function draw(size, { background = true, color = [255, 255, 255] } = {}) {
  const px = Buffer.alloc(size * size * 4);
  const s = 64 / size;
  const aa = s; // one output pixel of antialiasing
  for (let j = 0; j < size; j++) {
    for (let i = 0; i < size; i++) {
      const x = (i + 0.5) * s;
      const y = (j + 0.5) * s;
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      if (background) {
        const d = roundRect(x, y, 32, 32, 32, 32, 14);
        const cov = Math.min(Math.max(0.5 - d / aa, 0), 1);
        r = 47;
        g = 95;
        b = 208;
        a = cov;
      }
      const db = bell(x, y);
      const cb = Math.min(Math.max(0.5 - db / aa, 0), 1);
      r = r * (1 - cb) + color[0] * cb;
      g = g * (1 - cb) + color[1] * cb;
      b = b * (1 - cb) + color[2] * cb;
      a = a + cb * (1 - a);
      const o = (j * size + i) * 4;
      px[o] = Math.round(r);
      px[o + 1] = Math.round(g);
      px[o + 2] = Math.round(b);
      px[o + 3] = Math.round(a * 255);
    }
  }
  return png(size, px);
}

function ico(entries) {
  const header = Buffer.alloc(6 + entries.length * 16);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(entries.length, 4);
  let offset = header.length;
  entries.forEach(({ size, data }, k) => {
    const e = 6 + k * 16;
    header[e] = size >= 256 ? 0 : size;
    header[e + 1] = size >= 256 ? 0 : size;
    header.writeUInt16LE(1, e + 4);
    header.writeUInt16LE(32, e + 6);
    header.writeUInt32LE(data.length, e + 8);
    header.writeUInt32LE(offset, e + 12);
    offset += data.length;
  });
  return Buffer.concat([header, ...entries.map((e) => e.data)]);
}

function icns(entries) {
  const parts = entries.map(({ type, data }) => {
    const h = Buffer.alloc(8);
    h.write(type, 0, 'ascii');
    h.writeUInt32BE(data.length + 8, 4);
    return Buffer.concat([h, data]);
  });
  const body = Buffer.concat(parts);
  const h = Buffer.alloc(8);
  h.write('icns', 0, 'ascii');
  h.writeUInt32BE(body.length + 8, 4);
  return Buffer.concat([h, body]);
}

const out = (p, data) => {
  mkdirSync(dirname(join(here, p)), { recursive: true });
  writeFileSync(join(here, p), data);
};
const sizes = [16, 24, 32, 48, 64, 128, 256, 512, 1024];
const images = Object.fromEntries(sizes.map((n) => [n, draw(n)]));
for (const n of sizes.filter((n) => n <= 512)) out(`icons/${n}x${n}.png`, images[n]);
out('icon.png', images[1024]);
out('icon.ico', ico([16, 24, 32, 48, 64, 128, 256].map((size) => ({ size, data: images[size] }))));
out(
  'icon.icns',
  icns([
    { type: 'icp4', data: images[16] },
    { type: 'icp5', data: images[32] },
    { type: 'icp6', data: images[64] },
    { type: 'ic07', data: images[128] },
    { type: 'ic08', data: images[256] },
    { type: 'ic09', data: images[512] },
    { type: 'ic10', data: images[1024] },
  ]),
);
// Tray: the bell alone, dark (macOS treats *Template.png as a template image; others show it as is).
out('tray.png', draw(22, { background: false, color: [40, 40, 40] }));
out('tray@2x.png', draw(44, { background: false, color: [40, 40, 40] }));
out('trayTemplate.png', draw(22, { background: false, color: [0, 0, 0] }));
out('trayTemplate@2x.png', draw(44, { background: false, color: [0, 0, 0] }));
console.log('icons written to build/');
