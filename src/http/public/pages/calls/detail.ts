import type { FastifyPluginAsync } from 'fastify';
import {
  type CallContact,
  type CallPageRow,
  type CallStep,
  type CallTrackerMatch,
  readCallPage,
  recordingFactsOf,
} from '../../../../capture/call-page.ts';
import type { Deps } from '../../../../deps.ts';
import { canonicalAnalysis, type ProposalItem } from '../../../../domain/analysis.ts';
import { followupEmailView } from '../../../../domain/call-view.ts';
import { normalizePhone } from '../../../../domain/phone.ts';
import { recordingAvailability } from '../../../../domain/recording-availability.ts';
import { talkMetricsOf } from '../../../../domain/talk-metrics.ts';
import { CRM_STATUSES, REVIEW_STATUSES } from '../../../../domain/values.ts';
import { mintRecordingLink, REST_LINK_TTL_MS } from '../../../../recordings/links.ts';
import { DELETION_REASONS, type DeletionReason } from '../../../../webhooks/outbox/event-data/deletion.ts';
import { type PageUser, requireUser, scopeOf } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { CopyButton, CsrfField, formatDuration, PostButton, Time, words } from '../kit/ui.ts';
import { CallForm } from './call-form.ts';
import { CallContactSection, ListeningControls, PlayFrom, TalkTime, Transcript } from './listening.ts';

/** What each deletion reason means, in the words the page shows. */
export const DELETION_REASON_LABELS: Record<DeletionReason, string> = {
  consent_not_asked: 'Consent to record was not asked',
  consent_withdrawn: 'The caller withdrew consent',
  retention_expired: 'The retention period has expired',
  user_erasure: 'The person asked for their data to be erased',
};

const LIFECYCLE_LABELS: Record<string, string> = {
  ringing_agent: 'Ringing the agent',
  agent_answered: 'The agent answered',
  ringing_customer: 'Ringing the customer',
  in_progress: 'Connected',
  completed: 'Completed',
  agent_no_answer: 'The agent did not answer',
  customer_no_answer: 'The customer did not answer',
  agent_only: 'Only the agent was on the line',
  failed_to_initiate: 'The call could not be started',
  reconciliation_required: "Outcome unknown: waiting for the carrier's records",
};

/** The stages of an outbound call that connects, in order. */
const HAPPY_PATH = ['ringing_agent', 'agent_answered', 'ringing_customer', 'in_progress', 'completed'];
/** For a final state off the happy path: the index of the last stage the call reached before it. */
const REACHED_BEFORE: Record<string, number> = {
  failed_to_initiate: -1,
  agent_no_answer: 0,
  customer_no_answer: 2,
  agent_only: 2,
};

/** Messages after a successful action (post/redirect/get: ?done=<key>); never text from the request. */
export const DONE: Record<string, string> = {
  trashed: 'The call is in the trash. Its recording is withheld until you restore it.',
  restored: 'The call was restored from the trash.',
  scheduled: 'The deletion is scheduled. You can cancel it until the date shown.',
  cancelled: 'The scheduled deletion was cancelled.',
  statuses: 'The statuses were saved.',
  unchanged: 'Nothing changed: the statuses were already set that way.',
  contact_saved: 'The contact was saved: this call and every other call with its number show it.',
  calling:
    'Calling: your phone rings first. Answer it and press a key to be put through to the customer. Reload this page to follow the call.',
};

const ANALYSIS_LABELS: [keyof ReturnType<typeof canonicalAnalysis>, string][] = [
  ['subject', 'Subject'],
  ['summary', 'Summary'],
  ['caller_name', 'Caller name'],
  ['counterparty_name', 'Other party'],
  ['service_needed', 'Service needed'],
  ['services_match', 'Matches our services'],
  ['lead_score', 'Lead score'],
  ['preferred_date', 'Preferred date'],
  ['client_address', 'Address'],
  ['client_city', 'City'],
  ['client_country', 'Country'],
  ['caller_location', 'Caller location'],
  ['additional_details', 'Additional details'],
  ['detected_language', 'Language'],
];

export const callPath = (id: string) => `/app/calls/${id}`;

