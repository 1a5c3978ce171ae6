/**
 * The e-mail to the account owner when a subscription is paused automatically (spec "Webhook
 * subscription states": "When a subscription is paused automatically, an e-mail goes to the account
 * owner"). One per pause: it is queued in the transaction that flips the subscription from active to
 * paused, and only an active subscription can be paused. It carries the reason and the last reply
 * (status and a snippet, or the error) — never a secret or a signature.
 */
import type { Queryable } from '../../db/types.ts';
import { PAUSED_REASONS } from '../../domain/subscription-state.ts';
import { queueEmail } from '../../mail/mailer.ts';

export interface PauseFacts {
  subscriptionId: string;
  url: string;
  reason: string;
  pausedAt: Date;
  responseStatus: number | null;
  errorClass: string | null;
  /** response body snippet (sanitised) or the error message */
  snippet: string | null;
  /**
   * The failed delivery was no longer this worker's when its outcome was written (its call was
   * erased meanwhile, or its lease lost): the reply is not quoted.
   */
  replyWithdrawn?: boolean;
  /** the call whose event the failed delivery carried, if any (erasing it redacts the quoted reply) */
  callId?: string | null;
  /** the subscription's page in the web app (PUBLIC_BASE_URL + its path), linked from the notice */
  pageUrl?: string;
}

/** What a redacted "Last reply" says after the call its delivery carried was erased. */
export const ERASED_REPLY_NOTE = '(not kept: the call it concerned was erased)';
const WITHDRAWN_REPLY_NOTE =
  '(not kept: the delivery was withdrawn while the request was out, e.g. its call was erased)';

function reasonText(reason: string, status: number | null): string {
  switch (reason) {
    case PAUSED_REASONS.rejected:
      return (
        `your endpoint answered HTTP ${status}. A 401, 403 or 422 pauses the subscription at once (often a ` +
        'wrong signing secret in the receiver, or an endpoint that now refuses our requests); that delivery ' +
        'was dead-lettered and is not retried.'
      );
    case PAUSED_REASONS.gone:
      return 'your endpoint answered 410 Gone twice in a row.';
    case PAUSED_REASONS.transient:
      return '50 deliveries in a row failed (time-outs, connection errors or replies other than 2xx).';
    default:
      return reason;
  }
}

/** The URL without its query string and fragment, which may carry the receiver's own tokens. */
function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

export function pauseNotice(f: PauseFacts): { subject: string; body: string } {
  const url = displayUrl(f.url);
  const quoted = (f.snippet ?? '').slice(0, 500).replace(/\n/g, '\n  ');
  const last = f.replyWithdrawn
    ? `${f.responseStatus !== null ? `HTTP ${f.responseStatus}` : `no reply (${f.errorClass ?? 'error'})`} ${WITHDRAWN_REPLY_NOTE}`
    : f.responseStatus !== null
      ? `HTTP ${f.responseStatus}${quoted ? `, body starts with:\n  ${quoted}` : ' (empty body)'}`
      : `no reply (${f.errorClass ?? 'error'}${f.snippet ? `: ${f.snippet.slice(0, 300)}` : ''})`;
  const body = [
    `Your webhook subscription to ${url} was paused automatically at ${f.pausedAt.toISOString()}.`,
    '',
    `Why: ${reasonText(f.reason, f.responseStatus)}`,
    `Last reply: ${last}`,
    '',
    'While it is paused, new events are kept in its queue and wait; nothing is lost.',
    'To resume, fix the endpoint, then open the webhook settings in the Call Capture app and verify the',
    'subscription again. Queued deliveries go out as soon as it is active; dead-lettered ones can be',
    'resent from the delivery log.',
    ...(f.pageUrl ? ['', `Open the subscription: ${f.pageUrl}`] : []),
    '',
    `Subscription id: ${f.subscriptionId}`,
    `Pause reason code: ${f.reason}`,
  ].join('\n');
  return { subject: `Webhook subscription paused: ${url}`, body };
}

/**
 * The notice with its "Last reply" taken out (the call whose event the reply may echo was erased):
 * the status stays, the quoted body or error text goes. The quote never holds a blank line (its
 * lines are indented), so the entry ends at the first one.
 */
export function redactPauseNotice(body: string): string {
  return body.replace(
    /^Last reply: (HTTP \d{3})?[\s\S]*?\n\n/m,
    (_m, status: string | undefined) => `Last reply: ${status ? `${status} ` : ''}${ERASED_REPLY_NOTE}\n\n`,
  );
}

/** Queues the notice for the account owner inside the pausing transaction; null when there is none. */
export async function queuePauseNotice(
  tx: Queryable,
  p: { organizationId: string; facts: PauseFacts },
): Promise<string | null> {
  const owner = await tx.query<{ email: string }>(
    `SELECT email FROM users WHERE organization_id = $1 AND role = 'owner' ORDER BY created_at, id LIMIT 1`,
    [p.organizationId],
  );
  if (owner.rowCount === 0) return null;
  const { subject, body } = pauseNotice(p.facts);
  return queueEmail(
    tx,
    { organizationId: p.organizationId, to: owner.rows[0].email, subject, body, callId: p.facts.callId },
    p.facts.pausedAt,
  );
}
