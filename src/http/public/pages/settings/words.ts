/**
 * The words the settings pages use for the service's states, reasons and choices: one place, so a
 * page, a test and the docs say the same thing. Pure text, no HTML.
 */
import type { HandshakeResult } from '../../../../webhooks/subscriptions/handshake.ts';

export const SCOPE_WORDS: Record<string, string> = {
  'read.calls':
    'List and read calls (GET /calls, GET /calls/{id}): metadata, processed analysis, follow-up drafts.',
  'read.recordings':
    'Download call audio: GET /calls/{id}/recording-url mints a 15-minute link to the recording of any call of your organization.',
  'write.calls':
    'Place outbound calls (POST /calls): the service rings the agent, then dials the customer from a service number.',
  'read.contacts': 'List and read contacts (GET /contacts, GET /contacts/{id}).',
  'write.contacts': 'Create and edit contacts (POST /contacts, PATCH /contacts/{id}).',
  'manage.webhooks': 'Reserved for planned endpoints; grants nothing today.',
  'manage.api_keys': 'Reserved for planned endpoints; grants nothing today.',
};

/** The scopes offered with ordinary checkboxes; read.recordings has its own consent box. */
export const ORDINARY_SCOPES = ['read.calls', 'write.calls', 'read.contacts', 'write.contacts'] as const;
export const RESERVED_SCOPES = ['manage.webhooks', 'manage.api_keys'] as const;
export const RECORDINGS_CONSENT =
  'I allow this key to download call recordings (the audio of every call of this organization), in addition to reading calls.';

export const MODE_WORDS: Record<string, { label: string; text: string }> = {
  permissive: {
    label: 'Permissive (default)',
    text: 'Any 2xx answer to the verification request activates the subscription; the body is ignored.',
  },
  strict: {
    label: 'Strict',
    text: 'Your endpoint must answer 2xx with the JSON body {"challenge": "<the value it received>"}; anything else leaves the subscription inactive.',
  },
};

export const STATE_WORDS: Record<string, { label: string; text: string }> = {
  active: { label: 'Active', text: 'Events are delivered.' },
  inactive: {
    label: 'Inactive',
    text: 'The endpoint has not passed the verification handshake yet; nothing is sent. Fix the endpoint and re-verify.',
  },
  paused: {
    label: 'Paused',
    text: 'Nothing is sent; new events wait in the queue. Fix the endpoint, then re-verify to resume.',
  },
};

export function pauseReasonWords(reason: string | null): string {
  switch (reason) {
    case 'receiver_rejected':
      return 'Your endpoint answered 401, 403 or 422 (often a wrong signing secret in the receiver); that delivery was dead-lettered.';
    case 'receiver_gone':
      return 'Your endpoint answered 410 Gone twice in a row.';
    case 'transient_failures':
      return '50 deliveries in a row failed (time-outs, connection errors or answers other than 2xx).';
    case 'emergency_rotation':
      return 'An emergency secret rotation paused it; queued deliveries were skipped and can be resent from the delivery log.';
    case null:
      return 'No reason recorded.';
    default:
      return `Reason code ${reason}.`;
  }
}

const ERROR_WORDS: Record<string, string> = {
  timeout: 'did not answer within 10 seconds',
  connection: 'could not be connected to (connection refused or reset)',
  dns: 'has a host name that did not resolve',
  tls: 'failed the TLS handshake (certificate or protocol problem)',
  blocked_address: 'resolves to an address the service may not call (private or loopback)',
  invalid_url: 'is not a usable URL',
};

export const errorClassWords = (errorClass: string | null): string =>
  ERROR_WORDS[errorClass ?? ''] ?? `failed (${errorClass ?? 'unknown error'})`;

