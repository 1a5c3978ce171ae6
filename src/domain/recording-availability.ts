/**
 * Recording availability as seen through the recording-url operation (spec "States and
 * transitions"), and again when a signed link is fetched: one pure rule, used by both.
 *
 * Order of the checks, and why (docs/decisions.md):
 * 1. erased → 404 NOT_FOUND: the call is gone; every read answers 404.
 * 2. Irreversible outcomes → 410, even when the call also sits in the trash: restoring the call
 *    would not bring the audio back, and a 410 must stay true ("stop retrying").
 *    - recording_state deleted → 410 RECORDING_DELETED.
 *    - never captured → 410 RECORDING_NOT_CAPTURED: a call run in no_recording mode (either
 *      direction: audio is never stored for it, so "retry later" would be a lie); an outbound call
 *      refused by the capture gate (recording_state not_captured, or refused) or ended without a
 *      conversation (final lifecycle agent_no_answer, customer_no_answer, failed_to_initiate) while
 *      no audio was stored.
 * 3. Trash or scheduled deletion (both reversible) → 409 RECORDING_WITHHELD, for every call that
 *    has audio or may still get it. Withheld wins over not-ready: the answer tells the caller why
 *    it gets nothing right now, and that stays true even if the audio arrives meanwhile.
 * 4. Audio stored → 200.
 * 5. Everything else → 409 RECORDING_NOT_READY ("retry later"): audio not yet arrived; an inbound
 *    call whose recording was refused (a recording can still follow, never 410); an outbound call
 *    still in progress, in reconciliation_required, or ended agent_only — a late carrier callback
 *    may repair agent_only to completed and the recording then follows, so a 410 would be a lie.
 *
 * An inbound call in normal mode never answers RECORDING_NOT_CAPTURED, whatever its recording_state:
 * the spec says an inbound refusal is "never 410" (a recording can still follow).
 */
export type Direction = 'inbound' | 'outbound';
export type RecordingState = 'pending' | 'available' | 'refused' | 'not_captured' | 'deleted';
export type RecordingMode = 'normal' | 'no_recording';

export interface RecordingFacts {
  direction: Direction;
  recordingState: RecordingState;
  recordingMode: RecordingMode;
  outboundLifecycle: string | null;
  trashed: boolean;
  /** pending_deletion_at / deletion_scheduled_at set and the call not yet erased */
  deletionScheduled: boolean;
  erased: boolean;
}

export type Availability =
  | { available: true }
  | {
      available: false;
      status: 404 | 409 | 410;
      code:
        | 'NOT_FOUND'
        | 'RECORDING_NOT_READY'
        | 'RECORDING_WITHHELD'
        | 'RECORDING_DELETED'
        | 'RECORDING_NOT_CAPTURED';
      message: string;
    };

/** Outbound final states without a conversation: no recording will ever follow. */
export const OUTBOUND_NO_CONVERSATION = new Set([
  'agent_no_answer',
  'customer_no_answer',
  'failed_to_initiate',
]);

export const MESSAGES = {
  NOT_FOUND: 'No call with this id exists in your organization.',
  RECORDING_NOT_READY: 'The recording has not arrived yet; retry later.',
  RECORDING_WITHHELD:
    'The call is in the trash or scheduled for deletion, so its recording is withheld; keep asking, it becomes available again if the call is restored.',
  /** One generic message covers every 410 reason (spec); only the code differs. */
  GONE: 'The recording is no longer available and will not become available; stop retrying.',
} as const;

const answer = (
  status: 404 | 409 | 410,
  code: Exclude<Availability, { available: true }>['code'],
): Availability => ({
  available: false,
  status,
  code,
  message: status === 410 ? MESSAGES.GONE : MESSAGES[code as keyof typeof MESSAGES],
});

/** True when the call will never have audio: no_recording mode, or an outbound call that captured none. */
export function neverCaptured(f: RecordingFacts): boolean {
  if (f.recordingMode === 'no_recording') return true;
  if (f.direction !== 'outbound') return false;
  if (f.recordingState === 'not_captured' || f.recordingState === 'refused') return true;
  if (f.recordingState === 'available') return false;
  return f.outboundLifecycle !== null && OUTBOUND_NO_CONVERSATION.has(f.outboundLifecycle);
}

export function recordingAvailability(f: RecordingFacts): Availability {
  if (f.erased) return answer(404, 'NOT_FOUND');
  if (f.recordingState === 'deleted') return answer(410, 'RECORDING_DELETED');
  if (neverCaptured(f)) return answer(410, 'RECORDING_NOT_CAPTURED');
  if (f.trashed || f.deletionScheduled) return answer(409, 'RECORDING_WITHHELD');
  if (f.recordingState === 'available') return { available: true };
  return answer(409, 'RECORDING_NOT_READY');
}
