-- A partner's failed requests are read per mode (docs/test-mode.md, "Request records"): a test
-- secret lists its test failures, a live one its live ones. With (partner_id, id) alone, a test
-- secret's page walked past every live failure of the partner newer than its own (up to 1,000 a
-- minute are kept, for 7 days) to find them. (partner_id, id) stays: the operator's list of one
-- partner reads both modes in id order, which this index cannot give without a sort.
CREATE INDEX request_failures_partner_mode_idx ON request_failures (partner_id, test, id);
