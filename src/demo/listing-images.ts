/**
 * Which sample images (images/index.ts) each demo listing carries, so that a new partner finds
 * every image state and every readiness reason on the demo (docs/images.md, "The demo"). By the
 * listing's place in the seed (DEMO-00001 is 0), every 20 listings alike:
 *
 * | place % 20 | images | its readiness |
 * | --- | --- | --- |
 * | 3 | the thumbnail only | `no_working_image` (`too_small`) |
 * | 7 | the HTML page only | `no_working_image` (`not_an_image`) |
 * | 11 | the 404 only | `no_working_image` (`unreachable`, `not_found`) |
 * | 13 | none | `no_images` |
 * | 15 | the panorama only | `no_working_image` (`too_large`) |
 * | 18 | good photos and the 404 | live when active: a broken image beside a good one |
 * | 19 | good photos and the thumbnail | the same |
 * | any other | good photos (JPEG, WebP, AVIF) | live when active |
 *
 * The good photos carry `?n=<position>`: a few distinct URLs (one check each, shared by every
 * listing using it), so the checks are over seconds after the demo starts.
 */
export const DEMO_IMAGE_PLAN: Readonly<Record<number, readonly string[]>> = {
  3: ['/demo-images/thumbnail.jpg'],
  7: ['/demo-images/coming-soon.jpg'],
  11: ['/demo-images/removed.jpg'],
  13: [],
  15: ['/demo-images/panorama.png'],
};

const GOOD = ['/demo-images/blue-car.jpg', '/demo-images/green-car.webp', '/demo-images/silver-car.avif'];
const BESIDE_GOOD: Readonly<Record<number, string>> = {
  18: '/demo-images/removed.jpg',
  19: '/demo-images/thumbnail.jpg',
};

/** The image URLs of the listing at `place` in the seed, `count` of them when it has good photos. */
export function demoListingImages(place: number, count: number, origin: string): string[] {
  const kind = place % 20;
  const only = DEMO_IMAGE_PLAN[kind];
  if (only) return only.map((p) => `${origin}${p}`);
  const good = Array.from(
    { length: count },
    (_, n) => `${origin}${GOOD[(place + n) % GOOD.length]}?n=${n + 1}`,
  );
  const broken = BESIDE_GOOD[kind];
  return broken ? [...good.slice(0, Math.max(1, count - 1)), `${origin}${broken}`] : good;
}
