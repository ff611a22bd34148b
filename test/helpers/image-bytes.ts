import { crc32, deflateSync } from 'node:zlib';

/**
 * Valid images made in code, of any size: PNG (zlib-compressed rows) and GIF (LZW), with a
 * picture drawn by `picture` below. Flat colours compress to almost nothing, so a 13,000-pixel
 * wide PNG is a few kilobytes; `padding` adds an ancillary chunk (which decoders skip) to make a
 * valid image as many bytes long as a test needs.
 */

export type Rgb = [number, number, number];
export type Pixel = (x: number, y: number) => Rgb;

/** A car, side on, on a road under a sky: something a person recognises in the demo. */
export function picture(width: number, height: number, body: Rgb = [200, 30, 40]): Pixel {
  const road = Math.round(height * 0.72);
  const unit = Math.min(width / 10, height / 6);
  const cx = width / 2;
  const wheelY = road - unit * 0.1;
  const wheels = [cx - unit * 2.4, cx + unit * 2.4];
  return (x, y) => {
    for (const wx of wheels) {
      const d = Math.hypot(x - wx, y - wheelY);
      if (d < unit * 0.35) return [170, 170, 175];
      if (d < unit * 0.75) return [25, 25, 28];
    }
    const inBody = y > road - unit * 1.5 && y < road - unit * 0.3 && Math.abs(x - cx) < unit * 3.8;
    const cabinHalf = unit * 2.3 - (road - unit * 1.5 - y) * 0.6;
    const inCabin =
      y > road - unit * 2.5 && y <= road - unit * 1.5 && Math.abs(x - cx + unit * 0.3) < cabinHalf;
    if (inCabin) return Math.abs(x - cx + unit * 0.3) < cabinHalf - unit * 0.25 ? [150, 200, 230] : body;
    if (inBody) return body;
    if (y >= road) return [90, 90, 95];
    const t = y / road;
    return [Math.round(120 + 100 * t), Math.round(170 + 60 * t), 235];
  };
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(type)), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * A PNG (8-bit RGB, or RGBA with `alpha`: the left quarter half transparent). `padding` bytes of
 * an ancillary `flLr` chunk come before the image data.
 */
export function png(
  width: number,
  height: number,
  options: { pixel?: Pixel; padding?: number; alpha?: boolean } = {},
): Buffer {
  const pixel = options.pixel ?? ((): Rgb => [40, 90, 160]);
  const channels = options.alpha ? 4 : 3;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, options.alpha ? 6 : 2, 0, 0, 0], 8);
  const row = 1 + width * channels;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * row + 1 + x * channels;
      raw.set(pixel(x, y), at);
      if (options.alpha) raw[at + 3] = x < width / 4 ? 128 : 255;
    }
  }
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', ihdr),
    ...(options.padding ? [chunk('flLr', Buffer.alloc(options.padding))] : []),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A GIF89a of two colours (a frame on a background), LZW-compressed as decoders expect. */
export function gif(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.write('GIF89a', 0, 'latin1');
  header.writeUInt16LE(width, 6);
  header.writeUInt16LE(height, 8);
  header[10] = 0x80; // a global colour table of 2 entries
  const palette = Buffer.from([40, 90, 160, 240, 240, 240]);
  const descriptor = Buffer.alloc(10);
  descriptor[0] = 0x2c;
  descriptor.writeUInt16LE(width, 5);
  descriptor.writeUInt16LE(height, 7);
  const border = Math.max(1, Math.floor(Math.min(width, height) / 10));
  const indexes = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const edge = x < border || y < border || x >= width - border || y >= height - border;
      indexes[y * width + x] = edge ? 0 : 1;
    }
  }
  const minCodeSize = 2;
  const data = lzw(indexes, minCodeSize);
  const blocks: Buffer[] = [];
  for (let i = 0; i < data.length; i += 255) {
    const part = data.subarray(i, i + 255);
    blocks.push(Buffer.from([part.length]), part);
  }
  return Buffer.concat([
    header,
    palette,
    descriptor,
    Buffer.from([minCodeSize]),
    ...blocks,
    Buffer.from([0, 0x3b]),
  ]);
}

/** GIF's variable-width LZW, least significant bit first, with a clear code when the table fills. */
function lzw(indexes: Uint8Array, minCodeSize: number): Buffer {
  const clear = 1 << minCodeSize;
  const end = clear + 1;
  const out: number[] = [];
  let bits = 0;
  let held = 0;
  let size = minCodeSize + 1;
  const emit = (code: number) => {
    held |= code << bits;
    bits += size;
    while (bits >= 8) {
      out.push(held & 0xff);
      held >>>= 8;
      bits -= 8;
    }
  };
  let table = new Map<number, number>();
  let next = end + 1;
  emit(clear);
  let prefix = indexes[0]!;
  for (let i = 1; i < indexes.length; i++) {
    const k = indexes[i]!;
    const key = (prefix << 8) | k;
    const known = table.get(key);
    if (known !== undefined) {
      prefix = known;
      continue;
    }
    emit(prefix);
    if (next === 4096) {
      emit(clear);
      table = new Map();
      next = end + 1;
      size = minCodeSize + 1;
    } else {
      if (next >= 1 << size) size++;
      table.set(key, next++);
    }
    prefix = k;
  }
  emit(prefix);
  emit(end);
  if (bits > 0) out.push(held & 0xff);
  return Buffer.from(out);
}

/** A binary PPM (P6), what cjpeg reads: how the fixture files were made (scripts/sample-images.ts). */
export function ppm(width: number, height: number, pixel: Pixel): Buffer {
  const head = Buffer.from(`P6\n${width} ${height}\n255\n`, 'latin1');
  const body = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) body.set(pixel(x, y), (y * width + x) * 3);
  }
  return Buffer.concat([head, body]);
}
