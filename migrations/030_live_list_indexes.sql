-- The live list pages' orders, of live listings only (docs/test-mode.md, "Live performance").
--
-- A live page reads `NOT test` and, unless it asks for every status, one status, in
-- (changed_at, id) order: globally, or per dealer. Migration 021 gave the per-dealer order
-- (dealer_profile_id, status, changed_at, id) but no global one by status, and since the list's
-- order became changed_at (migration 021) a global page of active listings walked
-- listings_changed_idx and read each row to check its status and mode: page 400 of the 1M
-- benchmark read 27,000 pages of the table, 89 ms (2026-11-28 matrix; 1.51 x page 1 before).
-- Partial indexes WHERE NOT test answer both from the index alone: no row is read to skip a
-- test listing or another status, and test rows (up to 10,000 a partner) are not in them.
CREATE INDEX listings_live_status_changed_idx ON listings (status, changed_at, id) WHERE NOT test;
CREATE INDEX listings_live_dealer_status_changed_idx ON listings (dealer_profile_id, status, changed_at, id)
  WHERE NOT test;
-- Replaced by the partial one above: every read by dealer and status is a live read (test reads
-- go by partner: listings_test_idx).
DROP INDEX listings_dealer_status_changed_idx;
