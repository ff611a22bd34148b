-- A global partner's totalItems sums one counter row per dealer for the statuses asked (every
-- dealer's, as no dealer filter narrows them). Without this index that is a scan of the whole
-- table, every status's rows read to keep one status's: at 2,000 dealers, 0.83 ms of a list page
-- on the embedded database; with it, a bitmap scan of the status's own rows, 0.31 ms (0.37 ms right
-- after every one of them changed). On `status` alone, not with `n` included: a counter's update
-- changes only `n`, so it stays a heap-only (HOT) update, without new index entries. With `n`
-- included the scan was index-only (0.30 ms), but every counter update wrote both indexes
-- (docs/benchmarks.md).
CREATE INDEX listing_counts_status_idx ON listing_counts (status);
