import type { Deps } from '../../../deps.ts';
import { AppError } from '../../../errors.ts';
import { enqueueStage } from '../../jobs/enqueue.ts';
import { refuseRecordingIn } from '../../recording-lifecycle.ts';
import type { TelephonyAccount } from '../accounts.ts';
import { claimCallback } from '../callbacks.ts';
import { DOWNLOAD_FALLBACK_DELAY_MS } from './download.ts';
import { lockOwnCall, str } from './inbound.ts';
import { noteOutboundRecording } from './outbound.ts';
import { onTwilioOrigin } from './rest.ts';
import type { FormParams } from './signature.ts';

/**
 * POST …/calls/{id}/recording: Twilio's recordingStatusCallback (the <Dial> or <Record> the service
 * answered). Applied at most once per RecordingSid and status:
 *   completed: the recording's sid, URL and channel count are stored; the caller then downloads it
 *     (downloadRecording, after Twilio has its answer). A RecordingUrl that is not on
 *     TWILIO_API_BASE_URL's origin is never fetched: logged, and the recording counts as refused.
 *   absent / failed: no recording: refused (inbound recording-url keeps answering 409).
 * A status for a recording that is already stored or deleted is logged and not applied.
 * Answers whether a download is due.
 */
export async function recordingStatusCallback(
  deps: Deps,
  account: TelephonyAccount,
  callId: string,
  p: FormParams,
): Promise<{ download: boolean }> {
  const status = str(p, 'RecordingStatus');
  const recordingSid = str(p, 'RecordingSid');
  const recordingUrl = str(p, 'RecordingUrl');
  return deps.db.transaction(async (tx) => {
    const call = await lockOwnCall(tx, account, callId, p);
    const now = deps.clock.now();
    const claim = (outcome: 'applied' | 'ignored', detail: string | null = null) =>
      claimCallback(tx, {
        provider: 'twilio',
        key: `recording:${recordingSid || call.provider_call_sid}:${status}`,
        organizationId: call.organization_id,
        callId: call.id,
        kind: 'recording',
        outcome,
        detail,
        now,
      });
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
      if (!recordingSid || !recordingUrl) return ignore('RecordingSid or RecordingUrl missing');
      if (call.recording_mode === 'no_recording') return ignore('the call runs in no_recording mode');
      if (settled) return ignore(`the recording is already ${call.recording_state}`);
      if (!onTwilioOrigin(deps.config, recordingUrl)) {
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
      await tx.query(
        `UPDATE calls SET recording_sid = $2, provider_recording_url = $3,
                recording_channels = COALESCE($4, recording_channels), updated_at = $5
          WHERE id = $1`,
        [call.id, recordingSid, recordingUrl, channels === 1 || channels === 2 ? channels : null, now],
      );
      // The download runs at once in this process (startRecordingDownload, after Twilio has its
      // answer); this durable job is its safety net: should that fail for good or the process die,
      // a worker runs the same idempotent download then (a stored recording is skipped).
      await enqueueStage(tx, {
        organizationId: call.organization_id,
        callId: call.id,
        stage: 'download',
        now,
        at: new Date(now.getTime() + DOWNLOAD_FALLBACK_DELAY_MS),
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
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
