-- Which secret a partner's requests actually sent, exact to the request (issue 46; docs/operations.md,
-- "Rotating a secret"). partner_usage counts per minute, and a rotation's own minute holds requests
-- made before it with the secret that was current then: counted with "the new secret", they made
-- the console say a partner had moved when it had not.
--
-- Per partner, rotation and secret state: how many requests were authenticated with the current
-- secret, the previous one (in its grace) or a retired one, and the first and last of them (when
-- each arrived). `rotated_at` is the partner's secret_rotated_at when the request was authenticated
-- ('-infinity': before any rotation), so the rows of the latest rotation are exactly the requests
-- made since it: `current` with the new secret, `previous` with the one it replaced. Written in
-- batches by the request recorder, deleted with the other request records after the retention.
CREATE TABLE partner_key_use (
  partner_id uuid NOT NULL,
  rotated_at timestamptz NOT NULL,
  key        text NOT NULL CHECK (key IN ('current', 'previous', 'retired')),
  requests   bigint NOT NULL,
  first_at   timestamptz NOT NULL,
  last_at    timestamptz NOT NULL,
  PRIMARY KEY (partner_id, rotated_at, key)
);
