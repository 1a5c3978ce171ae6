-- Data environments (spec/api-v1-additions.md "Test mode"): every organization has two separate
-- worlds, live and test. Each row of a table a tenant reads or writes by id names its world; every
-- area function filters on (organization_id, environment) through src/db/tenant-sql.ts, so a row of
-- the other environment is as absent as another organization's. Existing rows are live.
--
-- Not here, on purpose (docs/decisions.md "Environments"):
-- - webhook_deliveries, webhook_attempts, webhook_secrets, webhook_call_reach: they belong to one
--   subscription and take its environment; every read of them goes through the subscription.
-- - call_analyses, processing_jobs, telephony_callbacks: they belong to one call.
-- - trackers, users, phone_numbers, telephony_accounts, organizations: the organization's
--   configuration, shared by both worlds (a rehearsed call is matched by the same trackers).
-- - idempotency_keys: already keyed by (organization_id, environment, operation, key) (0013).
ALTER TABLE calls ADD COLUMN environment text NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'test'));
ALTER TABLE contacts ADD COLUMN environment text NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'test'));
ALTER TABLE webhook_subscriptions ADD COLUMN environment text NOT NULL DEFAULT 'live'
  CHECK (environment IN ('live', 'test'));
ALTER TABLE api_keys ADD COLUMN environment text NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'test'));
ALTER TABLE events ADD COLUMN environment text NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'test'));

-- The list queries lead with (organization_id, environment, …).
DROP INDEX calls_org_created_idx;
DROP INDEX calls_org_phone_idx;
DROP INDEX calls_org_status_created_idx;
DROP INDEX calls_org_direction_created_idx;
CREATE INDEX calls_org_created_idx ON calls (organization_id, environment, created_at DESC, id DESC)
  WHERE erased_at IS NULL;
CREATE INDEX calls_org_phone_idx ON calls (organization_id, environment, customer_phone_rdigits text_pattern_ops)
  WHERE erased_at IS NULL;
CREATE INDEX calls_org_status_created_idx ON calls (organization_id, environment, crm_status, created_at DESC, id DESC)
  WHERE erased_at IS NULL;
CREATE INDEX calls_org_direction_created_idx ON calls (organization_id, environment, direction, created_at DESC, id DESC)
  WHERE erased_at IS NULL;

DROP INDEX contacts_org_idx;
CREATE INDEX contacts_org_idx ON contacts (organization_id, environment, created_at);
-- One contact per E.164 number in an environment is the public API's rule (409 CONTACT_EXISTS); the
-- operator API and the web app may keep duplicates (their contract allows them), so this index
-- finds the number's contacts but is not unique; contacts.ts serialises writers of one number.
CREATE INDEX contacts_org_phone_idx ON contacts (organization_id, environment, phone_e164);

DROP INDEX webhook_subscriptions_org_idx;
CREATE INDEX webhook_subscriptions_org_idx ON webhook_subscriptions (organization_id, environment)
  WHERE deleted_at IS NULL;

DROP INDEX api_keys_org_idx;
CREATE INDEX api_keys_org_idx ON api_keys (organization_id, environment);

DROP INDEX events_org_created_idx;
CREATE INDEX events_org_created_idx ON events (organization_id, environment, created_at);
