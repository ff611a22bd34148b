import type { KeyUseRecord } from '../store/request-records.js';
import { DISABLED_BY_PARTNER } from '../store/webhooks/index.js';
import { rotationOf } from './rotation.js';
import type { PartnerView, RotationView } from './shapes/partners.js';
import type { EndpointView } from './shapes/webhooks.js';

/**
 * What the overview flags (docs/operations.md, "What needs attention"). The thresholds are ours to
 * choose; each is written here once, and the overview's answer says them back.
 */
export const ATTENTION = {
  /** A partner's share of failed answers (4xx, 429 included, and 5xx) over the last hour… */
  errorShare: 0.25,
  /** …counted once it made at least this many requests in that hour (two 404s are no trend). */
  errorMinRequests: 10,
  /** A grace ending within this many hours while the partner has not moved. */
  graceEndingHours: 24,
  /** A retired secret tried within this many hours. */
  retiredHours: 24,
} as const;

export type AttentionKind =
  | 'error_rate'
  | 'grace_ending'
  | 'retired_secret'
  | 'webhook_failing'
  | 'webhook_disabled';

export interface AttentionItem {
  kind: AttentionKind;
  partner: { id: string; name: string } | null;
  endpoint: { id: string; url: string } | null;
  /** error_rate: requests in the hour; retired_secret: attempts in the last retiredHours. */
  requests: number | null;
  /** error_rate: of them, answered 4xx or 5xx. */
  failed: number | null;
  /**
   * grace_ending: when the previous secret stops; retired_secret: the minute of the last attempt;
   * webhook_failing: failing since; webhook_disabled: disabled at.
   */
  at: string | null;
  /** grace_ending: not_moved or moving. */
  verdict: RotationView['verdict'] | null;
  /** webhook_disabled: why, in the service's or the operator's words. */
  reason: string | null;
}

interface PartnerTraffic {
  partnerId: string;
  requests: number;
  errors: number;
  retiredKeyRequests: number;
  lastRetiredMinute: string | null;
}

const item = (kind: AttentionKind, fields: Partial<AttentionItem>): AttentionItem => ({
  kind,
  partner: null,
  endpoint: null,
  requests: null,
  failed: null,
  at: null,
  verdict: null,
  reason: null,
  ...fields,
});

/**
 * The "needs attention" list, most pressing kind first: partners failing a quarter of their
 * requests, partners still on a previous secret whose grace ends within a day, retired secrets
 * still tried, webhook endpoints failing or disabled (but not those their partner disabled).
 */
export function needsAttention(input: {
  partners: PartnerView[];
  /** Over the last hour. */
  lastHour: PartnerTraffic[];
  /** Over the last ATTENTION.retiredHours. */
  lastDay: PartnerTraffic[];
  keyUse: Map<string, KeyUseRecord[]>;
  endpoints: EndpointView[];
  now: number;
}): AttentionItem[] {
  const byId = new Map(input.partners.map((p) => [p.id, p]));
  const who = (id: string) => {
    const p = byId.get(id);
    return p ? { id: p.id, name: p.name } : null;
  };
  const out: AttentionItem[] = [];
  const failing = input.lastHour
    .filter(
      (t) =>
        byId.has(t.partnerId) &&
        t.requests >= ATTENTION.errorMinRequests &&
        t.errors >= t.requests * ATTENTION.errorShare,
    )
    .sort((a, b) => b.errors / b.requests - a.errors / a.requests);
  for (const t of failing)
    out.push(item('error_rate', { partner: who(t.partnerId), requests: t.requests, failed: t.errors }));

  const soon = input.now + ATTENTION.graceEndingHours * 3_600_000;
  const ending = input.partners
    .filter((p) => p.previousSecretValidUntil && Date.parse(p.previousSecretValidUntil) <= soon)
    .sort((a, b) => String(a.previousSecretValidUntil).localeCompare(String(b.previousSecretValidUntil)));
  for (const p of ending) {
    const { verdict } = rotationOf(p, input.keyUse.get(p.id) ?? []);
    if (verdict === 'moved') continue;
    out.push(item('grace_ending', { partner: who(p.id), at: p.previousSecretValidUntil, verdict }));
  }

  for (const t of input.lastDay.filter((t) => byId.has(t.partnerId) && t.retiredKeyRequests > 0))
    out.push(
      item('retired_secret', {
        partner: who(t.partnerId),
        requests: t.retiredKeyRequests,
        at: t.lastRetiredMinute,
      }),
    );

  for (const e of input.endpoints) {
    const endpoint = { id: e.id, url: e.url };
    if (e.enabled && e.failingSince)
      out.push(item('webhook_failing', { partner: who(e.partnerId), endpoint, at: e.failingSince }));
    // An endpoint its partner switched off is the partner's choice, not a fault to look into.
    else if (!e.enabled && e.disabledReason !== DISABLED_BY_PARTNER)
      out.push(
        item('webhook_disabled', {
          partner: who(e.partnerId),
          endpoint,
          at: e.disabledAt,
          reason: e.disabledReason,
        }),
      );
  }
  return out;
}
