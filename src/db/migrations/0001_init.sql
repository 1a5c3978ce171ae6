-- Call Capture Service: initial schema. Every tenant-owned table carries organization_id and
-- every query of tenant data filters on it (DESIGN.md "Storage").

CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  entitlement text NOT NULL DEFAULT 'active' CHECK (entitlement IN ('active', 'inactive')),
  retention_days integer CHECK (retention_days IS NULL OR retention_days > 0),
  account_rate_limit_per_hour integer NOT NULL DEFAULT 5000 CHECK (account_rate_limit_per_hour > 0),
  max_active_subscriptions integer NOT NULL DEFAULT 20 CHECK (max_active_subscriptions >= 0),
  -- ISO 3166-1 alpha-2 region used to read national phone numbers; NULL = only international numbers parse.
  country text CHECK (country IS NULL OR country ~ '^[A-Z]{2}$'),
  -- account language, fallback for follow-up e-mail drafts
  language text NOT NULL DEFAULT 'en',
  created_at timestamptz NOT NULL
);

CREATE TABLE users (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  email text NOT NULL,
  password_hash text NOT NULL,
  role text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'member')),
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_org_idx ON users (organization_id);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  user_id uuid NOT NULL REFERENCES users (id),
  name text,
  -- readable, non-secret start of the key (e.g. "cc_live_AbCd") shown in lists
  prefix text NOT NULL,
  -- SHA-256 of the whole key, hex; the key itself is never stored
  key_hash text NOT NULL UNIQUE,
  scopes text[] NOT NULL,
  rate_limit_per_hour integer NOT NULL DEFAULT 1000 CHECK (rate_limit_per_hour > 0),
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_org_idx ON api_keys (organization_id);

