-- listing_images rows are written only by listing_images_apply (migration 018), from the rows of
-- the listings statement that fired it: each names a listing that exists. The foreign key checked
-- that again, one query per image (five hundred in a bulk of 100 listings): a tenth of a bulk's
-- insert on the embedded database (docs/benchmarks.md, "The cost of a write"). Its other work, the
-- cascade, is a statement trigger now: a listing deleted takes its rows here with it, set-based.
ALTER TABLE listing_images DROP CONSTRAINT listing_images_listing_id_fkey;

CREATE FUNCTION listing_images_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    TRUNCATE listing_images;
  ELSE
    DELETE FROM listing_images li USING old_rows o WHERE li.listing_id = o.id;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER listing_images_delete AFTER DELETE ON listings
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_images_forget();
CREATE TRIGGER listing_images_truncate AFTER TRUNCATE ON listings
  FOR EACH STATEMENT EXECUTE FUNCTION listing_images_forget();

-- Rows a deleted listing may have left behind had there been no key (there was one until now):
-- none, but the statement costs one scan at upgrade and makes sure.
DELETE FROM listing_images li WHERE NOT EXISTS (SELECT 1 FROM listings l WHERE l.id = li.listing_id);
