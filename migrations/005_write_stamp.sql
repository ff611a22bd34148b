-- Sync cursors settle on the write transactions that are still open, not on the clock
-- (docs/sync.md, "Why nothing is missed"). Two pieces make that possible.
--
-- 1. A write announces itself before it takes its timestamp. write_stamp() is a transaction's
--    updatedAt: on its first call it takes a transaction id (which makes the transaction visible
--    as a writer in pg_stat_activity.backend_xid), then reads the clock, and keeps that value for
--    the rest of the transaction. A reader that does not see a writer yet therefore knows that the
--    writer's stamp will be later than the reader's own start. now() cannot give that: it is the
--    instant of BEGIN, taken before anything about the transaction is visible to other sessions.
CREATE FUNCTION write_stamp() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  stamp text := current_setting('forecourt.write_stamp', true);
BEGIN
  IF stamp IS NULL OR stamp = '' THEN
    PERFORM pg_current_xact_id();
    stamp := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
    -- is_local: the value is forgotten when the transaction ends.
    PERFORM set_config('forecourt.write_stamp', stamp, true);
  END IF;
  RETURN stamp::timestamptz;
END $$;

-- A listing's new updatedAt: the transaction's stamp, but always after the version it replaces. A
-- transaction can take its stamp, then wait for a row lock held by a writer that stamped later;
-- without this its newer version would carry the older time, and a client keeping "the greater
-- updatedAt" would keep the version it replaced. One millisecond: the API shows milliseconds, so
-- the later version is later there too. Only ever later than write_stamp(), so the horizon
-- argument holds unchanged.
CREATE FUNCTION next_updated_at(previous timestamptz) RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
  SELECT greatest(write_stamp(), previous + interval '1 millisecond')
$$;

ALTER TABLE listings
  ALTER COLUMN created_at SET DEFAULT write_stamp(),
  ALTER COLUMN updated_at SET DEFAULT write_stamp();
ALTER TABLE listing_status_history ALTER COLUMN changed_at SET DEFAULT write_stamp();

-- 2. For a streaming replica (DATABASE_READ_URL): the primary's horizon, published in a row that
--    replicates with the data. A replica that shows this row has replayed every commit behind the
--    horizon it holds, so a cursor read on the replica may pass up to it.
--    published_at (the primary's clock) tells a replica whether the row is still being kept up.
CREATE TABLE sync_horizon (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  horizon timestamptz NOT NULL,
  published_at timestamptz NOT NULL
);
INSERT INTO sync_horizon (horizon, published_at) VALUES ('-infinity', '-infinity');
