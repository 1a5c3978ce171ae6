-- The call page as a listening tool (issues 18, 19; docs/capture.md "Talk metrics"):
--   talk_metrics      what the transcribe stage measured on a dual-channel recording's decoded audio:
--                     {"frame_seconds", "duration_seconds", "agent_seconds", "customer_seconds",
--                      "overlap_seconds", "silence_seconds", "longest_monologue": {"speaker", "start", "seconds"}};
--                     NULL for a mono recording, a call not transcribed by the service, or before this column.
--   transcript_times  the start and end (seconds) of each line of the stored transcript, in order, as
--                     [[start, end], …], when the speech-to-text provider gave segment times; NULL otherwise
--                     (an adapter's or an imported transcript: the page shows the lines without times).
-- Neither is exposed by the REST API or the webhooks (page only). Erasure clears both.
ALTER TABLE calls ADD COLUMN talk_metrics jsonb;
ALTER TABLE calls ADD COLUMN transcript_times jsonb;
-- A call's contact and a contact's calls are joined by the customer's E.164 number (the call page,
-- the contact page: spec/api-v1-additions.md "Contacts").
CREATE INDEX IF NOT EXISTS contacts_org_phone_e164_idx ON contacts (organization_id, phone_e164);
CREATE INDEX IF NOT EXISTS calls_org_customer_e164_idx ON calls (organization_id, customer_phone_e164, created_at DESC)
  WHERE erased_at IS NULL;