CREATE TABLE calls (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  caller_phone text NOT NULL,
  -- the customer on the call: caller on inbound, dialled counterparty on outbound (libphonenumber-js)
  customer_phone_e164 text,
  customer_phone_national text,
  -- digits of customer_phone_e164 reversed: the phone filter's trailing-digit match is a prefix scan
  customer_phone_rdigits text,
  company_phone_e164 text,
  caller_name text,
  agent_user_id uuid REFERENCES users (id),
  crm_status text NOT NULL DEFAULT 'new' CHECK (crm_status IN ('new', 'to_call', 'contacted', 'qualified')),
  review_status text CHECK (review_status IN ('new', 'needs_decision', 'needs_review', 'handled', 'no_action')),
  outbound_lifecycle text CHECK (outbound_lifecycle IN ('ringing_agent', 'agent_answered', 'ringing_customer',
    'in_progress', 'completed', 'agent_no_answer', 'customer_no_answer', 'agent_only', 'failed_to_initiate',
    'reconciliation_required')),
  failure_reason text,
  recording_mode text NOT NULL DEFAULT 'normal' CHECK (recording_mode IN ('normal', 'no_recording')),
  -- pending: not yet arrived; available: stored; refused: recording refused (inbound stays 409);
  -- not_captured: never captured (outbound refused/no_recording/no conversation); deleted: removed for good
  recording_state text NOT NULL DEFAULT 'pending'
    CHECK (recording_state IN ('pending', 'available', 'refused', 'not_captured', 'deleted')),
  recording_key text,
  recording_bytes integer,
  recording_sid text,
  -- recording length in seconds, measured from the stored audio
  duration double precision,
  recording_deleted_at timestamptz,
  -- processing: none yet, transcribing, processed
  processing_state text NOT NULL DEFAULT 'none' CHECK (processing_state IN ('none', 'queued', 'processed')),
  trashed_at timestamptz,
  deletion_scheduled_at timestamptz,
  pending_deletion_at timestamptz,
  deletion_reason text CHECK (deletion_reason IN ('consent_not_asked', 'consent_withdrawn', 'retention_expired',
    'user_erasure')),
  erased_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- GET /calls: newest first with id as tie-break, erased calls never listed.
CREATE INDEX calls_org_created_idx ON calls (organization_id, created_at DESC, id DESC) WHERE erased_at IS NULL;
CREATE INDEX calls_org_phone_idx ON calls (organization_id, customer_phone_rdigits text_pattern_ops)
  WHERE erased_at IS NULL;
CREATE INDEX calls_org_status_created_idx ON calls (organization_id, crm_status, created_at DESC, id DESC)
  WHERE erased_at IS NULL;
CREATE INDEX calls_org_direction_created_idx ON calls (organization_id, direction, created_at DESC, id DESC)
  WHERE erased_at IS NULL;
CREATE INDEX calls_pending_deletion_idx ON calls (pending_deletion_at) WHERE pending_deletion_at IS NOT NULL;

-- The full processed analysis and the raw transcript; REST shows only the allowlist.
CREATE TABLE call_analyses (
  call_id uuid PRIMARY KEY REFERENCES calls (id),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  transcript_original text,
  language text,
  analysis jsonb NOT NULL,
  followup_email jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE contacts (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  phone text NOT NULL,
  phone_e164 text,
  first_name text,
  last_name text,
  email text,
  company text,
  notes text,
  tags text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX contacts_org_idx ON contacts (organization_id, created_at);

CREATE TABLE trackers (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  terms text[] NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX trackers_org_idx ON trackers (organization_id);

-- Fixed-window counters shared by every API node. bucket: 'key:<id>', 'org:<id>', 'authfail:<ip>'.
CREATE TABLE rate_limit_windows (
  bucket text NOT NULL,
  window_start timestamptz NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
CREATE INDEX rate_limit_windows_start_idx ON rate_limit_windows (window_start);

-- Deployment-wide switches (maintenance).
CREATE TABLE settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Console sessions (server-side). id is the SHA-256 of the cookie value.
CREATE TABLE sessions (
  id text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

-- ---------------------------------------------------------------------------------------------
-- Webhooks (DESIGN.md "The queue is the deliveries table").

CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  url text NOT NULL,
  -- empty array = every event type
  event_types text[] NOT NULL DEFAULT '{}',
  verification_mode text NOT NULL DEFAULT 'permissive' CHECK (verification_mode IN ('permissive', 'strict')),
  state text NOT NULL DEFAULT 'inactive' CHECK (state IN ('inactive', 'active', 'paused')),
  paused_reason text,
  paused_at timestamptz,
  consecutive_transient_failures integer NOT NULL DEFAULT 0,
  consecutive_gone integer NOT NULL DEFAULT 0,
  last_verified_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);
CREATE INDEX webhook_subscriptions_org_idx ON webhook_subscriptions (organization_id) WHERE deleted_at IS NULL;

-- Signing secrets, encrypted at rest (AES-256-GCM). A rotation is a 'pending' row until activated.
CREATE TABLE webhook_secrets (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  ciphertext text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'active', 'retiring', 'retired', 'expired')),
  kind text NOT NULL CHECK (kind IN ('initial', 'standard', 'emergency')),
  created_at timestamptz NOT NULL,
  -- pending: activation deadline (24 h); retiring: end of the 1 h grace
  expires_at timestamptz,
  activated_at timestamptz,
  retired_at timestamptz
);
CREATE INDEX webhook_secrets_sub_idx ON webhook_secrets (subscription_id, status);

-- Events: the body is serialised once and stored as text; every attempt signs exactly these bytes.
CREATE TABLE events (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  event_type text NOT NULL,
  resource_id uuid NOT NULL,
  call_id uuid,
  body text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX events_org_created_idx ON events (organization_id, created_at);
CREATE INDEX events_call_idx ON events (call_id) WHERE call_id IS NOT NULL;

-- One delivery per event per subscription: the queue and the delivery log.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id),
  event_id uuid NOT NULL REFERENCES events (id),
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead_lettered', 'skipped')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_owner text,
  lease_expires_at timestamptz,
  -- why it ended (dead_lettered/skipped) or the last failure
  reason text,
  last_response_status integer,
  last_error text,
  -- set when a rotation test must be signed with a pending secret
  secret_id uuid REFERENCES webhook_secrets (id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  delivered_at timestamptz,
  UNIQUE (subscription_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_sub_idx ON webhook_deliveries (subscription_id, created_at DESC);

-- Every attempt: time, duration, outcome, bounded response snippet, which secret signed it.
CREATE TABLE webhook_attempts (
  id uuid PRIMARY KEY,
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id),
  organization_id uuid NOT NULL REFERENCES organizations (id),
  attempt_number integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  response_status integer,
  error_class text,
  response_snippet text,
  secret_id uuid,
  signature_timestamp bigint
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt_number);

-- Which subscriptions successfully received content of a call: deletion events go only to them.
CREATE TABLE webhook_call_reach (
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id),
  call_id uuid NOT NULL,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  first_delivered_at timestamptz NOT NULL,
  PRIMARY KEY (subscription_id, call_id)
);

-- Outgoing e-mail; kept here (and logged) when no SMTP_URL is configured.
CREATE TABLE email_outbox (
  id uuid PRIMARY KEY,
  organization_id uuid REFERENCES organizations (id),
  to_address text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'kept', 'failed')),
  created_at timestamptz NOT NULL,
  sent_at timestamptz,
  last_error text
);
