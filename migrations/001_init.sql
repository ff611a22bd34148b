-- Forecourt schema. Plain SQL that runs unchanged on PostgreSQL 15+ and PGlite.

-- When this database started recording listing status history. stats.avgActivePrevMonth is only
-- reported for months that lie entirely after this instant; before it we simply do not know.
CREATE TABLE service_info (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  history_started_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO service_info DEFAULT VALUES;

CREATE TABLE dealer_profiles (
  id uuid PRIMARY KEY,
  parent_id uuid REFERENCES dealer_profiles (id),
  location_code text NOT NULL CHECK (length(location_code) BETWEEN 1 AND 64),
  company_name text,
  full_name text,
  display_name text,
  email text,
  phone text,
  address text,
  postal_code text,
  city text,
  province text,
  logo_url text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (parent_id IS NULL OR parent_id <> id)
);
-- Location codes are unique regardless of case: partners filter by them case-insensitively.
CREATE UNIQUE INDEX dealer_profiles_location_code_key ON dealer_profiles (lower(location_code));
CREATE INDEX dealer_profiles_parent_id_idx ON dealer_profiles (parent_id);

-- Cycles in the dealer tree are impossible: any insert or update that would make a profile its
-- own ancestor is rejected inside the database, so no application race can create one.
CREATE FUNCTION dealer_profiles_no_cycle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.parent_id IS NOT NULL AND EXISTS (
    WITH RECURSIVE up(id, parent_id) AS (
      SELECT id, parent_id FROM dealer_profiles WHERE id = NEW.parent_id
      UNION
      SELECT d.id, d.parent_id FROM dealer_profiles d JOIN up ON d.id = up.parent_id
    )
    SELECT 1 FROM up WHERE id = NEW.id
  ) THEN
    RAISE EXCEPTION 'dealer profile % cannot be its own ancestor', NEW.id USING ERRCODE = '23514',
      CONSTRAINT = 'dealer_profiles_no_cycle';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER dealer_profiles_no_cycle BEFORE INSERT OR UPDATE OF parent_id ON dealer_profiles
  FOR EACH ROW EXECUTE FUNCTION dealer_profiles_no_cycle();

CREATE TABLE partners (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  scopes text[] NOT NULL,
  access_scope text NOT NULL CHECK (access_scope IN ('global', 'restricted')),
  root_profile_ids uuid[] NOT NULL DEFAULT '{}',
  rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
  disabled boolean NOT NULL DEFAULT false,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Secrets live in their own table so a rotation with a grace period can keep the old hash valid
-- until expires_at. Only SHA-256 hashes are stored; the secret itself is shown once.
CREATE TABLE partner_secrets (
  secret_hash bytea PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz
);
CREATE INDEX partner_secrets_partner_id_idx ON partner_secrets (partner_id);

CREATE TABLE listings (
  id uuid PRIMARY KEY,
  partner_id uuid NOT NULL REFERENCES partners (id),
  external_reference text NOT NULL,
  dealer_profile_id uuid NOT NULL REFERENCES dealer_profiles (id),
  slug text NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN ('active', 'pending', 'sold', 'draft')),
  title text NOT NULL,
  description text,
  price numeric(12, 2),
  currency text NOT NULL DEFAULT 'EUR',
  brand text,
  model text,
  variant text,
  year integer,
  mileage integer,
  fuel_type text,
  transmission text,
  body_type text,
  color text,
  interior_color text,
  interior_material text,
  paint_type text,
  doors integer,
  seats integer,
  gears integer,
  previous_owners integer,
  power_kw integer,
  co2_emission numeric(7, 2),
  co2_type text,
  emission_class text,
  first_registration date,
  drive_type text,
  weight integer,
  fuel_consumption numeric(6, 2),
  service_history boolean,
  warranty boolean,
  warranty_months integer,
  vehicle_type text,
  condition_tags text[] NOT NULL DEFAULT '{}',
  engine text,
  vin text,
  history_report_url text,
  postal_code text,
  city text,
  province text,
  latitude double precision,
  longitude double precision,
  images jsonb NOT NULL DEFAULT '[]'::jsonb,
  features jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  sold_at timestamptz,
  -- A partner's reference names one listing of that partner; two partners may reuse a reference.
  CONSTRAINT listings_partner_reference_key UNIQUE (partner_id, external_reference),
  -- The rule "price is required while active or pending" holds even against racing writers.
  CONSTRAINT listings_price_when_listed CHECK (status IN ('sold', 'draft') OR price IS NOT NULL),
  CONSTRAINT listings_sold_at_iff_sold CHECK ((status = 'sold') = (sold_at IS NOT NULL))
);
-- Read paths: every list is "these dealers (or all), this status (or all), ordered by updatedAt, id".
CREATE INDEX listings_dealer_status_updated_idx ON listings (dealer_profile_id, status, updated_at, id);
CREATE INDEX listings_status_updated_idx ON listings (status, updated_at, id);
CREATE INDEX listings_updated_idx ON listings (updated_at, id);

-- One row each time a listing enters a status or moves to another dealer; enough to know how many
-- listings a location had active at the end of any day since history_started_at.
CREATE TABLE listing_status_history (
  id bigserial PRIMARY KEY,
  listing_id uuid NOT NULL REFERENCES listings (id) ON DELETE CASCADE,
  dealer_profile_id uuid NOT NULL,
  status text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX listing_status_history_listing_idx ON listing_status_history (listing_id, changed_at);
CREATE INDEX listing_status_history_dealer_idx ON listing_status_history (dealer_profile_id, changed_at);
