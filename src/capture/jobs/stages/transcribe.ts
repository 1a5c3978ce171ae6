import type { Queryable } from '../../../db/types.ts';
import { ProviderError } from '../../../domain/capture-providers.ts';
import { channelOfSpeaker } from '../../../domain/recording-channels.ts';
import { type TalkMetrics, talkMetrics } from '../../../domain/talk-metrics.ts';
import { notFound } from '../../../errors.ts';
import { isUuid } from '../../../ids.ts';
import { recordingChannels } from '../../../recordings/channels.ts';
import { silenceRecording } from '../../../recordings/silence.ts';
import { channelActivity } from '../../../recordings/talk-activity.ts';
import { CALL_NOT_FOUND } from '../../call-record.ts';
import { queueTranscript } from '../../pipeline.ts';
import { scriptTranscription } from '../../providers/script.ts';
import { lineTimes } from '../../providers/transcript.ts';
import { audioRedaction } from '../../redaction/audio-spans.ts';
import {
  deleteCarrierCopy,
  type ProviderDeletion,
  writeProviderDeletion,
} from '../../telephony/provider-recordings.ts';
import type { StageHandler } from '../types.ts';

interface CallAudio {
  id: string;
  organization_id: string;
  direction: 'inbound' | 'outbound';
  processing_state: 'none' | 'queued' | 'processed';
  recording_state: string;
  recording_key: string | null;
  recording_bytes: number | null;
  erased_at: Date | null;
  org_language: string;
  /** the organization's redaction setting, read with the call */
  redaction_enabled: boolean;
  /** the script of a simulated call (test mode), transcribed instead of its audio */
  sim_script: string | null;
  sim_target_seconds: number | null;
}

/**
 * The transcribe stage: the stored recording through deps.capture.transcription; the speaker-labelled
 * text becomes the call's transcript (transcript_original) and queues the analyse stage. A call that
 * got a transcript meanwhile (an adapter posted one) is left as it is. The audio is re-read from
 * storage on each attempt, never buffered here.
 */
export const transcribeStage: StageHandler = async ({ deps, job, signal, chain }) => {
  const call = await loadCallAudio(deps.db, job.callId);
  if (!call || call.erased_at) return { kind: 'cancelled', reason: 'the call was erased' };
  if (call.processing_state !== 'none') return { kind: 'succeeded' };
  // A simulated call's words are its script: no speech-to-text provider is called in test mode.
  const provider =
    call.sim_script !== null
      ? scriptTranscription(call.sim_script, call.sim_target_seconds)
      : deps.capture.transcription;
  if (!provider) {
    throw new ProviderError(
      'none',
      'fatal',
      'TRANSCRIPTION_PROVIDER is none: configure a speech-to-text provider (docs/capture.md), then reprocess the call.',
    );
  }
  if (call.recording_state !== 'available' || !call.recording_key) {
    throw new ProviderError(
      provider.name,
      'fatal',
      `The call's recording is ${call.recording_state === 'available' ? 'missing' : call.recording_state}; there is no audio to transcribe.`,
    );
  }
  const key = call.recording_key;
  const bytes = call.recording_bytes ?? (await deps.store.size(key)) ?? 0;
  if (bytes > provider.maxUploadBytes) {
    throw new ProviderError(
      provider.name,
      'too_large',
      `The recording is ${bytes} bytes; ${provider.name} accepts at most ${provider.maxUploadBytes} bytes per upload (docs/capture.md).`,
    );
  }
  const channels = await recordingChannels(deps.store, key, bytes);
  const result = await provider.transcribe({
    openAudio: async () => deps.store.read(key),
    byteLength: bytes,
    contentType: 'audio/mpeg',
    channels,
    direction: call.direction,
    languageHint: call.org_language,
    signal,
  });
  // Redaction (docs/capture.md "Redaction"): the redacted words' times silenced in the stored
  // recording before the transcript is written (queueTranscript redacts the text and flags a call
  // whose audio could not be silenced: no word times).
  let audioSilenced = false;
  let silencedBytes: number | null = null;
  let providerDeletion: ProviderDeletion | null = null;
  if (call.redaction_enabled) {
    const r = audioRedaction(result.segments);
    if (r.spans.length > 0) {
      const spans = r.spans.map((s) => ({
        channel: channels === 2 && s.speaker !== 'unknown' ? channelOfSpeaker(s.speaker, call.direction) : 0,
        start: s.start,
        end: s.end,
      }));
      silencedBytes = (await silenceRecording(deps.store, key, spans)).bytes;
    }
    audioSilenced = r.complete && r.spans.length > 0;
    // ours is final (silenced where redaction found something): the carrier's unredacted copy goes;
    // its answer is written by the write below, in the transaction that follows (one commit fewer)
    providerDeletion = await deleteCarrierCopy(deps, call.id, { deferWrite: true });
  }
  // Talk metrics (docs/capture.md "Talk metrics"): each side's voice activity in the stored (so
  // already silenced) dual-channel recording — as the transcription measured it while decoding, or,
  // when it did not or the recording was silenced since, decoded once more as it streams.
  let talk: TalkMetrics | null = null;
  if (channels === 2) {
    const a =
      silencedBytes === null && result.channelActivity
        ? result.channelActivity
        : await channelActivity(deps.store, key);
    if (a) {
      const agentChannel = channelOfSpeaker('agent', call.direction);
      talk = talkMetrics(a.channels[agentChannel], a.channels[1 - agentChannel], a.frameSeconds);
    }
  }
  return {
    kind: 'succeeded',
    write: async (tx, fresh) => {
      // the runner locked the call row (lockRun) and read back what may have changed since
      if (!fresh || fresh.erased_at) throw notFound(CALL_NOT_FOUND);
      if (silencedBytes !== null) {
        await tx.query('UPDATE calls SET recording_bytes = $2 WHERE id = $1', [call.id, silencedBytes]);
      }
      if (fresh.processing_state !== 'none') {
        if (providerDeletion) await writeProviderDeletion(tx, call.id, providerDeletion);
        return;
      }
      await queueTranscript(tx, deps, call, {
        text: result.text,
        language: result.language,
        audioSilenced,
        lineTimes: result.segments.length > 0 ? lineTimes(result.segments) : null,
        talkMetrics: talk,
        segments: result.segments,
        chain,
        redaction: fresh.redaction_enabled,
        providerDeletion,
      });
    },
  };
};

async function loadCallAudio(db: Queryable, callId: string): Promise<CallAudio | null> {
  if (!isUuid(callId)) return null;
  const { rows } = await db.query<CallAudio>(
    `SELECT c.id, c.organization_id, c.direction, c.processing_state, c.recording_state, c.recording_key,
            c.recording_bytes, c.erased_at, o.language AS org_language, o.redaction_enabled, s.script AS sim_script,
            s.target_seconds AS sim_target_seconds
       FROM calls c JOIN organizations o ON o.id = c.organization_id
       LEFT JOIN simulated_calls s ON s.call_id = c.id
      WHERE c.id = $1`,
    [callId],
    { name: 'capture_call_audio_v3' },
  );
  return rows[0] ?? null;
}
