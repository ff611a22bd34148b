-- Test traffic counted apart in the per-minute usage (docs/test-mode.md): a partner's minute has
-- a live row and a test row, so the usage view reads live requests unmixed with test ones.
ALTER TABLE partner_usage ADD COLUMN test boolean NOT NULL DEFAULT false;
ALTER TABLE partner_usage DROP CONSTRAINT partner_usage_pkey;
ALTER TABLE partner_usage ADD PRIMARY KEY (partner_id, minute, test);