export function customerName(c: CallPageRow): string {
  const fromAnalysis =
    c.analysis && typeof c.analysis.caller_name === 'string' ? c.analysis.caller_name : null;
  // A call without a name is the customer's number (an outbound call always has one), not "Unknown caller".
  return (
    c.caller_name ??
    fromAnalysis ??
    c.customer_phone_national ??
    c.customer_phone_e164 ??
    (c.direction === 'inbound' ? 'Unknown caller' : 'Unknown number')
  );
}

function Facts({ c, contact }: { c: CallPageRow; contact: CallContact | null }): VNode {
  const inbound = c.direction === 'inbound';
  return html`<dl class="facts">
    <dt>${inbound ? 'Caller' : 'Customer'}</dt>
    <dd>
      ${
        customerName(c) === (c.customer_phone_national ?? c.customer_phone_e164)
          ? null
          : html`${customerName(c)}<br />`
      }
      ${
        c.customer_phone_e164
          ? html`<span>${c.customer_phone_national ?? c.customer_phone_e164}</span>
              <span class="muted"> (${c.customer_phone_e164})</span>`
          : html`<span class="muted">${c.caller_phone || 'No number given'}</span>`
      }
    </dd>
    ${
      c.customer_phone_e164
        ? html`<dt>Contact</dt>
            <dd>${
              contact
                ? html`<a href=${`/app/contacts/${contact.id}`}>${
                    [contact.first_name, contact.last_name].filter(Boolean).join(' ') || c.customer_phone_e164
                  }</a>`
                : html`<span class="muted">Not a contact yet</span> (<a href="#contact">save as contact</a>)`
            }</dd>`
        : null
    }
    <dt>When</dt>
    <dd><${Time} at=${c.created_at} /></dd>
    <dt>Direction</dt>
    <dd>${inbound ? 'Inbound (the customer called)' : 'Outbound (we called the customer)'}</dd>
    <dt>${inbound ? 'Came in on' : 'Went out from'}</dt>
    <dd>${c.company_phone_e164 === null ? 'Not recorded' : (normalizePhone(c.company_phone_e164)?.national ?? c.company_phone_e164)}</dd>
    ${!inbound && c.agent_email ? html`<dt>Agent</dt><dd>${c.agent_email}</dd>` : null}
    <dt>Duration</dt>
    <dd>${c.duration === null ? 'Not known (no recording measured)' : formatDuration(Number(c.duration))}</dd>
    <dt>CRM status</dt>
    <dd>${words(c.crm_status)}</dd>
    <dt>Review status</dt>
    <dd>${c.review_status ? words(c.review_status) : 'Not set'}</dd>
    ${c.trashed_at ? html`<dt>Trash</dt><dd><span class="badge bad">In the trash</span> since <${Time} at=${c.trashed_at} /></dd>` : null}
    ${
      c.pending_deletion_at
        ? html`<dt>Deletion</dt>
            <dd>
              <span class="badge bad">Scheduled</span> for <${Time} at=${c.pending_deletion_at} />
              ${c.deletion_reason ? html` — ${DELETION_REASON_LABELS[c.deletion_reason as DeletionReason] ?? c.deletion_reason}` : null}
            </dd>`
        : null
    }
  </dl>`;
}

