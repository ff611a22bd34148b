-- Test traffic in the request records (docs/test-mode.md): a failed request made with a test
-- secret is marked, so the partner and the operator tell test failures from live ones.
ALTER TABLE request_failures ADD COLUMN test boolean NOT NULL DEFAULT false;
