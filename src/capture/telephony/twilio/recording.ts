import type { Deps } from '../../../deps.ts';
import { consentAllowsRecording } from '../../../domain/recording-consent.ts';
import { AppError } from '../../../errors.ts';
import { enqueueStage } from '../../jobs/enqueue.ts';
import type { RunChain } from '../../jobs/types.ts';
import { refuseRecordingIn } from '../../recording-lifecycle.ts';
import type { TelephonyAccount } from '../accounts.ts';
import { claimIgnored } from '../callbacks.ts';
import { deleteRecordingAtProvider } from '../provider-recordings.ts';
import { lockOwnCall, str } from './inbound.ts';
import { noteOutboundRecording } from './outbound.ts';
import { onTwilioOrigin } from './rest.ts';
import type { FormParams } from './signature.ts';

/**
 * POST …/calls/{id}/recording: Twilio's recordingStatusCallback (the <Dial> or <Record> the service
 * answered). Applied at most once per RecordingSid and status:
 *   completed: the recording's sid, URL and channel count are stored and its download job is queued,
 *     due at once (the caller runs it right after Twilio has its answer; a worker retries it) —
 *     inserted already leased to the caller's runner when `opts.chain` takes it (the route's
 *     JobRunner.offer: its soon() runs it without a claim; should that process die first, the job
 *     is any runner's once the lease expires, 30 s). A
 *     RecordingUrl that is not on TWILIO_API_BASE_URL's origin is never fetched: logged, and the
 *     recording counts as refused.
 *   completed, for a call whose caller refused the recording at the consent announcement (or never
 *     answered it): refused — nothing is fetched or stored, no job is queued, the callback is recorded
 *     as ignored — and the recording is deleted at Twilio (its sid is kept on the call so that the
 *     retention sweep retries the deletion should Twilio fail now).
 *   absent / failed: no recording: refused (inbound recording-url keeps answering 409).
 * A status for a recording that is already stored or deleted is logged and not applied.
 * Answers whether a download is due. Twilio always gets 204: a refusal is not an error it should retry.
 */
