import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ImageState } from '../../domain/images/classify.js';

/**
 * The sample images the demo serves itself, so that it works offline and a new partner sees
 * every state of an image check on it (docs/images.md): three good photos, one in each of JPEG,
 * WebP and AVIF; a thumbnail too small to show; a panorama too wide; an HTML page answered with
 * 200 where a photo was expected; and a path that answers 404 (pending is what each shows before
 * its first check). The files were made by scripts/sample-images.ts.
 */
export interface DemoImage {
  /** The path the demo serves it at, under its own origin. */
  path: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The state its check ends in. */
  expected: ImageState;
}

// The files stay beside the sources: the compiled module (dist/demo/images/) reads them here too,
// at the same depth from the checkout's root.
const FILES = path.resolve(import.meta.dirname, '../../../src/demo/images');

const HTML_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Photo coming soon</title></head>
<body><p>This vehicle's photos are coming soon.</p></body>
</html>
`;

const NOT_FOUND = '<!doctype html><title>404 Not Found</title><h1>Not Found</h1>\n';

const file = (name: string) => readFileSync(path.join(FILES, name));

let loaded: readonly DemoImage[] | undefined;

/** The samples, read once. */
export function demoImages(): readonly DemoImage[] {
  loaded ??= [
    {
      path: '/demo-images/blue-car.jpg',
      status: 200,
      contentType: 'image/jpeg',
      body: file('blue-car.jpg'),
      expected: 'ok',
    },
    {
      path: '/demo-images/green-car.webp',
      status: 200,
      contentType: 'image/webp',
      body: file('green-car.webp'),
      expected: 'ok',
    },
    {
      path: '/demo-images/silver-car.avif',
      status: 200,
      contentType: 'image/avif',
      body: file('silver-car.avif'),
      expected: 'ok',
    },
    {
      path: '/demo-images/thumbnail.jpg',
      status: 200,
      contentType: 'image/jpeg',
      body: file('thumbnail.jpg'),
      expected: 'too_small',
    },
    {
      // 12,800 px wide: past the 12,000 px a side a photo may have.
      path: '/demo-images/panorama.png',
      status: 200,
      contentType: 'image/png',
      body: file('panorama.png'),
      expected: 'too_large',
    },
    {
      // A CMS's placeholder page under an image's name: the commonest silent failure.
      path: '/demo-images/coming-soon.jpg',
      status: 200,
      contentType: 'text/html; charset=utf-8',
      body: Buffer.from(HTML_PAGE),
      expected: 'not_an_image',
    },
    {
      path: '/demo-images/removed.jpg',
      status: 404,
      contentType: 'text/html; charset=utf-8',
      body: Buffer.from(NOT_FOUND),
      expected: 'unreachable',
    },
  ];
  return loaded;
}

/** The sample at a path, or undefined. */
export function demoImage(pathname: string): DemoImage | undefined {
  return demoImages().find((image) => image.path === pathname);
}
