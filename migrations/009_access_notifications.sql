-- What a partner may do (its secrets, scopes, access roots, rate limit, whether it is enabled) and
-- the dealer tree under its roots are cached by each instance (domain/access-cache.ts). Every
-- change to them, from any process, tells every instance to forget: a notification on the channel
-- `forecourt_access`, delivered when the changing transaction commits.
CREATE FUNCTION notify_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('forecourt_access', TG_TABLE_NAME);
  RETURN NULL;
END $$;

-- Any change of a partner but the record of its last use (written at most once a minute per
-- partner, and changing nothing a request may do).
CREATE TRIGGER partners_access_changed AFTER UPDATE ON partners FOR EACH ROW
  WHEN ((to_jsonb(OLD) - 'last_used_at' - 'last_used_key') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at' - 'last_used_key'))
  EXECUTE FUNCTION notify_access_changed();
CREATE TRIGGER partners_added_or_removed AFTER INSERT OR DELETE OR TRUNCATE ON partners
  FOR EACH STATEMENT EXECUTE FUNCTION notify_access_changed();
CREATE TRIGGER partner_secrets_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON partner_secrets
  FOR EACH STATEMENT EXECUTE FUNCTION notify_access_changed();
-- A partner's dealers are its roots and everything under them: only the tree's shape matters.
CREATE TRIGGER dealer_tree_changed AFTER INSERT OR DELETE OR UPDATE OF parent_id OR TRUNCATE ON dealer_profiles
  FOR EACH STATEMENT EXECUTE FUNCTION notify_access_changed();