export async function recordingStatusCallback(
  deps: Deps,
  account: TelephonyAccount,
  callId: string,
  p: FormParams,
  opts: { chain?: RunChain } = {},
): Promise<{ download: boolean }> {
  const status = str(p, 'RecordingStatus');
  const recordingSid = str(p, 'RecordingSid');
  const recordingUrl = str(p, 'RecordingUrl');
  let deleteAtTwilio = false;
  const result = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    // One statement: the call locked and checked, and the key claimed as applied. Which outcome the
    // callback has is known only from the call: a first one that turns out ignored says so in this
    // transaction (claimIgnored), so the row reads as if written 'ignored'; a repeat writes nothing.
    const { call, first, key } = await lockOwnCall(tx, account, callId, p, {
      kind: 'recording',
      key: recordingSid ? `recording:${recordingSid}:${status}` : ['recording:', `:${status}`],
      outcome: 'applied',
      now,
    });
    const claim = async (outcome: 'applied' | 'ignored', detail: string | null = null) => {
      if (first && outcome === 'ignored') await claimIgnored(tx, key, detail);
      return first;
    };
    const ignore = async (why: string) => {
      if (await claim('ignored', why)) {
        deps.log.warn(
          { call_id: call.id, recording_sid: recordingSid || null, status },
          `twilio recording callback not applied: ${why}`,
        );
      }
      return { download: false };
    };
    const settled = call.recording_state === 'available' || call.recording_state === 'deleted';
    if (status === 'completed') {
      if (!recordingSid) return ignore('RecordingSid missing');
      if (!consentAllowsRecording(call.recording_consent)) {
        // The caller said no (or never said yes): the recording must not exist anywhere. Its sid is
        // kept for the deletion at Twilio (provider_recording_deleted_at NULL = still to delete).
        deleteAtTwilio = true;
        if (!(await claim('ignored', CONSENT_REFUSED_DETAIL))) return { download: false };
        deps.log.warn(
          { call_id: call.id, recording_sid: recordingSid, consent: call.recording_consent },
          'twilio recording of a call whose caller refused the recording: not fetched, deleted at Twilio',
        );
        await tx.query(
          `UPDATE calls SET recording_sid = $2, updated_at = $3,
                  provider_recording_deleted_at = CASE WHEN recording_sid IS DISTINCT FROM $2 THEN NULL
                                                       ELSE provider_recording_deleted_at END,
                  provider_recording_delete_claimed_until = CASE WHEN recording_sid IS DISTINCT FROM $2 THEN NULL
                                                       ELSE provider_recording_delete_claimed_until END
            WHERE id = $1`,
          [call.id, recordingSid, now],
        );
        return { download: false };
      }
      if (!recordingUrl) return ignore('RecordingUrl missing');
      if (call.recording_mode === 'no_recording') return ignore('the call runs in no_recording mode');
      if (settled) return ignore(`the recording is already ${call.recording_state}`);
      // The simulated carrier's recordings are in the service's own store (capture/telephony/simulated/).
      if (account.provider === 'twilio' && !onTwilioOrigin(deps.config, recordingUrl)) {
        if (!(await claim('ignored', 'RecordingUrl is not on the configured Twilio origin; not fetched'))) {
          return { download: false };
        }
        deps.log.error(
          { call_id: call.id, recording_sid: recordingSid, recording_host: safeHost(recordingUrl) },
          'twilio recording URL is not on TWILIO_API_BASE_URL; not fetched, the recording counts as refused',
        );
        await refuseRecordingIn(tx, deps, call.id);
        return { download: false };
      }
      if (!(await claim('applied'))) return { download: false };
      // An outbound dial records from answer: its recording proves the customer answered (twilio-out).
      if (call.direction === 'outbound') await noteOutboundRecording(tx, deps, call.id);
      const channels = Number(str(p, 'RecordingChannels'));
      // The one download mechanism: this durable job, due now. The route runs it right after
      // Twilio has its answer (so no runner is woken for it), inserted leased to the route's runner
      // when it takes it (opts.chain: no claim); should that fail (or the process die), a worker
      // retries it (its poll finds the job: at once, or once the lease expired). The call's UPDATE
      // (the recording's sid, URL, channels) rides in the enqueue's statement: one round trip, not two.
      await enqueueStage(tx, {
        organizationId: call.organization_id,
        callId: call.id,
        stage: 'download',
        now,
        wake: false,
        chain: opts.chain,
        // which carrier's store holds the file (capture/telephony/download-stage.ts); none: Twilio
        input: account.provider === 'twilio' ? null : { carrier: account.provider },
        also: {
          name: 'recording_callback_v1',
          sql: (
            f,
          ) => `call_row AS (UPDATE calls SET recording_sid = $${f + 1}::text, provider_recording_url = $${f + 2}::text,
                recording_channels = COALESCE($${f + 3}::smallint, recording_channels), updated_at = $${f + 4}::timestamptz
          WHERE id = $${f}::uuid)`,
          params: [
            call.id,
            recordingSid,
            recordingUrl,
            channels === 1 || channels === 2 ? channels : null,
            now,
          ],
        },
      });
      return { download: true };
    }
    if (status === 'absent' || status === 'failed') {
      if (settled) return ignore(`the recording is already ${call.recording_state}`);
      if (!(await claim('applied'))) return { download: false };
      try {
        await refuseRecordingIn(tx, deps, call.id);
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
      }
      return { download: false };
    }
    return ignore(`status "${status}" needs nothing`);
  });
  if (deleteAtTwilio) await deleteRefusedRecording(deps, callId);
  return result;
}

/** The reason a recording callback of a call without consent is recorded as ignored (telephony_callbacks.detail). */
export const CONSENT_REFUSED_DETAIL = 'the caller refused the recording: not fetched, deleted at Twilio';

/**
 * Deletes at Twilio the recording of a call whose caller refused it (the recording callback, or a
 * download job queued before the refusal was known). Best effort here: a failure is logged and the
 * retention sweep retries it every minute until Twilio confirms (undeletedProviderRecordings).
 */
export async function deleteRefusedRecording(deps: Deps, callId: string): Promise<void> {
  try {
    await deleteRecordingAtProvider(deps, callId);
  } catch (err) {
    deps.log.error(
      { call_id: callId, err: (err as Error).message },
      'could not delete a refused recording at Twilio; the retention sweep retries',
    );
  }
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
