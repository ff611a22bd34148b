-- Listing counts per dealer profile and status, kept exact by statement-level triggers in the
-- writing transaction. A list page's totalItems and a location's stats then sum a few counter rows
-- instead of counting up to a million listings on every request (docs/benchmarks.md).
CREATE TABLE listing_counts (
  dealer_profile_id uuid NOT NULL,
  status text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (dealer_profile_id, status)
);

-- One statement's net change per (dealer, status), applied in key order so that concurrent writers
-- lock counter rows in the same order. Content-only updates net to zero and touch no counter row.
CREATE FUNCTION listing_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO listing_counts AS c (dealer_profile_id, status, n)
    SELECT dealer_profile_id, status, count(*) FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (dealer_profile_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO listing_counts AS c (dealer_profile_id, status, n)
    SELECT dealer_profile_id, status, sum(d) FROM (
      SELECT dealer_profile_id, status, 1 AS d FROM new_rows
      UNION ALL
      SELECT dealer_profile_id, status, -1 FROM old_rows
    ) x GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
    ON CONFLICT (dealer_profile_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  ELSE
    INSERT INTO listing_counts AS c (dealer_profile_id, status, n)
    SELECT dealer_profile_id, status, -count(*) FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (dealer_profile_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER listing_counts_insert AFTER INSERT ON listings
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_apply();
CREATE TRIGGER listing_counts_update AFTER UPDATE ON listings
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_apply();
CREATE TRIGGER listing_counts_delete AFTER DELETE ON listings
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_counts_apply();

INSERT INTO listing_counts (dealer_profile_id, status, n)
SELECT dealer_profile_id, status, count(*) FROM listings GROUP BY 1, 2;

-- A location's mean number of active listings over a past calendar month never changes once the
-- month is over (history rows are stamped with the time of the change), so it is computed once.
CREATE TABLE location_month_stats (
  dealer_profile_id uuid NOT NULL,
  month date NOT NULL,
  avg_active double precision NOT NULL,
  PRIMARY KEY (dealer_profile_id, month)
);
