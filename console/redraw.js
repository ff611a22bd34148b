// @ts-check
// Views ask for the page to be drawn again after an action; router.js does it. A module of its
// own so that views need not import the router (which imports them).

/** @typedef {{navigation?: boolean, keep?: Node}} DrawOptions */

/** @type {(options?: DrawOptions) => Promise<void>} */
let handler = async () => {};

/** @param {(options?: DrawOptions) => Promise<void>} draw */
export function onRedraw(draw) {
  handler = draw;
}

/**
 * Draws the current page again. `keep`: shown after its heading (a secret just issued).
 * @param {DrawOptions} [options]
 */
export const redraw = (options) => handler(options);
