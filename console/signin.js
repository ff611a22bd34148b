// @ts-check
// Signing in and out: the token is kept in this tab only (sessionStorage).
import { api, TOKEN_KEY } from './admin-api.js';
import { redraw } from './redraw.js';
import { attempt, field, h, main, nav, submitted, text, who } from './ui.js';

/** Said on the sign-in form when the service refuses the token the tab holds. */
export const REFUSED =
  'The service refused your token: it was revoked, or the service restarted with a new ADMIN_TOKEN. Sign in again with a current token; if yours was revoked, ask another operator for a new one.';

/** @param {string} [message] why the form is shown (signed out, token refused) */
function signInView(message) {
  const errors = h('div');
  return [
    h('h1', {}, 'Sign in'),
    message ? h('p', { class: 'warn', role: 'alert', 'data-signin-message': '' }, message) : null,
    h(
      'form',
      {
        class: 'panel',
        onsubmit: submitted((f) => {
          sessionStorage.setItem(TOKEN_KEY, text(f, 'token'));
          void attempt(errors, async () => {
            try {
              await api('GET', '/operators/me', undefined, { signingIn: true });
            } catch (error) {
              sessionStorage.removeItem(TOKEN_KEY);
              throw /** @type {any} */ (error).status === 401
                ? new Error('This token is not an operator token or ADMIN_TOKEN of this service.')
                : error;
            }
            await redraw({ navigation: true });
          });
        }),
      },
      field('Operator token (fco_…) or ADMIN_TOKEN', {
        name: 'token',
        type: 'password',
        required: true,
        autocomplete: 'off',
        size: 60,
      }),
      h('p', { class: 'muted' }, 'Kept in this browser tab only, until you sign out or close it.'),
      h('p', {}, h('button', { type: 'submit' }, 'Sign in')),
      errors,
    ),
  ];
}

/**
 * Forgets the token and shows the sign-in form (with `message`, when there is one to say).
 * @param {string} [message]
 */
export function showSignIn(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  nav.hidden = true;
  who.replaceChildren();
  main.removeAttribute('aria-busy');
  main.replaceChildren(.../** @type {Node[]} */ (signInView(message).filter(Boolean)));
  document.title = 'Sign in · Forecourt console';
}
