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

/** What to focus once the next page is drawn (a filter's results), instead of the page's start. */
let focusNext = '';

/**
 * Goes to `hash`; once its page is drawn, the focus goes to `focus` (a selector) when it is there.
 * @param {string} hash
 * @param {string} focus
 */
export function navigate(hash, focus) {
  focusNext = focus;
  location.hash = hash;
}

/** The selector `navigate` asked to focus (once), or ''. */
export function takeFocusRequest() {
  const selector = focusNext;
  focusNext = '';
  return selector;
}