/** The recording: a player on a fresh signed link, or its state in words. */
function Recording({ deps, c }: { deps: Deps; c: CallPageRow }): VNode {
  const a = recordingAvailability(recordingFactsOf(c));
  if (a.available) {
    if (c.entitlement !== 'active') {
      return html`<p>
        The organization's subscription is inactive, so recordings cannot be played. They can be played again
        once it is renewed.
      </p>`;
    }
    // A relative link: it works under whatever origin the page was reached on.
    const link = new URL(mintRecordingLink(deps, c.id, REST_LINK_TTL_MS).url);
    const src = `${link.pathname}${link.search}`;
    return html`<div class="player">
        <audio controls preload="metadata" src=${src} aria-label="Call recording" id="call-audio">
          <a href=${src}>Download the recording</a>
        </audio>
        <${ListeningControls} />
      </div>
      <p class="muted">
        <a href=${src} download>Download the recording (MP3)</a>. The link on this page works for 15 minutes; reload
        the page for a fresh one.
      </p>
      ${
        c.audio_redaction === 'no_word_times' &&
        html`<p class="notice error" role="note" id="audio-not-redacted">
        <strong>The recording may contain what was redacted.</strong> Card numbers, ids and other details were taken
        out of this call's transcript, but the speech-to-text provider gave no word times, so they could not be
        silenced in the audio.
      </p>`
      }
      ${c.audio_redaction === 'silenced' && html`<p class="muted" id="audio-redacted">What was redacted from the transcript is silenced in this recording.</p>`}`;
  }
  switch (a.code) {
    case 'RECORDING_NOT_READY':
      return html`<p>
        <span class="badge">Not ready</span>
        ${
          c.recording_state === 'refused'
            ? ' The recording was refused by the phone system; a recording may still follow.'
            : ' The recording has not arrived yet. It appears here when it does.'
        }
      </p>`;
    case 'RECORDING_WITHHELD':
      return html`<p>
        <span class="badge bad">Withheld</span> The call is ${c.trashed_at ? 'in the trash' : 'scheduled for deletion'},
        so its recording is withheld (also from the API). ${c.trashed_at ? 'Restore the call' : 'Cancel the deletion'} to
        hear it again.
      </p>`;
    case 'RECORDING_DELETED':
      return html`<p>
        <span class="badge bad">Deleted</span> The recording was deleted${
          c.recording_deleted_at ? html` on <${Time} at=${c.recording_deleted_at} />` : null
        }. It cannot be brought back.
      </p>`;
    case 'RECORDING_NOT_CAPTURED':
      return html`<p>
        <span class="badge">Never captured</span>
        ${
          c.recording_mode === 'no_recording'
            ? ' This call ran without recording, so there is no audio.'
            : ' No conversation was recorded on this call, so there is no audio.'
        }
      </p>`;
    default:
      return html`<p>No recording.</p>`;
  }
}

/** The words of the transcript a field was read from (call_analyses.evidence), when kept. */
function evidenceQuote(c: CallPageRow, key: string): { quote: string; start: number | null } | null {
  const e = c.evidence?.[key];
  const q = e?.quote;
  if (typeof q !== 'string' || !q.trim()) return null;
  const start = typeof e?.start === 'number' && Number.isFinite(e.start) && e.start >= 0 ? e.start : null;
  return { quote: q, start };
}

function analysisValue(key: string, v: unknown): string | null {
  if (v === null || v === undefined || v === '') return null;
  if (key === 'services_match') return v === true ? 'Yes' : v === false ? 'No' : null;
  if (key === 'lead_score') return typeof v === 'number' ? `${v} out of 10` : null;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
}

function Analysis({ c }: { c: CallPageRow }): VNode {
  if (!c.has_analysis || !c.analysis) {
    return html`<p class="muted">
      ${c.processing_state === 'queued' ? 'The analysis is being prepared.' : 'No analysis for this call.'}
    </p>`;
  }
  const a = canonicalAnalysis(c.analysis);
  const rows = ANALYSIS_LABELS.map(
    ([k, label]) => [label, analysisValue(k, a[k]), evidenceQuote(c, String(k))] as const,
  ).filter(([, v]) => v !== null);
  const items: ProposalItem[] = Array.isArray(a.proposal_items) ? a.proposal_items : [];
  return html`${
    rows.length === 0
      ? html`<p class="muted">The call contained none of the details the analysis looks for.</p>`
      : html`<dl class="facts">${rows.map(
          ([label, v, quote]) =>
            html`<dt>${label}</dt><dd>${v}${
              quote
                ? html`<br /><q class="muted evidence">${quote.quote}</q>${
                    quote.start === null ? null : html` <${PlayFrom} start=${quote.start} />`
                  }`
                : null
            }</dd>`,
        )}</dl>`
  }
    ${
      items.length > 0
        ? html`<h3>Suggested follow-ups</h3>
            <ul>
              ${items.map((i) => html`<li>${typeof i.text === 'string' ? i.text : ''}${i.kind ? html` <span class="muted">(${words(String(i.kind))})</span>` : null}</li>`)}
            </ul>`
        : null
    }`;
}

