-- Telephony (src/capture/telephony/, docs/capture.md "Connecting Twilio"): calls enter by themselves.

-- One provider account per organization. The auth token is encrypted at rest with the master key
-- (src/webhooks/delivery/secret-box.ts format, key deps.keys.secretEncryptionKey); it is the HMAC
-- key of every callback's X-Twilio-Signature and the Basic-auth password of the REST calls.
-- account_sid is unique across organizations: a callback's AccountSid names exactly one of them.
CREATE TABLE telephony_accounts (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL UNIQUE REFERENCES organizations (id),
  provider text NOT NULL CHECK (provider IN ('twilio')),
  account_sid text NOT NULL UNIQUE,
  auth_token_ciphertext text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Service numbers: a number belongs to one organization. ring_to = the phone an inbound call is put
-- through to (NULL: callers reach voicemail). recording_mode applies to calls on this number.
CREATE TABLE phone_numbers (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  number_e164 text NOT NULL UNIQUE,
  ring_to_e164 text,
  recording_mode text NOT NULL DEFAULT 'normal' CHECK (recording_mode IN ('normal', 'no_recording')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX phone_numbers_org_idx ON phone_numbers (organization_id);

-- The recording-consent announcement played before a call is recorded; a key press refuses.
-- language: the <Say> language (BCP 47, e.g. en-US); NULL = the organization's language.
ALTER TABLE organizations ADD COLUMN recording_consent_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE organizations ADD COLUMN recording_consent_text text;
ALTER TABLE organizations ADD COLUMN recording_consent_language text;

-- The telephony side of a call. provider_call_sid: the inbound call, or an outbound call's first
-- leg (the agent's); provider_customer_call_sid: an outbound call's second leg (the customer's,
-- the <Dial> child). *_call_status: the last status applied from the provider (queued … completed,
-- busy, no-answer, failed, canceled). provider_account_sid: the account that holds the call and
-- its recording (credentials for download and deletion). provider_recording_url: the recording's
-- REST resource as the provider announced it (downloaded as <url>.mp3). provider_recording_deleted_at:
-- when the recording was deleted at the provider (or found gone there); NULL while it may still exist.
ALTER TABLE calls ADD COLUMN telephony_provider text CHECK (telephony_provider IN ('twilio'));
ALTER TABLE calls ADD COLUMN provider_account_sid text;
ALTER TABLE calls ADD COLUMN phone_number_id uuid REFERENCES phone_numbers (id);
ALTER TABLE calls ADD COLUMN provider_call_sid text;
ALTER TABLE calls ADD COLUMN provider_call_status text;
ALTER TABLE calls ADD COLUMN provider_customer_call_sid text;
ALTER TABLE calls ADD COLUMN provider_customer_call_status text;
-- outbound: the phone the agent was rung on (E.164)
ALTER TABLE calls ADD COLUMN agent_phone_e164 text;
-- announced: the consent announcement was played; refused: the caller refused the recording
ALTER TABLE calls ADD COLUMN recording_consent text CHECK (recording_consent IN ('announced', 'accepted', 'refused'));
-- a voicemail (<Record>: one-sided, the caller alone; no follow-up draft)
ALTER TABLE calls ADD COLUMN voicemail boolean NOT NULL DEFAULT false;
ALTER TABLE calls ADD COLUMN provider_recording_url text;
-- 2: dual-channel (<Dial record-from-answer-dual>: one party per channel), 1: mono (voicemail)
ALTER TABLE calls ADD COLUMN recording_channels smallint;
ALTER TABLE calls ADD COLUMN provider_recording_deleted_at timestamptz;
CREATE UNIQUE INDEX calls_provider_call_sid_key ON calls (provider_call_sid) WHERE provider_call_sid IS NOT NULL;
CREATE UNIQUE INDEX calls_provider_customer_call_sid_key ON calls (provider_customer_call_sid)
  WHERE provider_customer_call_sid IS NOT NULL;
-- The sweep that retries a provider deletion that failed (recording deleted or call erased here).
CREATE INDEX calls_provider_recording_undeleted_idx ON calls (id)
  WHERE recording_sid IS NOT NULL AND telephony_provider IS NOT NULL AND provider_recording_deleted_at IS NULL;

-- Every provider callback that changed (or was refused the right to change) something, so each one
-- is applied at most once: a callback inserts its dedupe_key (e.g. "status:<CallSid>:<CallStatus>",
-- "recording:<RecordingSid>:<RecordingStatus>") in the transaction that applies it; a second
-- delivery finds the key and changes nothing. outcome: applied, or ignored (late, out of order or
-- impossible: logged, never applied).
CREATE TABLE telephony_callbacks (
  provider text NOT NULL,
  dedupe_key text NOT NULL,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  call_id uuid REFERENCES calls (id),
  kind text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('applied', 'ignored')),
  detail text,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (provider, dedupe_key)
);
CREATE INDEX telephony_callbacks_call_idx ON telephony_callbacks (call_id) WHERE call_id IS NOT NULL;
