-- Erasure (src/capture/deletion.ts eraseCall, docs/decisions.md "Erasure really erases").

-- A pause e-mail quotes the receiver's last reply, which may echo the event it was sent. The call
-- whose event that was is recorded, so erasing the call can take the quoted reply out of the e-mail.
ALTER TABLE email_outbox ADD COLUMN call_id uuid;
CREATE INDEX email_outbox_call_idx ON email_outbox (call_id) WHERE call_id IS NOT NULL;
