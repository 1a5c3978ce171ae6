-- The deletion of a call's recording at the telephony provider is claimed with a lease, not a held
-- transaction (src/capture/telephony/provider-recordings.ts, docs/decisions.md "Carrier recording
-- deletion: a lease, not a row lock across the DELETE"). One UPDATE sets the lease's end when none is
-- live and the recording is not yet deleted there; only that claimant sends the provider's DELETE,
-- outside any transaction, then writes provider_recording_deleted_at and clears the claim. A provider
-- error clears it; a crash leaves it to run out, and the retention sweep (which passes over a live
-- claim) retries after it. NULL: no deletion in flight.
ALTER TABLE calls ADD COLUMN provider_recording_delete_claimed_until timestamptz;
