-- Test mode (docs/test-mode.md): a partner's test secret reads and writes only its own test
-- listings, kept in the listings table beside the live ones and told apart by `test`. Every read
-- filters on it (live: NOT test; test: test AND partner_id = the caller), the counters and the
-- status history keep live listings only, and events carry it so live webhooks never see a test one.

-- At most one test secret per partner; revoking it deletes the row. Apart from partner_secrets so
-- that rotations, grace periods and the "moved" verdict of the live secret never see it.
CREATE TABLE partner_test_secrets (
  secret_hash bytea PRIMARY KEY,
  partner_id uuid NOT NULL UNIQUE REFERENCES partners (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER partner_test_secrets_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON partner_test_secrets
  FOR EACH STATEMENT EXECUTE FUNCTION notify_access_changed();

-- A constant default: no table rewrite, live rows are false at once.
ALTER TABLE listings ADD COLUMN test boolean NOT NULL DEFAULT false;
-- A reference names one listing of a partner in each mode: writing a live reference in test mode
-- makes a test listing and leaves the live one alone.
ALTER TABLE listings DROP CONSTRAINT listings_partner_reference_key;
ALTER TABLE listings ADD CONSTRAINT listings_partner_reference_key UNIQUE (partner_id, test, external_reference);
-- A partner's test listings in walk order (test lists, counts, wipe and expiry); live rows are not in it.
CREATE INDEX listings_test_idx ON listings (partner_id, changed_at, id) WHERE test;

-- The counters serve live lists and location statistics only: test rows are counted where they are.
CREATE OR REPLACE FUNCTION listing_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO listing_counts AS c (dealer_profile_id, status, n)
    SELECT dealer_profile_id, status, count(*) FROM new_rows WHERE NOT test GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (dealer_profile_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO listing_counts AS c (dealer_profile_id, status, n)
    SELECT dealer_profile_id, status, sum(d) FROM (
      SELECT dealer_profile_id, status, 1 AS d FROM new_rows WHERE NOT test
      UNION ALL
      SELECT dealer_profile_id, status, -1 FROM old_rows WHERE NOT test
    ) x GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
    ON CONFLICT (dealer_profile_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  ELSE
    INSERT INTO listing_counts AS c (dealer_profile_id, status, n)
    SELECT dealer_profile_id, status, -count(*) FROM old_rows WHERE NOT test GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (dealer_profile_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  END IF;
  RETURN NULL;
END $$;

-- Which mode an event belongs to: a live endpoint's walk reads live events only.
ALTER TABLE events ADD COLUMN test boolean NOT NULL DEFAULT false;
