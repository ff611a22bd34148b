-- The read model's trigger functions, regenerated (npm run read-model:sql -- migrations/
-- 034_readiness_checks_looked_up_once.sql) after src/store/listings/json.ts looks up each image's
-- check once for the readiness object instead of once per count it takes part in (three).
--
-- The text they build is the text 022's built, byte for byte: no row is rewritten.

-- generated: begin (readModelFunctionsSql, src/store/listings/json.ts)
-- A dealer as the `dealer` object of a listing shows it, its parent's summary included.
CREATE OR REPLACE FUNCTION dealer_profiles_read_json() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- A listing: each part computed when its writer left it out (NULL, or on UPDATE unchanged).
CREATE OR REPLACE FUNCTION listings_read_json() RETURNS trigger LANGUAGE plpgsql AS $$
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
      concat('{"postalCode":', coalesce(to_json(l.postal_code)::text, 'null'),
      ',"city":', coalesce(to_json(l.city)::text, 'null'),
      ',"province":', coalesce(to_json(l.province)::text, 'null'),
      ',"latitude":', coalesce(to_json(l.latitude)::text, 'null'),
      ',"longitude":', coalesce(to_json(l.longitude)::text, 'null'), '}'),
      ',"images":',
      (SELECT coalesce('[' || string_agg(concat('{"url":', to_json(i.url)::text, ',"position":', i.n - 1, ',"check":', coalesce((SELECT CASE WHEN c.state = 'pending' THEN '{"state":"pending","checkedAt":null,"format":null,"width":null,"height":null,"bytes":null,"contentType":null,"problem":null}' ELSE concat('{"state":', to_json(c.state)::text,
      ',"checkedAt":', coalesce(to_json(to_char(c.checked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text, 'null'),
      ',"format":', coalesce(to_json(c.format)::text, 'null'),
      ',"width":', coalesce(to_json(c.width)::text, 'null'),
      ',"height":', coalesce(to_json(c.height)::text, 'null'),
      ',"bytes":', coalesce(to_json(c.bytes)::text, 'null'),
      ',"contentType":', coalesce(to_json(c.content_type)::text, 'null'),
      ',"problem":', CASE WHEN c.problem_code IS NULL THEN 'null' ELSE concat('{"code":', to_json(c.problem_code)::text,
      ',"message":', coalesce(to_json(c.problem_message)::text, 'null'), '}') END, '}') END FROM image_checks c WHERE c.url = i.url), '{"state":"pending","checkedAt":null,"format":null,"width":null,"height":null,"bytes":null,"contentType":null,"problem":null}'), '}'), ',' ORDER BY i.n) || ']', '[]')
            FROM jsonb_array_elements_text(l.images) WITH ORDINALITY AS i(url, n)),
      ',"mainImageUrl":',
      coalesce(to_json(l.images->>0)::text, 'null'),
      ',"features":',
      (SELECT coalesce('[' || string_agg(concat('{"category":', coalesce(to_json(f.v->>'category')::text, 'null'), ',"name":', coalesce(to_json(f.v->>'name')::text, 'null'), '}'), ',' ORDER BY f.n) || ']', '[]')
            FROM jsonb_array_elements(l.features) WITH ORDINALITY AS f(v, n)),
      ',"readiness":',
      (SELECT concat('{"live":', CASE WHEN r.reasons = '' THEN 'true' ELSE 'false' END, ',"reasons":[', r.reasons, ']}')
            FROM (SELECT concat_ws(',',
            CASE WHEN l.status <> 'active' THEN concat('{"code":"not_active","message":', to_json('the status is ' || l.status || ', not active')::text, '}') END,
            CASE WHEN l.price IS NULL THEN '{"code":"no_price","message":"the listing has no price"}' END,
            CASE WHEN s.n = 0 THEN '{"code":"no_images","message":"the listing has no image"}'
              WHEN s.ok = 0 AND s.pending > 0 THEN '{"code":"images_pending","message":"no image is known to work yet: some are still being checked"}'
              WHEN s.ok = 0 THEN '{"code":"no_working_image","message":"no image works: each one is broken (see each image’s check)"}' END) AS reasons
              FROM (SELECT count(*) AS n, count(*) FILTER (WHERE c.state = 'ok') AS ok,
                  count(*) FILTER (WHERE c.state IS NULL OR c.state = 'pending') AS pending
                FROM (SELECT (SELECT c.state FROM image_checks c WHERE c.url = i.url) AS state
                  FROM jsonb_array_elements_text(l.images) AS i(url) OFFSET 0) c) s) r));
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
-- generated: end
