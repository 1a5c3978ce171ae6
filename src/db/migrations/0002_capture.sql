-- Call ingestion and the capture pipeline (src/capture, src/contacts).

-- The dialled number exactly as the adapter reported it (call.outbound.attempted customer_phone).
ALTER TABLE calls ADD COLUMN customer_phone text;

-- The transcript inbox: a transcript waits here (processing_state 'queued') until its analysis is
-- stored in call_analyses, then it is cleared. A crash in between is healed by the worker.
ALTER TABLE calls ADD COLUMN pending_transcript text;
ALTER TABLE calls ADD COLUMN pending_transcript_language text;

-- When the processing run's events (call.transcribed, call.completed, …) were emitted. NULL on a
-- processed call = waiting for its recording to arrive or to become impossible.
ALTER TABLE calls ADD COLUMN completion_emitted_at timestamptz;

CREATE INDEX calls_transcript_queue_idx ON calls (updated_at) WHERE processing_state = 'queued' AND erased_at IS NULL;
CREATE INDEX calls_awaiting_completion_idx ON calls (id)
  WHERE processing_state = 'processed' AND completion_emitted_at IS NULL AND erased_at IS NULL;

-- Bumped by every effective edit: contact.updated's fact key is "<contact id>:<version>".
ALTER TABLE contacts ADD COLUMN version integer NOT NULL DEFAULT 0;
