-- What a partner has tried in test mode (docs/test-mode.md, "What the operator sees"): the signs
-- that it is ready to go live, on its console page. Per partner and activity, how many and the
-- first and last: successful test requests that wrote listings ('write'), read them ('read'),
-- followed a cursor ('sync'), read the events feed ('events'), written in batches by the request
-- recorder as partner_key_use is; and webhook deliveries a test endpoint acknowledged ('webhook'),
-- counted by the trigger below where the attempt is recorded (three writers record attempts: one
-- place that none of them can forget). Kept through a wipe of the test data (having tried stays
-- true); deleted with the other request records after their retention.
CREATE TABLE partner_test_use (
  partner_id uuid NOT NULL,
  activity   text NOT NULL CHECK (activity IN ('write', 'read', 'sync', 'events', 'webhook')),
  requests   bigint NOT NULL,
  first_at   timestamptz NOT NULL,
  last_at    timestamptz NOT NULL,
  PRIMARY KEY (partner_id, activity)
);

-- Per statement, not per row: one upsert per partner for a batch of attempts. A live endpoint's
-- attempts find no test endpoint in the join and write nothing.
CREATE FUNCTION count_test_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO partner_test_use AS u (partner_id, activity, requests, first_at, last_at)
  SELECT e.partner_id, 'webhook', count(*), min(n.created_at), max(n.created_at)
  FROM new_attempts n JOIN webhook_endpoints e ON e.id = n.endpoint_id
  WHERE n.status = 'succeeded' AND e.test
  GROUP BY e.partner_id
  ON CONFLICT (partner_id, activity) DO UPDATE SET
    requests = u.requests + excluded.requests,
    first_at = least(u.first_at, excluded.first_at),
    last_at = greatest(u.last_at, excluded.last_at);
  RETURN NULL;
END $$;

CREATE TRIGGER webhook_attempts_test_use AFTER INSERT ON webhook_attempts
  REFERENCING NEW TABLE AS new_attempts FOR EACH STATEMENT EXECUTE FUNCTION count_test_webhooks();
