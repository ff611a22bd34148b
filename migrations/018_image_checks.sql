-- Image checks (docs/images.md): one check per distinct image URL, shared by every listing that
-- uses it, and the listings each URL is used by, kept in the writing transaction.

-- One row per URL. `checked_at` is when the current result was first found (a re-check finding
-- the same result leaves it, so partners' copies do not churn); `last_checked_at` when a check
-- last ran. `failures`: checks in a row that did not find the image ok (schedule.ts).
-- `next_check_at` is when it is due; a claim moves it to the lease's end, so a leased URL is not
-- due again unless its lease lapses (the instance holding it died). `leased_by` names the claim
-- (instance and batch): a result is written only by the claim that still holds the URL.
CREATE TABLE image_checks (
  url text PRIMARY KEY,
  host text NOT NULL,
  state text NOT NULL DEFAULT 'pending'
    CHECK (state IN ('pending', 'ok', 'not_an_image', 'too_small', 'too_large', 'unreachable')),
  checked_at timestamptz,
  last_checked_at timestamptz,
  format text,
  width integer,
  height integer,
  bytes bigint,
  content_type text,
  problem_code text,
  problem_message text,
  attempts integer NOT NULL DEFAULT 0,
  failures integer NOT NULL DEFAULT 0,
  next_check_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz,
  leased_by text,
  state_changed_at timestamptz NOT NULL DEFAULT now()
);
-- The due scan: ORDER BY next_check_at LIMIT n.
CREATE INDEX image_checks_due_idx ON image_checks (next_check_at);

-- Which listings use which URL: a result touches the listings found here (index on url).
CREATE TABLE listing_images (
  listing_id uuid NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
  url text NOT NULL,
  PRIMARY KEY (listing_id, url)
);
CREATE INDEX listing_images_url_idx ON listing_images (url);

-- The host a URL counts against (its authority without user info, lower-cased), for operators'
-- views; the checker's limits use the same key (domain/images/host-limits.ts, hostKey).
CREATE FUNCTION image_url_host(url text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(lower(substring(url FROM '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)')), '')
$$;

-- Set-based, one statement's rows at once. A new URL gets a pending check (DO NOTHING: a URL
-- already known keeps its result and takes no lock, so writers sharing a URL never wait on each
-- other); URLs a listing no longer has leave listing_images. An update whose rows kept their
-- images does nothing but the test below.
CREATE FUNCTION listing_images_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO listing_images (listing_id, url)
    SELECT DISTINCT n.id, i.url FROM new_rows n, jsonb_array_elements_text(n.images) AS i(url)
    ON CONFLICT DO NOTHING;
    INSERT INTO image_checks (url, host)
    SELECT DISTINCT i.url, image_url_host(i.url) FROM new_rows n, jsonb_array_elements_text(n.images) AS i(url)
    ORDER BY 1
    ON CONFLICT (url) DO NOTHING;
  ELSE
    IF NOT EXISTS (SELECT 1 FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.images IS DISTINCT FROM o.images) THEN
      RETURN NULL;
    END IF;
    DELETE FROM listing_images li
    USING new_rows n JOIN old_rows o ON o.id = n.id
    WHERE li.listing_id = n.id AND n.images IS DISTINCT FROM o.images AND NOT (n.images ? li.url);
    INSERT INTO listing_images (listing_id, url)
    SELECT DISTINCT n.id, i.url
    FROM new_rows n JOIN old_rows o ON o.id = n.id, jsonb_array_elements_text(n.images) AS i(url)
    WHERE n.images IS DISTINCT FROM o.images
    ON CONFLICT DO NOTHING;
    INSERT INTO image_checks (url, host)
    SELECT DISTINCT i.url, image_url_host(i.url)
    FROM new_rows n JOIN old_rows o ON o.id = n.id, jsonb_array_elements_text(n.images) AS i(url)
    WHERE n.images IS DISTINCT FROM o.images
    ORDER BY 1
    ON CONFLICT (url) DO NOTHING;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER listing_images_insert AFTER INSERT ON listings
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_images_apply();
CREATE TRIGGER listing_images_update AFTER UPDATE ON listings
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION listing_images_apply();

-- The listings already there: every image they carry is pending.
INSERT INTO listing_images (listing_id, url)
SELECT DISTINCT l.id, i.url FROM listings l, jsonb_array_elements_text(l.images) AS i(url);
INSERT INTO image_checks (url, host)
SELECT DISTINCT url, image_url_host(url) FROM listing_images;
