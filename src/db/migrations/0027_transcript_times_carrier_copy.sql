-- Issue 19, the rest of redaction.
-- Where each part of a queued transcript was said (src/capture/transcript-times.ts): per turn of the
-- stored (redacted) text, [offset, seconds] anchors from the speech-to-text segments and words. Only
-- offsets and times, never words; kept in the call's inbox beside pending_transcript and cleared
-- with it once the analysis is stored (its evidence carries the times it needs). NULL when the
-- transcript came without times (an adapter's POST …/transcript, an imported call).
ALTER TABLE calls ADD COLUMN pending_transcript_times jsonb;
-- The carrier's copy of the recording is due for deletion (docs/capture.md "Redaction"): set when
-- our copy is final (silenced where redaction found something) and the organization has redaction
-- on; the DELETE at Twilio follows at once, and the retention sweep retries it until Twilio confirms
-- (provider_recording_deleted_at).
ALTER TABLE calls ADD COLUMN provider_recording_delete_due boolean NOT NULL DEFAULT false;
