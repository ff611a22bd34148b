-- A webhook delivery waiting for its retry is retried under its webhook-id, which receivers are
-- told to de-duplicate by (docs/webhooks.md). Each walk re-reads the delivery's stretch under the
-- partner's scope as it is then: after the scope widened (an operator's change of the partner's
-- access, a dealer moved under one of its roots) the stretch holds listings or events the first
-- attempt did not, and a receiver that had applied that attempt (its answer lost) would skip them
-- under the old id. The delivery keeps a digest of the scope it was read under
-- (domain/webhooks/scope.ts, scopeKey); a retry under another scope goes out under a new id.
-- NULL: read before this column existed, taken as any scope.
ALTER TABLE webhook_endpoints ADD COLUMN pending_scope text;
ALTER TABLE webhook_event_streams ADD COLUMN pending_scope text;
