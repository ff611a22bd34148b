-- The read model (issue 31, docs/operations.md "The read model"): each listing's read JSON kept
-- with the listing, each dealer's with the dealer, so a page splices stored text instead of
-- building ~60 fields, two aggregates and a dealer object per row (docs/benchmarks.md).
--
-- Written in the statement that writes the row: the store's listing writes (upserts, status
-- changes: src/store/listings/writes.ts) compute the text set-based from the values they write;
-- row triggers fill in whatever a writer left out, so every other path (dealer edits, a test's or
-- an operator's plain UPDATE, a later migration) keeps it too, with nothing to remember. What is stored depends on the row alone (and a dealer's parent):
-- listingUrl (configuration), externalProvider (a partner's name, which an operator may change) and
-- the dealer object are spliced at read time (src/store/listings/json.ts, listingJsonProjection).
--
-- The expressions below were generated from src/store/listings/json.ts (listingBodySql,
-- listingTailSql, DEALER_JSON) for the listing schema's keys as they are now; `forecourt check
-- read-model` compares stored text with those builders, run fresh. A change of the read shape
-- is a new migration that replaces these functions and rewrites the rows (UPDATE ... SET
-- read_json = NULL: the triggers recompute).
--
-- Why the store writes the text itself: the trigger computing it cost a write 0.1 ms a row on
-- PostgreSQL and 0.2 on PGlite (most of it the executor started per row for the images and
-- features subqueries), the same expressions in the writing statement a fraction of that
-- (docs/benchmarks.md, "The read model"). A listing trigger runs only for a writer that left the
-- text out: NULL (`SET read_json = NULL` asks for a rewrite), or on UPDATE the old text unchanged.
-- A writer that sets the text is trusted to set it right; `forecourt check read-model` finds one
-- that did not.
--
-- Compact, as JSON.stringify writes it: no json_build_object (it writes "key" : value).

-- jsonb as compact text: jsonb's own output puts a space after every colon and comma. Keys in
-- jsonb's order, which is the order its text shows and node-postgres parses.
CREATE FUNCTION json_compact(doc jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  CASE jsonb_typeof(doc)
    WHEN 'object' THEN
      RETURN '{' || coalesce((SELECT string_agg(to_json(e.k)::text || ':' || json_compact(e.v), ',' ORDER BY e.n)
                              FROM jsonb_each(doc) WITH ORDINALITY AS e(k, v, n)), '') || '}';
    WHEN 'array' THEN
      RETURN '[' || coalesce((SELECT string_agg(json_compact(e.v), ',' ORDER BY e.n)
                              FROM jsonb_array_elements(doc) WITH ORDINALITY AS e(v, n)), '') || ']';
    ELSE
      RETURN doc::text;
  END CASE;
END $$;

ALTER TABLE dealer_profiles ADD COLUMN read_json text;
ALTER TABLE listings ADD COLUMN read_json text, ADD COLUMN read_json_tail text;

-- A dealer as the `dealer` object of a listing shows it, its parent's summary included; a location
-- is the same text without its closing brace, followed by what the request adds.
CREATE FUNCTION dealer_profiles_read_json() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d ALIAS FOR NEW;
BEGIN
  SELECT concat('{"id":', to_json(d.id)::text,
    ',"parentId":', coalesce(to_json(d.parent_id)::text, 'null'),
    ',"locationCode":', coalesce(to_json(d.location_code)::text, 'null'),
    ',"companyName":', coalesce(to_json(d.company_name)::text, 'null'),
    ',"fullName":', coalesce(to_json(d.full_name)::text, 'null'),
    ',"displayName":', coalesce(to_json(d.display_name)::text, 'null'),
    ',"email":', coalesce(to_json(d.email)::text, 'null'),
    ',"phone":', coalesce(to_json(d.phone)::text, 'null'),
    ',"address":', coalesce(to_json(d.address)::text, 'null'),
    ',"postalCode":', coalesce(to_json(d.postal_code)::text, 'null'),
    ',"city":', coalesce(to_json(d.city)::text, 'null'),
    ',"province":', coalesce(to_json(d.province)::text, 'null'),
    ',"logoUrl":', coalesce(to_json(d.logo_url)::text, 'null'),
    ',"metadata":', json_compact(coalesce(d.metadata, '{}'::jsonb)),
    ',"parent":', CASE WHEN d.parent_id IS NULL THEN 'null' ELSE concat('{"id":', to_json(d.parent_id)::text,
    ',"locationCode":', coalesce(to_json(p.location_code)::text, 'null'),
    ',"companyName":', coalesce(to_json(p.company_name)::text, 'null'),
    ',"fullName":', coalesce(to_json(p.full_name)::text, 'null'),
    ',"displayName":', coalesce(to_json(p.display_name)::text, 'null'), '}') END, '}')
  INTO NEW.read_json
  FROM (VALUES (1)) AS one(x) LEFT JOIN dealer_profiles p ON p.id = d.parent_id;
  RETURN NEW;
END $$;
CREATE TRIGGER dealer_profiles_read_json BEFORE INSERT OR UPDATE ON dealer_profiles
  FOR EACH ROW EXECUTE FUNCTION dealer_profiles_read_json();

-- A listing: read_json holds its fields from title through features, each pair with its leading
-- comma; read_json_tail its timestamps (soldAt only when sold) and the closing brace. Each part is
-- computed when its writer left it out (the triggers' WHEN says when that may be the case).
CREATE FUNCTION listings_read_json() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  l ALIAS FOR NEW;
BEGIN
  IF NEW.read_json IS NULL OR (TG_OP = 'UPDATE' AND NEW.read_json = OLD.read_json) THEN
  NEW.read_json := concat(',"title":',
    coalesce(to_json(l.title)::text, 'null'),
    ',"description":',
    coalesce(to_json(l.description)::text, 'null'),
    ',"status":',
    to_json(l.status)::text,
    ',"price":',
    coalesce(to_json(l.price::float8)::text, 'null'),
    ',"currency":',
    coalesce(to_json(l.currency)::text, 'null'),
    ',"brand":',
    coalesce(to_json(l.brand)::text, 'null'),
    ',"model":',
    coalesce(to_json(l.model)::text, 'null'),
    ',"variant":',
    coalesce(to_json(l.variant)::text, 'null'),
    ',"year":',
    coalesce(to_json(l.year)::text, 'null'),
    ',"mileage":',
    coalesce(to_json(l.mileage)::text, 'null'),
    ',"fuelType":',
    coalesce(to_json(l.fuel_type)::text, 'null'),
    ',"transmission":',
    coalesce(to_json(l.transmission)::text, 'null'),
    ',"bodyType":',
    coalesce(to_json(l.body_type)::text, 'null'),
    ',"color":',
    coalesce(to_json(l.color)::text, 'null'),
    ',"interiorColor":',
    coalesce(to_json(l.interior_color)::text, 'null'),
    ',"interiorMaterial":',
    coalesce(to_json(l.interior_material)::text, 'null'),
    ',"paintType":',
    coalesce(to_json(l.paint_type)::text, 'null'),
    ',"doors":',
    coalesce(to_json(l.doors)::text, 'null'),
    ',"seats":',
    coalesce(to_json(l.seats)::text, 'null'),
    ',"gears":',
    coalesce(to_json(l.gears)::text, 'null'),
    ',"previousOwners":',
    coalesce(to_json(l.previous_owners)::text, 'null'),
    ',"powerKw":',
    coalesce(to_json(l.power_kw)::text, 'null'),
    ',"co2Emission":',
    coalesce(to_json(l.co2_emission::float8)::text, 'null'),
    ',"co2Type":',
    coalesce(to_json(l.co2_type)::text, 'null'),
    ',"emissionClass":',
    coalesce(to_json(l.emission_class)::text, 'null'),
    ',"firstRegistration":',
    coalesce(to_json(l.first_registration)::text, 'null'),
    ',"driveType":',
    coalesce(to_json(l.drive_type)::text, 'null'),
    ',"weight":',
    coalesce(to_json(l.weight)::text, 'null'),
    ',"fuelConsumption":',
    coalesce(to_json(l.fuel_consumption::float8)::text, 'null'),
    ',"serviceHistory":',
    coalesce(to_json(l.service_history)::text, 'null'),
    ',"warranty":',
    coalesce(to_json(l.warranty)::text, 'null'),
    ',"warrantyMonths":',
    coalesce(to_json(l.warranty_months)::text, 'null'),
    ',"vehicleType":',
    coalesce(to_json(l.vehicle_type)::text, 'null'),
    ',"conditionTags":',
    coalesce(to_json(l.condition_tags)::text, 'null'),
    ',"engine":',
    coalesce(to_json(l.engine)::text, 'null'),
    ',"vin":',
    coalesce(to_json(l.vin)::text, 'null'),
    ',"historyReportUrl":' || to_json(l.history_report_url)::text,
    ',"location":',
    concat('{"postalCode":', coalesce(to_json(l.postal_code)::text, 'null'), ',"city":', coalesce(to_json(l.city)::text, 'null'), ',"province":', coalesce(to_json(l.province)::text, 'null'), ',"latitude":', coalesce(to_json(l.latitude)::text, 'null'), ',"longitude":', coalesce(to_json(l.longitude)::text, 'null'), '}'),
    ',"images":',
    (SELECT coalesce('[' || string_agg(concat('{"url":', to_json(i.url)::text, ',"position":', i.n - 1, '}'), ',' ORDER BY i.n) || ']', '[]')
    FROM jsonb_array_elements_text(l.images) WITH ORDINALITY AS i(url, n)),
    ',"mainImageUrl":',
    coalesce(to_json(l.images->>0)::text, 'null'),
    ',"features":',
    (SELECT coalesce('[' || string_agg(concat('{"category":', coalesce(to_json(f.v->>'category')::text, 'null'), ',"name":', coalesce(to_json(f.v->>'name')::text, 'null'), '}'), ',' ORDER BY f.n) || ']', '[]')
    FROM jsonb_array_elements(l.features) WITH ORDINALITY AS f(v, n)));
  END IF;
  IF NEW.read_json_tail IS NULL OR (TG_OP = 'UPDATE' AND NEW.read_json_tail = OLD.read_json_tail) THEN
  NEW.read_json_tail := concat(',"createdAt":',
    to_json(to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text,
    ',"updatedAt":',
    to_json(to_char(l.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text,
    ',"soldAt":' || to_json(to_char(l.sold_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text,
    '}');
  END IF;
  RETURN NEW;
END $$;
-- The WHEN clauses keep the function from being called at all for the store's writes, which set
-- both texts (a changed text: an UPDATE that changes nothing the text shows is rare and correct
-- either way, since an unchanged text is recomputed).
CREATE TRIGGER listings_read_json_insert BEFORE INSERT ON listings FOR EACH ROW
  WHEN (NEW.read_json IS NULL OR NEW.read_json_tail IS NULL)
  EXECUTE FUNCTION listings_read_json();
CREATE TRIGGER listings_read_json_update BEFORE UPDATE ON listings FOR EACH ROW
  WHEN (NEW.read_json IS NULL OR NEW.read_json_tail IS NULL
        OR NEW.read_json = OLD.read_json OR NEW.read_json_tail = OLD.read_json_tail)
  EXECUTE FUNCTION listings_read_json();

-- A dealer's text embeds its parent's summary: when that summary changes, the children are
-- rewritten (their BEFORE trigger recomputes them; their own summary is unchanged, so it stops there).
CREATE FUNCTION dealer_profiles_children_read_json() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE dealer_profiles SET read_json = NULL WHERE parent_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER dealer_profiles_children_read_json AFTER UPDATE ON dealer_profiles FOR EACH ROW
  WHEN (OLD.location_code IS DISTINCT FROM NEW.location_code OR OLD.company_name IS DISTINCT FROM NEW.company_name
        OR OLD.full_name IS DISTINCT FROM NEW.full_name OR OLD.display_name IS DISTINCT FROM NEW.display_name)
  EXECUTE FUNCTION dealer_profiles_children_read_json();

-- Every row written before this migration, through the triggers above (a dealer's text reads its
-- parent's columns, not its parent's text, so the order does not matter). Nothing else changes:
-- no updatedAt moves. On a big table this rewrites every row once (docs/operations.md).
UPDATE dealer_profiles SET read_json = NULL;
UPDATE listings SET read_json = NULL;
ALTER TABLE dealer_profiles ALTER COLUMN read_json SET NOT NULL;
ALTER TABLE listings ALTER COLUMN read_json SET NOT NULL, ALTER COLUMN read_json_tail SET NOT NULL;
