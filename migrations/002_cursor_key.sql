-- The key that signs sync cursors, shared by every instance and kept across restarts so a cursor
-- a partner stored yesterday still works. Filled with random bytes by the service on first start.
ALTER TABLE service_info ADD COLUMN cursor_key text;
