-- A test list's totalItems, counted from an index alone (docs/test-mode.md, "Live performance").
--
-- The counters of migration 004 hold live listings only, so a test list counts its partner's test
-- listings (up to 10,000). listings_test_idx (partner_id, changed_at, id) does not hold the status,
-- so that count read every row: 15 ms at 10,000 test listings, where a whole live page costs
-- 1.6 ms, and a busy test partner's pages took CPU from live ones (bench/test-mode.ts: live lists
-- beside it at 0.67 of the same load sent live). With the status and dealer in a partial index,
-- the count is an index-only scan: 0.8 ms (EXPLAIN ANALYZE, PostgreSQL 15).
CREATE INDEX listings_test_count_idx ON listings (partner_id, status, dealer_profile_id) WHERE test;
