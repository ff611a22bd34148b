-- Named operator tokens (docs/operations.md: operators): each operator signs in to the admin API
-- and the console with a token of their own, so the audit log says who did what. ADMIN_TOKEN stays
-- as the bootstrap. Only SHA-256 hashes are stored; a token is shown once, when created.
CREATE TABLE operator_tokens (
  id           uuid PRIMARY KEY,
  name         text NOT NULL,
  token_hash   bytea NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  -- Who created it (an operator's name, or "ADMIN_TOKEN").
  created_by   text NOT NULL,
  last_used_at timestamptz,
  revoked_at   timestamptz
);
-- One live token per name: the audit log's names must not be ambiguous.
CREATE UNIQUE INDEX operator_tokens_live_name_idx ON operator_tokens (lower(name)) WHERE revoked_at IS NULL;

-- The operator who acted (the token's name; "ADMIN_TOKEN" for the bootstrap token).
ALTER TABLE audit_log ADD COLUMN operator text;

-- Which of its secrets a partner used last (with last_used_at): during a rotation's grace period the
-- operator sees whether it has moved to the new one.
ALTER TABLE partners ADD COLUMN last_used_key text CHECK (last_used_key IN ('current', 'previous'));

-- Why an operator disabled a partner (shown to operators; cleared when it is enabled again).
ALTER TABLE partners ADD COLUMN disabled_reason text;
