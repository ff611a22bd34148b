-- Webhooks (docs/webhooks.md). An endpoint is a sync cursor the service keeps for a partner: its
-- deliveries are the next pages of the same settled (updated_at, id) walk that GET /listings?cursor=
-- serves, and its position moves only when the receiver answers 2xx. Nothing is written per listing
-- change, so writes cost the same whatever the number of endpoints.
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
  url text NOT NULL,
  description text,
  -- The endpoint's filter: statuses (null: all) and dealer profiles with their sub-locations (null:
  -- the partner's whole scope, as it is at each delivery).
  filter_statuses text[],
  filter_profile_ids uuid[],
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  disabled_at timestamptz,
  -- Disabled by the operator: only the operator enables it again (the partner's resume is refused).
  held_by_operator boolean NOT NULL DEFAULT false,
  -- The signing secret must be kept as is: a receiver checks an HMAC made with it. On rotation the
  -- previous one keeps signing beside it until previous_secret_expires_at.
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  -- The position after the last listing the receiver acknowledged.
  position_ts timestamptz NOT NULL,
  position_id uuid NOT NULL,
  -- The delivery in flight (sent, not acknowledged yet): retried until a 2xx, nothing after it.
  pending_delivery_id uuid,
  pending_through_ts timestamptz,
  pending_through_id uuid,
  pending_attempt integer NOT NULL DEFAULT 0,
  -- Since when deliveries fail without a 2xx in between; past the retry period the endpoint is disabled.
  failing_since timestamptz,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- A lease: the instance delivering for this endpoint, until when. Others skip it until it lapses.
  lease_owner text,
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhook_endpoints_partner_idx ON webhook_endpoints (partner_id, created_at, id);
-- The dispatcher's claim: enabled endpoints by next attempt.
CREATE INDEX webhook_endpoints_due_idx ON webhook_endpoints (next_attempt_at) WHERE enabled;

-- The delivery log: one row per attempt, newest first for the partner. Pruned after 30 days.
CREATE TABLE webhook_attempts (
  id uuid PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  -- The webhook-id header: the same on every attempt of one delivery.
  delivery_id uuid NOT NULL,
  type text NOT NULL,
  attempt integer NOT NULL,
  status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  listing_count integer NOT NULL,
  response_code integer,
  response_body text,
  error text,
  duration_ms integer NOT NULL,
  next_attempt_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_attempts_created_idx ON webhook_attempts (created_at);

-- Partners now manage their own endpoints, and the service disables failing ones: both are audited.
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_check
  CHECK (actor IN ('operator', 'anonymous', 'partner', 'service'));
