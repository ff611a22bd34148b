-- The planner's statistics on listings only for the columns a statement filters, joins or sorts
-- on (store/listings/reads.ts, writes.ts; the indexes of 001, 004 and 011). ANALYZE samples 30,000
-- rows and computes every column's statistics; on the embedded database, which the service
-- analyzes itself (store/pglite-maintenance.ts), that took 1.1 s of its only connection at 100,000
-- listings, and 0.37 s for these eight columns. A column that becomes a filter gets its
-- statistics back with SET STATISTICS -1 (the default) in the migration that adds the filter.
DO $$
DECLARE
  col text;
BEGIN
  FOR col IN
    SELECT attname FROM pg_attribute
    WHERE attrelid = 'listings'::regclass AND attnum > 0 AND NOT attisdropped
      AND attname NOT IN ('id', 'partner_id', 'external_reference', 'dealer_profile_id', 'status',
                          'created_at', 'updated_at', 'price')
  LOOP
    EXECUTE format('ALTER TABLE listings ALTER COLUMN %I SET STATISTICS 0', col);
  END LOOP;
END $$;
