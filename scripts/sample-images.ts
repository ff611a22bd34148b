// Makes the sample image files: test/fixtures/images/ (the image tests) and src/demo/images/ (what
// the demo serves). Run once, by hand, when they need to change; the files are committed, so
// neither the tests nor the demo need these encoders:
//   apt-get install libjpeg-turbo-progs webp libavif-bin   # cjpeg, cwebp, avifenc
//   node --import tsx scripts/sample-images.ts
// PNG and GIF are made in code at test time (test/helpers/image-bytes.ts), as are the pictures
// fed to the encoders here.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Pixel, picture, png, ppm, type Rgb } from '../test/helpers/image-bytes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const work = mkdtempSync(path.join(os.tmpdir(), 'sample-images-'));

/** The picture as PNG and PPM files in the work folder, for the encoders to read. */
function source(name: string, width: number, height: number, body: Rgb) {
  const pixel: Pixel = picture(width, height, body);
  const files = {
    png: path.join(work, `${name}.png`),
    alpha: path.join(work, `${name}-alpha.png`),
    ppm: path.join(work, `${name}.ppm`),
  };
  writeFileSync(files.png, png(width, height, { pixel }));
  writeFileSync(files.alpha, png(width, height, { pixel, alpha: true }));
  writeFileSync(files.ppm, ppm(width, height, pixel));
  return files;
}

const run = (command: string, args: string[]) =>
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
const jpeg = (from: string, to: string, ...options: string[]) =>
  run('cjpeg', ['-quality', '70', ...options, '-outfile', to, from]);
const webp = (from: string, to: string, ...options: string[]) =>
  run('cwebp', ['-quiet', ...options, from, '-o', to]);
const avif = (from: string, to: string) =>
  run('avifenc', ['--speed', '8', '--min', '24', '--max', '40', from, to]);

const fixtures = path.join(ROOT, 'test/fixtures/images');
const demo = path.join(ROOT, 'src/demo/images');
const made: string[] = [];
const out = (dir: string, name: string) => {
  const file = path.join(dir, name);
  made.push(file);
  return file;
};

try {
  const red = source('red', 800, 600, [200, 30, 40]);
  jpeg(red.ppm, out(fixtures, 'photo.jpg'));
  jpeg(red.ppm, out(fixtures, 'progressive.jpg'), '-progressive');
  webp(red.png, out(fixtures, 'lossy.webp'), '-q', '60');
  webp(red.png, out(fixtures, 'lossless.webp'), '-lossless');
  // Transparency makes an extended (VP8X) file: its alpha goes in a chunk of its own.
  webp(red.alpha, out(fixtures, 'extended.webp'), '-q', '60');
  avif(red.png, out(fixtures, 'photo.avif'));
  const small = source('small', 160, 120, [30, 120, 60]);
  jpeg(small.ppm, out(fixtures, 'tiny.jpg'));

  const blue = source('blue', 1024, 768, [30, 70, 170]);
  jpeg(blue.ppm, out(demo, 'blue-car.jpg'));
  const green = source('green', 1024, 768, [40, 130, 70]);
  webp(green.png, out(demo, 'green-car.webp'), '-q', '60');
  const silver = source('silver', 1024, 768, [175, 178, 185]);
  avif(silver.png, out(demo, 'silver-car.avif'));
  const thumb = source('thumb', 160, 120, [30, 70, 170]);
  jpeg(thumb.ppm, out(demo, 'thumbnail.jpg'));
  // Wider than 12,000 px: too_large by its dimensions, in a few kilobytes.
  writeFileSync(out(demo, 'panorama.png'), png(12_800, 400, { pixel: picture(12_800, 400, [200, 30, 40]) }));
} finally {
  rmSync(work, { recursive: true, force: true });
}
for (const file of made) console.log(`${path.relative(ROOT, file)}  ${statSync(file).size} bytes`);
