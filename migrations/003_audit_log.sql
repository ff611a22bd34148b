-- Operator actions and failed partner authentications, for incident review. Entries outlive what
-- they name (no foreign keys) and the service never deletes them (docs/operations.md: retention).
CREATE TABLE audit_log (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor      text NOT NULL CHECK (actor IN ('operator', 'anonymous')),
  action     text NOT NULL,
  partner_id uuid,
  dealer_id  uuid,
  client_ip  text,
  request_id text,
  details    jsonb NOT NULL DEFAULT '{}'::jsonb
);

-- Newest first is the primary key read backwards; these serve the two filters operators use.
CREATE INDEX audit_log_partner_idx ON audit_log (partner_id, id) WHERE partner_id IS NOT NULL;
CREATE INDEX audit_log_action_idx ON audit_log (action text_pattern_ops, id);
