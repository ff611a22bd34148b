// @ts-check
// The operator's console: one page, hash routes, the admin API of this same service.
// Where things are: router.js (pages and sign-out), admin-api.js (the calls), ui.js (DOM helpers),
// format.js (how values are written), tree.js (the dealer tree), views/ (one file per screen).
import { start } from './router.js';

start();
