import type { ProcessedAnalysis } from '../../../domain/analysis.ts';
import type {
  CallCompletedData,
  CallFollowupEmailDraftedData,
  CallTrackerMatchedData,
  CallTranscribedData,
} from '../event-schemas.ts';

/**
 * data of the events of one processing run: call.completed, call.transcribed,
 * call.followup_email.drafted, call.tracker.matched. Pure builders, exactly the spec's keys.
 * Each fact happens once per call, so the fact key of all four is the call id.
 */

export interface CompletedCallFacts {
  id: string;
  direction: 'inbound' | 'outbound';
  callerPhone: string | null;
  customerPhoneE164: string | null;
  customerPhoneNational: string | null;
  companyPhoneE164: string | null;
  createdAt: Date;
  /** recording length in seconds; 0 when there is no recording */
  duration: number;
}

export const processingFactKey = (callId: string): string => callId;

export function callCompletedData(
  call: CompletedCallFacts,
  p: {
    appUrl: string;
    recordingUrl: string | null;
    analysis: ProcessedAnalysis;
    transcriptOriginal: string | null;
  },
): CallCompletedData {
  return {
    call_id: call.id,
    direction: call.direction,
    caller_phone: call.callerPhone,
    customer_phone_e164: call.customerPhoneE164,
    customer_phone_national: call.customerPhoneNational,
    company_phone_e164: call.companyPhoneE164,
    call_created_at: call.createdAt.toISOString(),
    app_url: p.appUrl,
    duration: call.duration,
    recording_url: p.recordingUrl,
    transcript_processed: p.analysis,
    transcript_original: p.transcriptOriginal,
  };
}

export function callTranscribedData(
  callId: string,
  transcriptOriginal: string | null,
  analysis: ProcessedAnalysis,
): CallTranscribedData {
  return { call_id: callId, transcript_original: transcriptOriginal, transcript_processed: analysis };
}

export function followupDraftedData(
  callId: string,
  draft: { subject: string; body: string; language: string },
): CallFollowupEmailDraftedData {
  return { call_id: callId, subject: draft.subject, body: draft.body, language: draft.language };
}

export function trackerMatchedData(
  callId: string,
  matches: readonly { tracker_id: string; name: string; matched_terms: string[]; excerpts: string[] }[],
): CallTrackerMatchedData {
  return {
    call_id: callId,
    matches: matches.map((m) => ({
      tracker_id: m.tracker_id,
      name: m.name,
      matched_terms: m.matched_terms,
      excerpts: m.excerpts,
    })),
  };
}
