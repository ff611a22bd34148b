/**
 * Examples of the webhook operations for the reference page (request bodies and answers), kept
 * apart from examples.ts so that each file stays one subject. test/openapi.test.ts validates each
 * against the schema it illustrates.
 */

type Example = { summary: string; value: unknown };

const ENDPOINT_ID = '7c4e2a1b-9d3f-4e6a-8b5c-0f1e2d3c4b5a';
const WEBHOOK_ID = 'msg_2f9c1e7a4b3d4c5e8f6a7b8c9d0e1f2a';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/**
 * The service accepts a webhook URL only when its host resolves, to public addresses only
 * (domain/webhooks/target.ts): a name under `.example` never resolves, so an example there could
 * never be registered (issue 40). example.com and example.net resolve (IANA's, public).
 */
const endpoint = {
  id: ENDPOINT_ID,
  url: 'https://example.com/acme-dms/hooks/forecourt',
  description: 'Stock mirror',
  filter: { status: ['active', 'sold'], dealerProfileIds: null },
  events: ['listings.changed', 'listing.readiness_changed'],
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  failingSince: null,
  pendingDelivery: null,
  createdAt: '2026-11-20T09:12:44.201Z',
  updatedAt: '2026-11-20T09:12:44.201Z',
};

const delivery = {
  id: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
  webhookId: WEBHOOK_ID,
  type: 'listings.changed',
  attempt: 1,
  status: 'succeeded',
  listingCount: 3,
  responseCode: 200,
  responseBody: 'ok',
  error: null,
  durationMs: 84,
  nextAttemptAt: null,
  createdAt: '2026-11-21T16:40:28.310Z',
};

export const WEBHOOK_BODY_EXAMPLES: Record<string, Record<string, Example>> = {
  createWebhookEndpoint: {
    everything: { summary: 'Every change in your scope', value: { url: endpoint.url } },
    filtered: {
      summary: 'Only active and sold listings, with a description',
      value: { url: endpoint.url, description: 'Stock mirror', filter: { status: ['active', 'sold'] } },
    },
    events: {
      summary: 'Listing changes, and when a listing becomes live or stops being live',
      value: { url: endpoint.url, events: ['listings.changed', 'listing.readiness_changed'] },
    },
  },
  updateWebhookEndpoint: {
    pause: { summary: 'Pause deliveries', value: { enabled: false } },
    events: {
      summary: 'Subscribe to image checks too',
      value: { events: ['listings.changed', 'listing.images_checked', 'listing.readiness_changed'] },
    },
    move: { summary: 'A new address', value: { url: 'https://example.net/acme-dms/hooks/forecourt' } },
  },
  resumeWebhookEndpoint: {
    stopped: { summary: 'From where it stopped', value: {} },
    replay: {
      summary: 'Replay every change after an earlier delivery',
      value: {
        cursor:
          'eyJ2IjoxLCJwIjpbIjIwMjYtMTEtMjFUMTY6NDA6MjcuMDkwMDAwWiIsIjNmMGMyYThlIl19.Xq2b9WkL0pR7sT1uV3wY5zA8cD2eF4gH',
      },
    },
  },
};

export const WEBHOOK_RESPONSE_EXAMPLES: Record<string, Record<number, Record<string, Example>>> = {
  createWebhookEndpoint: {
    201: {
      created: {
        summary: 'Registered; the secret is shown only now',
        value: { data: { ...endpoint, secret: SECRET } },
      },
    },
  },
  listWebhookEndpoints: { 200: { endpoints: { summary: 'Your endpoints', value: { data: [endpoint] } } } },
  getWebhookEndpoint: { 200: { endpoint: { summary: 'One endpoint', value: { data: endpoint } } } },
  updateWebhookEndpoint: {
    200: {
      paused: {
        summary: 'Paused by you',
        value: {
          data: {
            ...endpoint,
            enabled: false,
            disabledReason: 'paused by you',
            disabledAt: '2026-11-22T08:00:00.000Z',
            updatedAt: '2026-11-22T08:00:00.000Z',
          },
        },
      },
    },
  },
  rotateWebhookSecret: {
    200: {
      rotated: {
        summary: 'A new secret; the previous one also signs for 24 hours',
        value: {
          data: {
            ...endpoint,
            secret: 'whsec_Zp3N7vQx2LmKc8RtYw5HjD4sAe6BfG1u',
            previousSecretExpiresAt: '2026-11-23T10:00:00.000Z',
          },
        },
      },
    },
  },
  testWebhookEndpoint: {
    200: {
      ping: {
        summary: 'The ping was answered 200',
        value: { data: { ...delivery, type: 'ping', listingCount: 0, webhookId: 'msg_ping_4b3d4c5e8f6a' } },
      },
    },
  },
  resumeWebhookEndpoint: { 200: { resumed: { summary: 'Delivering again', value: { data: endpoint } } } },
  listWebhookDeliveries: {
    200: {
      log: {
        summary: 'A failed attempt, then its retry succeeded',
        value: {
          data: [
            { ...delivery, id: 'b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e', attempt: 2, durationMs: 91 },
            {
              ...delivery,
              status: 'failed',
              responseCode: 503,
              responseBody: 'upstream unavailable',
              error: 'answered 503',
              durationMs: 12,
              nextAttemptAt: '2026-11-21T16:40:30.402Z',
              createdAt: '2026-11-21T16:40:28.310Z',
            },
          ],
          pagination: { pageSize: 50, hasMore: false },
        },
      },
    },
  },
  listEvents: {
    200: {
      page: {
        summary: 'An image check and the readiness it changed; nothing after them yet',
        value: {
          data: [
            {
              id: 'evt_5b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
              type: 'listing.images_checked',
              occurredAt: '2026-11-28T13:02:11.481Z',
              listingId: '3f0c2a8e-6b1d-4c9e-9a7f-2d5e8b4c1a90',
              externalReference: 'STOCK-1042',
              images: [
                { url: 'https://example.com/stock/1042/front.jpg', from: 'pending', to: 'ok', problem: null },
              ],
            },
            {
              id: 'evt_6c2e3d4f-5a6b-4c7d-9e8f-0a1b2c3d4e5f',
              type: 'listing.readiness_changed',
              occurredAt: '2026-11-28T13:02:11.481Z',
              listingId: '3f0c2a8e-6b1d-4c9e-9a7f-2d5e8b4c1a90',
              externalReference: 'STOCK-1042',
              from: {
                live: false,
                reasons: [{ code: 'images_pending', message: 'no image has been checked yet' }],
              },
              to: { live: true, reasons: [] },
            },
          ],
          pagination: {
            pageSize: 100,
            hasMore: false,
            nextCursor:
              'eyJ2IjoxLCJwIjpbIjIwMjYtMTEtMjhUMTM6MDI6MTEuNDgxMjA3WiIsIjQyIl19.Qk9Xn3fP2sT8vL1mR6cY0dZ4hJ7aE5uW',
          },
        },
      },
    },
  },
};
