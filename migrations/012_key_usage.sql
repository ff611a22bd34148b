-- Requests per secret during a rotation's grace (issue 30; docs/operations.md, "Rotating a
-- secret"): the console tells the operator how many requests came with the new secret and how
-- many with the previous one since the rotation, and when it happened.
--
-- Per partner and minute, of `requests`: those made with the previous secret (in its grace) and
-- with a retired one (refused, 401). The rest were made with the current secret. Minutes counted
-- before this migration hold 0 in both.
ALTER TABLE partner_usage ADD COLUMN previous_key_requests integer NOT NULL DEFAULT 0;
ALTER TABLE partner_usage ADD COLUMN retired_key_requests integer NOT NULL DEFAULT 0;

-- When the partner's secret was last rotated (null: never, or before this migration; the audit
-- log's partner.secret_rotated has those).
ALTER TABLE partners ADD COLUMN secret_rotated_at timestamptz;
