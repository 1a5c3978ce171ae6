-- Durable processing (src/capture/jobs/, docs/capture.md "Processing jobs"). Each stage of a call's
-- processing (download -> transcribe -> analyse -> complete) is one row, claimed by a worker with
-- FOR UPDATE SKIP LOCKED under a lease, like webhook_deliveries.

CREATE TABLE processing_jobs (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations (id),
  call_id uuid NOT NULL REFERENCES calls (id),
  stage text NOT NULL CHECK (stage IN ('download', 'transcribe', 'analyse', 'complete')),
  -- pending: due at next_attempt_at (leased = running); waiting: the complete stage waits for the
  -- recording until next_attempt_at; succeeded / failed / needs_review / cancelled: final until a reprocess
  state text NOT NULL DEFAULT 'pending'
    CHECK (state IN ('pending', 'waiting', 'succeeded', 'failed', 'needs_review', 'cancelled')),
  -- runs started (a claim counts one; the fencing token of the lease); reset by a reprocess
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_owner text,
  lease_expires_at timestamptz,
  -- the last failure, for the operator (the provider's message, secrets scrubbed); kind = ProviderError kind
  last_error text,
  last_error_kind text,
  -- what the stage needs beyond the call row (the download stage: the carrier's recording URL and sid)
  input jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  finished_at timestamptz,
  UNIQUE (call_id, stage)
);
CREATE INDEX processing_jobs_due_idx ON processing_jobs (next_attempt_at) WHERE state IN ('pending', 'waiting');
CREATE INDEX processing_jobs_org_idx ON processing_jobs (organization_id);

-- Outcome counters for /metrics (callcap_processing_job_outcomes_total): bumped in the transaction
-- that writes the outcome. Eight shards per (stage, outcome) so concurrent workers rarely wait on one row.
CREATE TABLE processing_job_outcomes (
  stage text NOT NULL,
  outcome text NOT NULL,
  shard smallint NOT NULL,
  n bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (stage, outcome, shard)
);

-- The transcript sweep this replaces kept its state in calls; hand what it would have picked up to jobs.
INSERT INTO processing_jobs (id, organization_id, call_id, stage, state, next_attempt_at, created_at, updated_at)
SELECT gen_random_uuid(), c.organization_id, c.id, 'analyse', 'pending', now(), now(), now()
  FROM calls c
 WHERE c.processing_state = 'queued' AND c.erased_at IS NULL;

INSERT INTO processing_jobs (id, organization_id, call_id, stage, state, next_attempt_at, created_at, updated_at)
SELECT gen_random_uuid(), c.organization_id, c.id, 'complete', 'waiting', a.created_at + interval '1 hour', now(), now()
  FROM calls c JOIN call_analyses a ON a.call_id = c.id
 WHERE c.processing_state = 'processed' AND c.completion_emitted_at IS NULL AND c.erased_at IS NULL;

DROP INDEX calls_transcript_queue_idx;
DROP INDEX calls_awaiting_completion_idx;
