-- What each partner's traffic looked like (docs/operations.md: request records): every failed
-- partner request, and per partner and minute the counts. Written in batches off the request path
-- (domain/request-records.ts) and deleted after REQUEST_RECORDS_RETENTION_DAYS.

-- A failed request (4xx or 5xx) to the partner API. partner_id is null when no partner could be
-- identified (no secret, a malformed one, or one no partner ever held). No foreign key: records
-- outlive what they name, like the audit log. key says which of the partner's secrets was sent.
CREATE TABLE request_failures (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at          timestamptz NOT NULL,
  request_id  text NOT NULL,
  partner_id  uuid,
  key         text CHECK (key IN ('current', 'previous', 'retired')),
  method      text NOT NULL,
  route       text NOT NULL,
  status      smallint NOT NULL,
  code        text,
  message     text,
  -- The first issues (at most 10) and how many there were.
  issues      jsonb NOT NULL DEFAULT '[]'::jsonb,
  issue_count integer NOT NULL DEFAULT 0,
  duration_ms real NOT NULL
);
-- A partner's records newest first (the id follows arrival), and the operator's by request id.
-- Retention needs no index of its own: the oldest rows are the lowest ids (the primary key). Each
-- index is paid on every insert, on the path of the requests the insert competes with.
CREATE INDEX request_failures_partner_idx ON request_failures (partner_id, id);
CREATE INDEX request_failures_request_idx ON request_failures (request_id);

-- Per partner and minute. Requests no partner could be identified for count under the nil UUID.
-- Instances add their counts (INSERT … ON CONFLICT DO UPDATE SET n = n + excluded.n).
CREATE TABLE partner_usage (
  partner_id    uuid NOT NULL,
  minute        timestamptz NOT NULL,
  requests      integer NOT NULL DEFAULT 0,
  client_errors integer NOT NULL DEFAULT 0,
  server_errors integer NOT NULL DEFAULT 0,
  rate_limited  integer NOT NULL DEFAULT 0,
  items_written integer NOT NULL DEFAULT 0,
  items_failed  integer NOT NULL DEFAULT 0,
  -- Failures counted here but not kept one by one (over the per-partner limit of a minute).
  failures_not_kept integer NOT NULL DEFAULT 0,
  PRIMARY KEY (partner_id, minute)
);
CREATE INDEX partner_usage_minute_idx ON partner_usage (minute);

-- Rotated-away secrets are kept (expired) so a request with one is attributed to its partner.
-- (Before this migration they were deleted; those already deleted stay unknown.)
