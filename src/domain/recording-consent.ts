/**
 * Whether the caller's answer to the consent announcement lets a call be recorded
 * (docs/capture.md "What a caller hears and what is stored"). Pure.
 *
 * - null: no announcement was due (consent off, or a call the service placed): recording allowed;
 * - 'accepted': the caller stayed silent through the announcement: allowed;
 * - 'refused': the caller pressed a key: never recorded;
 * - 'announced': the announcement was played and never answered (the caller hung up during it).
 *   The service answers TwiML that records only after the consent answer, so no genuine recording
 *   can exist yet: treated as refused.
 */
export type RecordingConsent = 'announced' | 'accepted' | 'refused' | null;

export function consentAllowsRecording(consent: RecordingConsent): boolean {
  return consent === null || consent === 'accepted';
}
