-- A global partner's totalItems sums one counter row per dealer for the statuses asked (every
-- dealer's, as no dealer filter narrows them). Without this index that is a scan of the whole
-- table, every status's rows read to keep one status's: at 2,000 dealers, 0.83 ms of a list page
-- on the embedded database; with it, an index-only scan of the status's own rows, 0.30 ms
-- (docs/benchmarks.md). Counter rows change only when a write changes a dealer's count per status
-- (a create, a delete, a status change or a move), so the write side pays one more index entry
-- for those, never for a content update.
CREATE INDEX listing_counts_status_idx ON listing_counts (status) INCLUDE (n);
