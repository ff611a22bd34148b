-- Events a webhook endpoint subscribes to (docs/webhooks.md, "Event types"). The types themselves
-- are listed in src/domain/events/registry.ts; the database keeps only their names.

-- What each endpoint receives. listings.changed (the sync-cursor walk) is what every endpoint
-- received before, so it is every existing endpoint's subscription and the default.
ALTER TABLE webhook_endpoints ADD COLUMN events text[] NOT NULL DEFAULT '{listings.changed}';

-- The outbox: one row per event, written in the transaction of the change that causes it
-- (src/store/events.ts). Delivered in (stamp, seq) order, which is commit order for the events of
-- one listing and is walked behind the commit horizon like listings (docs/sync.md):
--  - stamp comes from write_stamp() (migration 005), never earlier than the listing's previous
--    event, so a position behind the horizon has every event before it committed;
--  - seq orders the events of one stamp. It is taken while the listing's row is locked, after the
--    previous event of that listing committed, so it is larger.
CREATE TABLE events (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  stamp timestamptz NOT NULL,
  type text NOT NULL,
  listing_id uuid NOT NULL,
  -- Who may receive it: the listing's dealer profile and status when it happened, for the scope
  -- and the endpoint's filter. Kept on the row so a delivery reads only this table.
  partner_id uuid NOT NULL,
  profile_id uuid NOT NULL,
  status text NOT NULL,
  external_reference text NOT NULL,
  -- The type's own fields (registry.ts has their schema), as the receiver gets them.
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_walk_idx ON events (stamp, seq);
CREATE INDEX events_listing_idx ON events (listing_id, stamp);
CREATE INDEX events_created_idx ON events (created_at);

-- Each endpoint's walk of the outbox, beside its walk of listings (webhook_endpoints.position_*):
-- its own position, delivery in flight, failure streak and lease, so the two never wait on each
-- other. A row per endpoint, made with it.
CREATE TABLE webhook_event_streams (
  endpoint_id uuid PRIMARY KEY REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  position_ts timestamptz NOT NULL,
  position_seq bigint NOT NULL,
  pending_delivery_id uuid,
  pending_through_ts timestamptz,
  pending_through_seq bigint,
  pending_attempt integer NOT NULL DEFAULT 0,
  failing_since timestamptz,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_owner text,
  lease_until timestamptz
);
CREATE INDEX webhook_event_streams_due_idx ON webhook_event_streams (next_attempt_at);

INSERT INTO webhook_event_streams (endpoint_id, position_ts, position_seq)
  SELECT id, now(), 0 FROM webhook_endpoints;