function FollowupDraft({ c }: { c: CallPageRow }): VNode {
  const draft = followupEmailView(c.followup_email, c.analysis_language);
  if (!draft) return html`<p class="muted">No follow-up e-mail was drafted for this call.</p>`;
  return html`<p class="muted">A draft for you to review and send; the service never sends it.</p>
    <dl class="facts">
      <dt>Subject</dt>
      <dd><span id="draft-subject">${draft.subject}</span> <${CopyButton} target="draft-subject" label="Copy subject" /></dd>
      <dt>Language</dt>
      <dd>${draft.language}</dd>
    </dl>
    <pre class="draft" id="draft-body">${draft.body}</pre>
    <${CopyButton} target="draft-body" label="Copy e-mail text" />`;
}

function TrackerMatches({ matches }: { matches: CallTrackerMatch[] }): VNode {
  if (matches.length === 0) return html`<p class="muted">No keyword tracker matched this call.</p>`;
  return html`<ul>
    ${matches.map(
      (m) => html`<li>
        <strong>${m.name}</strong>: ${m.matchedTerms.join(', ')}
        <ul>
          ${m.excerpts.map((x) => html`<li><q>${x}</q></li>`)}
        </ul>
      </li>`,
    )}
  </ul>`;
}

/** The outbound lifecycle as a timeline: the stages reached, the current or final state, and the dated events. */
function Lifecycle({ c, steps }: { c: CallPageRow; steps: CallStep[] }): VNode {
  const state = c.outbound_lifecycle;
  if (!state) return html`<p class="muted">No lifecycle was reported for this call.</p>`;
  const onPath = HAPPY_PATH.indexOf(state);
  const reached = onPath >= 0 ? onPath : (REACHED_BEFORE[state] ?? -1);
  const stages = HAPPY_PATH.slice(0, reached + 1);
  const stepText = (e: CallStep): string => {
    if (e.kind === 'repaired')
      return 'Corrected to completed: a late carrier report showed the call connected';
    if (e.kind === 'failed') return 'Reported as failed';
    return `Attempt finished: ${LIFECYCLE_LABELS[String(e.lifecycle)] ?? 'reported'}`;
  };
  return html`<ol class="timeline" aria-label="Outbound call stages">
      ${stages.map((s) => {
        const current = s === state;
        return html`<li class=${current ? 'reached current' : 'reached'}>
          ${current ? (s === 'completed' ? 'Done: ' : 'Now: ') : 'Done: '}${LIFECYCLE_LABELS[s]}
        </li>`;
      })}
      ${
        onPath < 0
          ? html`<li class="reached current ended">
              Ended: ${LIFECYCLE_LABELS[state] ?? words(state)}${c.failure_reason ? ` (${c.failure_reason})` : ''}
            </li>`
          : null
      }
    </ol>
    ${
      steps.length > 0
        ? html`<ul>
            ${steps.map((e) => html`<li><${Time} at=${e.at} />: ${stepText(e)}</li>`)}
          </ul>`
        : null
    }`;
}

function StatusForm({ c, user }: { c: CallPageRow; user: PageUser }): VNode {
  return html`<form method="post" action=${`${callPath(c.id)}/status`} class="stack">
    <${CsrfField} user=${user} />
    <div>
      <label for="crm_status">CRM status</label>
      <select id="crm_status" name="crm_status">
        ${CRM_STATUSES.map((s) => html`<option value=${s} selected=${c.crm_status === s}>${words(s)}</option>`)}
      </select>
    </div>
    <div>
      <label for="review_status">Review status</label>
      <select id="review_status" name="review_status">
        <option value="" selected=${c.review_status === null}>Not set</option>
        ${REVIEW_STATUSES.map((s) => html`<option value=${s} selected=${c.review_status === s}>${words(s)}</option>`)}
      </select>
    </div>
    <div><button type="submit">Save statuses</button></div>
  </form>`;
}

