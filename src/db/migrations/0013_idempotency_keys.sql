-- Idempotency-Key of the public API's writes (POST /api/v1/contacts, POST /api/v1/calls;
-- spec/api-v1-additions.md "Placing calls"; src/accounts/idempotency.ts). A key is scoped to the
-- organization, the data environment and the operation; it holds the fingerprint of the first
-- request's body and, once that request has answered, its status and exact body, replayed to a
-- retry with the same body. status NULL: the first request is still running. Kept 24 hours
-- (expires_at); the worker's idempotency-keys job deletes expired rows.
CREATE TABLE idempotency_keys (
  organization_id uuid NOT NULL REFERENCES organizations (id),
  environment text NOT NULL CHECK (environment IN ('live', 'test')),
  operation text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  status integer,
  body text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, environment, operation, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);
