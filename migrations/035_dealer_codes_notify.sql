-- Instances keep which profile each location code names (domain/dealer-lookup.ts), as they keep
-- the tree's shape: a code changed by any process tells every instance to forget, as a moved
-- profile does (migration 009).
DROP TRIGGER dealer_tree_changed ON dealer_profiles;
CREATE TRIGGER dealer_tree_changed AFTER INSERT OR DELETE OR UPDATE OF parent_id, location_code OR TRUNCATE ON dealer_profiles
  FOR EACH STATEMENT EXECUTE FUNCTION notify_access_changed();
