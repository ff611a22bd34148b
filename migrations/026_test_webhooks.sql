-- Webhook endpoints in test mode (docs/test-mode.md): an endpoint registered with a test secret
-- walks its partner's test listings and test events only; a live one walks live ones only. Its
-- partner sees it only with a secret of the same mode.
ALTER TABLE webhook_endpoints ADD COLUMN test boolean NOT NULL DEFAULT false;
