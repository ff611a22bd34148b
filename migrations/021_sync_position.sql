-- The sync position (docs/sync.md): `changed_at`, when a listing last changed in any way a partner
-- sees, by the partner's edit or by the service (an image check's result, docs/images.md). Sync
-- cursors and webhook walks follow (changed_at, id); `updated_at` stays the partner's last edit.
-- On a partner's write changed_at is updated_at; a change of the service's moves changed_at
-- alone. Either way it is taken with write_stamp() (migration 005), so the commit horizon's rules
-- hold for it as they do for updated_at, and it only ever moves forward: a version that replaces
-- another is always later in the walk.
ALTER TABLE listings ADD COLUMN changed_at timestamptz;
UPDATE listings SET changed_at = updated_at;
ALTER TABLE listings ALTER COLUMN changed_at SET NOT NULL;

-- After the read model's trigger (names fire in order: listings_read_json_* first), so a text it
-- recomputed counts as a change.
CREATE FUNCTION listings_sync_position() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.changed_at := NEW.updated_at;
  ELSIF NEW.updated_at > OLD.updated_at THEN
    NEW.changed_at := greatest(NEW.updated_at, OLD.changed_at + interval '1 millisecond');
  ELSIF NEW.updated_at < OLD.updated_at THEN
    -- Never a partner's write (next_updated_at only moves forward): plain SQL setting an earlier
    -- time (a fixture, an import of history). The position follows it.
    NEW.changed_at := NEW.updated_at;
  ELSIF NEW.read_json IS DISTINCT FROM OLD.read_json OR NEW.read_json_tail IS DISTINCT FROM OLD.read_json_tail
      OR NEW.status IS DISTINCT FROM OLD.status OR NEW.dealer_profile_id IS DISTINCT FROM OLD.dealer_profile_id THEN
    NEW.changed_at := greatest(write_stamp(), OLD.changed_at + interval '1 millisecond');
  ELSE
    NEW.changed_at := OLD.changed_at;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER listings_sync_position BEFORE INSERT OR UPDATE ON listings
  FOR EACH ROW EXECUTE FUNCTION listings_sync_position();

-- The walks' orders: every listing's, and one dealer's per status (the per-dealer page source).
CREATE INDEX listings_changed_idx ON listings (changed_at, id);
CREATE INDEX listings_dealer_status_changed_idx ON listings (dealer_profile_id, status, changed_at, id);