/** The handshake's outcome in one or two sentences: what the receiver answered and what followed. */
export function handshakeWords(mode: string, h: HandshakeResult): { ok: boolean; text: string } {
  const took = `${h.duration_ms} ms`;
  if (h.response_status === null) {
    return {
      ok: false,
      text: `Your endpoint ${errorClassWords(h.error_class)} (${took}), so the subscription did not activate.`,
    };
  }
  const s = h.response_status;
  if (h.accepted) {
    return {
      ok: true,
      text:
        mode === 'strict'
          ? `Your endpoint answered HTTP ${s} and echoed the challenge (${took}), so the subscription is active.`
          : `Your endpoint answered HTTP ${s} (${took}); in permissive mode any 2xx activates, so the subscription is active.`,
    };
  }
  if (s >= 200 && s <= 299) {
    return {
      ok: false,
      text: `Your endpoint answered HTTP ${s} (${took}) but did not echo the challenge as the JSON body {"challenge": "…"}, which strict mode requires, so the subscription did not activate.`,
    };
  }
  return {
    ok: false,
    text: `Your endpoint answered HTTP ${s} (${took}); only a 2xx answer activates a subscription, so it did not activate.`,
  };
}

export const DELIVERY_STATUS_WORDS: Record<string, string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  dead_lettered: 'Dead-lettered',
  skipped: 'Skipped',
};

export function deliveryReasonWords(reason: string | null): string | null {
  if (reason === null) return null;
  const rejected = /^receiver_rejected_(\d{3})$/.exec(reason);
  if (rejected) return `Your endpoint answered ${rejected[1]}: not retried.`;
  switch (reason) {
    case 'max_attempts':
      return 'Failed 5 times: no more retries.';
    case 'emergency_rotation':
      return 'Skipped by an emergency secret rotation.';
    case 'subscription_deleted':
      return 'Skipped: the subscription was deleted.';
    case 'rotation_replaced':
      return 'Skipped: signed with a rotation secret that a newer rotation replaced.';
    case 'rotation_expired':
      return 'Skipped: signed with a rotation secret that expired before activation.';
    case 'call_erased':
      return 'Skipped: the call was erased.';
    default:
      return reason.replace(/_/g, ' ');
  }
}

/** Event types grouped by the resource they concern, for the subscription form. */
export function groupEventTypes(types: readonly string[]): { group: string; types: string[] }[] {
  const groups: { group: string; prefix: (t: string) => boolean }[] = [
    {
      group: 'Calls',
      prefix: (t) =>
        t.startsWith('call.') &&
        !t.startsWith('call.recording.') &&
        !t.startsWith('call.outbound.') &&
        t !== 'call.failed' &&
        t !== 'call.deletion_scheduled',
    },
    { group: 'Outbound calls', prefix: (t) => t.startsWith('call.outbound.') || t === 'call.failed' },
    {
      group: 'Recordings and deletion',
      prefix: (t) => t.startsWith('call.recording.') || t === 'call.deletion_scheduled',
    },
    { group: 'Contacts', prefix: (t) => t.startsWith('contact.') },
  ];
  const out = groups.map((g) => ({ group: g.group, types: types.filter(g.prefix) }));
  const placed = new Set(out.flatMap((g) => g.types));
  const rest = types.filter((t) => !placed.has(t));
  if (rest.length > 0) out.push({ group: 'Other', types: rest });
  return out.filter((g) => g.types.length > 0);
}

export const EVENT_WORDS: Record<string, string> = {
  'call.completed': 'recording and transcript of a call are processed (the primary data event)',
  'call.transcribed': 'the transcript is ready',
  'call.followup_email.drafted': 'a follow-up e-mail draft was composed',
  'call.tracker.matched': 'a keyword tracker matched the transcript',
  'call.outbound.attempted': 'an outbound dial reached a final state',
  'call.failed': 'an outbound call did not complete',
  'call.outbound.lifecycle_repaired': 'an outbound call state was corrected',
  'call.recording.ready': 'the recording file is available',
  'call.recording.deleted': 'a recording was deleted',
  'call.deletion_scheduled': 'a call is scheduled for deletion',
  'contact.created': 'a contact was created',
  'contact.updated': 'a contact was edited',
};
