// @ts-check
// The shapes the admin API answers, taken from the Zod schemas its routes answer with: a field the
// API renames or drops fails `npm run typecheck` here, instead of showing "undefined" to an operator.
// Type imports only: nothing of src/ is loaded by the browser.

/** @typedef {import('../src/domain/shapes/partners.js').PartnerView} Partner */
/** @typedef {import('../src/api/schemas/admin.js').AuditEntry} AuditEntry */
/** @typedef {import('../src/api/schemas/admin.js').OperatorToken} Operator */
/** @typedef {import('../src/api/admin/v1/overview.js').OverviewView} Overview */
/** @typedef {import('../src/api/schemas/requests.js').OperatorRequestRecord} RequestRecord */
/** @typedef {import('../src/api/schemas/requests.js').Usage} Usage */
/** @typedef {import('../src/api/schemas/requests.js').TestUse} TestUse */
/** @typedef {import('../src/api/schemas/requests.js').OperatorRequestPage} RequestPage */
/** @typedef {import('../src/domain/shapes/webhooks.js').EndpointView} WebhookEndpoint */
/** @typedef {import('../src/domain/shapes/webhooks.js').DeliveryView} Delivery */
/** @typedef {import('../src/api/admin/v1/dealers.js').DealerView} Dealer */
/** @typedef {import('../src/api/admin/v1/dealers.js').MoveImpactView} MoveImpact */
/** @typedef {import('../src/api/admin/v1/image-health.js').ImageHealthView} ImageHealth */
/** @typedef {import('../src/api/admin/v1/listings.js').ListingInspectionView} ListingInspection */

/** What a page of the console is drawn from: nodes, or nothing where a part is absent. */
/** @typedef {(Node | null | undefined | false)[]} Content */

export {};