function DeletionControls({ c, user }: { c: CallPageRow; user: PageUser }): VNode {
  const id = c.id;
  return html`<div class="actions">
      ${
        c.trashed_at
          ? html`<${PostButton} user=${user} action=${`${callPath(id)}/restore`} label="Restore from trash" />`
          : html`<${PostButton} user=${user} action=${`${callPath(id)}/trash`} label="Move to trash" />`
      }
      ${
        c.pending_deletion_at
          ? html`<${PostButton} user=${user} action=${`${callPath(id)}/cancel-deletion`} label="Cancel the scheduled deletion" />`
          : null
      }
    </div>
    <h3>Schedule deletion</h3>
    <p class="muted">
      The call stays readable until the date, its recording is withheld, and receivers that got it are told
      (call.deletion_scheduled). You can cancel until then.
    </p>
    <form method="post" action=${`${callPath(id)}/schedule-deletion`} class="stack">
      <${CsrfField} user=${user} />
      <div>
        <label for="reason">Reason</label>
        <select id="reason" name="reason" required>
          ${DELETION_REASONS.map(
            (r) =>
              html`<option value=${r} selected=${c.deletion_reason === r}>${DELETION_REASON_LABELS[r]}</option>`,
          )}
        </select>
      </div>
      <div>
        <label for="delete_on">Delete on</label>
        <input type="date" id="delete_on" name="delete_on" aria-describedby="delete-on-hint" />
        <small id="delete-on-hint" class="muted">Leave empty for 30 days from now${c.pending_deletion_at ? ' (or to keep the current date)' : ''}.</small>
      </div>
      <div><button type="submit">${c.pending_deletion_at ? 'Change the scheduled deletion' : 'Schedule deletion'}</button></div>
    </form>
    ${
      user.role === 'owner'
        ? html`<section class="danger-zone" aria-labelledby="erase-heading">
            <h3 id="erase-heading">Erase now</h3>
            <p>Erasing removes the call for good, at once. You will be asked to confirm.</p>
            <a class="button secondary" href=${`${callPath(id)}/erase`}>Erase this call…</a>
          </section>`
        : html`<p class="muted">Only the organization's owner can erase a call at once.</p>`
    }`;
}

/** GET /app/calls/{id}: the call page (app_url of the API and the events); its forms post to actions.ts. */
export function callPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Params: { id: string } }>('/calls/:id', async (req, reply) => {
      const user = requireUser(req);
      const page = await readCallPage(deps.db, scopeOf(user), req.params.id, user.session.userId);
      const c = page.call;
      const setup = c.customer_phone_e164 ? page.setup : null;
      const title = `${c.direction === 'inbound' ? 'Call from' : 'Call to'} ${customerName(c)}`;
      return renderPage(reply, {
        title,
        user,
        nav: 'calls',
        notice: doneNotice(req, DONE),
        body: html`<p><a href="/app/calls">← All calls</a></p>
          <${Facts} c=${c} contact=${page.contact} />
          <h2>Recording</h2>
          <${Recording} deps=${deps} c=${c} />
          <h2>Transcript</h2>
          <${Transcript} c=${c} organizationName=${user.organizationName} />
          <h2>Talk time</h2>
          <${TalkTime} m=${talkMetricsOf(c.talk_metrics)} />
          <h2>Analysis</h2>
          <${Analysis} c=${c} />
          <h2 id="contact">Contact</h2>
          <${CallContactSection} c=${c} contact=${page.contact} user=${user}
            callerName=${c.caller_name ?? (typeof c.analysis?.caller_name === 'string' ? c.analysis.caller_name : null)} />
          <h2>Follow-up e-mail draft</h2>
          <${FollowupDraft} c=${c} />
          <h2>Keyword trackers</h2>
          <${TrackerMatches} matches=${page.trackerMatches} />
          ${
            c.direction === 'outbound' || c.outbound_lifecycle
              ? html`<h2>Outbound call</h2><${Lifecycle} c=${c} steps=${page.steps} />`
              : null
          }
          ${
            setup
              ? html`<h2>Call back</h2>
                  <${CallForm} user=${user} setup=${setup} id="call-back" label="Call back"
                    customer=${c.customer_phone_e164} />`
              : null
          }
          <h2>Statuses</h2>
          <${StatusForm} c=${c} user=${user} />
          <h2>Trash and deletion</h2>
          <${DeletionControls} c=${c} user=${user} />`,
      });
    });
  };
}
