-- The simulated carrier of test mode (spec/api-v1-additions.md "Test mode", docs/test-mode.md
-- "Simulated carrier and magic numbers"). A simulated call is a call like any other, with
-- telephony_provider 'simulated'; its script and its progress live here, and its steps are played
-- by the processing stage 'simulate' (one durable job per call, waiting between steps).
ALTER TABLE calls DROP CONSTRAINT calls_telephony_provider_check;
ALTER TABLE calls ADD CONSTRAINT calls_telephony_provider_check
  CHECK (telephony_provider IN ('twilio', 'simulated'));
ALTER TABLE processing_jobs DROP CONSTRAINT processing_jobs_stage_check;
ALTER TABLE processing_jobs ADD CONSTRAINT processing_jobs_stage_check
  CHECK (stage IN ('download', 'transcribe', 'analyse', 'complete', 'simulate'));

-- One row per simulated call. scenario: the magic number's outcome (outbound) or the inbound
-- scenario; script: the transcript the call plays ("Agent: …" / "Customer: …" lines), read by the
-- transcribe stage instead of a speech-to-text provider; step: how many of the scenario's steps
-- were played (the simulate stage plays the next ones when they fall due). Erasure deletes the row.
CREATE TABLE simulated_calls (
  call_id uuid PRIMARY KEY REFERENCES calls (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  scenario text NOT NULL,
  script text NOT NULL,
  -- the length the script is played in (the connected outbound call's 30 s), NULL: its natural length
  target_seconds integer,
  step integer NOT NULL DEFAULT 0,
  started_at timestamptz NOT NULL
);
CREATE INDEX simulated_calls_organization_idx ON simulated_calls (organization_id);
