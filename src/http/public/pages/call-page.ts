import type { FastifyPluginAsync } from 'fastify';
import { setCallStatuses } from '../../../capture/call-status.ts';
import { cancelDeletion, eraseCall, scheduleDeletion, setTrashed } from '../../../capture/deletion.ts';
import { readTranscript } from '../../../capture/transcript-text.ts';
import type { Deps } from '../../../deps.ts';
import { canonicalAnalysis, type ProposalItem } from '../../../domain/analysis.ts';
import { followupEmailView } from '../../../domain/call-view.ts';
import { recordingAvailability } from '../../../domain/recording-availability.ts';
import { CRM_STATUSES, type CrmStatus, REVIEW_STATUSES, type ReviewStatus } from '../../../domain/values.ts';
import { badRequest } from '../../../errors.ts';
import { mintRecordingLink, REST_LINK_TTL_MS } from '../../../recordings/links.ts';
import { DELETION_REASONS, type DeletionReason } from '../../../webhooks/outbox/event-data/deletion.ts';
import {
  type CallPageEvent,
  type CallPageRow,
  callPageEvents,
  findCallForPage,
  recordingFactsOf,
} from './call-query.ts';
import { field, formOf } from './kit/form.ts';
import { type PageUser, requireOwner, requireUser, seeOther } from './kit/guard.ts';
import { html, type VNode } from './kit/html.ts';
import { renderPage } from './kit/layout.ts';
import { doneNotice } from './kit/notices.ts';
import { CopyButton, CsrfField, formatDuration, formatTime, PostButton, Time, words } from './kit/ui.ts';
import { CallForm, loadCallSetup } from './outbound.ts';

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
const DONE: Record<string, string> = {
  trashed: 'The call is in the trash. Its recording is withheld until you restore it.',
  restored: 'The call was restored from the trash.',
  scheduled: 'The deletion is scheduled. You can cancel it until the date shown.',
  cancelled: 'The scheduled deletion was cancelled.',
  statuses: 'The statuses were saved.',
  unchanged: 'Nothing changed: the statuses were already set that way.',
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

const callPath = (id: string) => `/app/calls/${id}`;

function customerName(c: CallPageRow): string {
  const fromAnalysis =
    c.analysis && typeof c.analysis.caller_name === 'string' ? c.analysis.caller_name : null;
  return c.caller_name ?? fromAnalysis ?? 'Unknown caller';
}

function Facts({ c }: { c: CallPageRow }): VNode {
  const inbound = c.direction === 'inbound';
  return html`<dl class="facts">
    <dt>${inbound ? 'Caller' : 'Customer'}</dt>
    <dd>
      ${customerName(c)}<br />
      ${
        c.customer_phone_e164
          ? html`<span>${c.customer_phone_national ?? c.customer_phone_e164}</span>
              <span class="muted"> (${c.customer_phone_e164})</span>`
          : html`<span class="muted">${c.caller_phone || 'No number given'}</span>`
      }
    </dd>
    <dt>When</dt>
    <dd><${Time} at=${c.created_at} /></dd>
    <dt>Direction</dt>
    <dd>${inbound ? 'Inbound (the customer called)' : 'Outbound (we called the customer)'}</dd>
    <dt>${inbound ? 'Came in on' : 'Went out from'}</dt>
    <dd>${c.company_phone_e164 ?? 'Not recorded'}</dd>
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
    return html`<audio controls preload="metadata" src=${src} aria-label="Call recording">
        <a href=${src}>Download the recording</a>
      </audio>
      <p class="muted">
        <a href=${src} download>Download the recording (MP3)</a>. The link on this page works for 15 minutes; reload
        the page for a fresh one.
      </p>`;
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

function Transcript({ c }: { c: CallPageRow }): VNode {
  if (!c.transcript_original) {
    return html`<p class="muted">
      ${c.processing_state === 'queued' ? 'The transcript is being processed.' : 'No transcript for this call.'}
    </p>`;
  }
  const { turns } = readTranscript(c.transcript_original);
  return html`<div class="transcript">
    ${turns.map(
      (t) => html`<p>${t.speaker ? html`<span class="speaker">${t.speaker}:</span> ` : null}${t.text}</p>`,
    )}
  </div>`;
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
  const rows = ANALYSIS_LABELS.map(([k, label]) => [label, analysisValue(k, a[k])] as const).filter(
    ([, v]) => v !== null,
  );
  const items: ProposalItem[] = Array.isArray(a.proposal_items) ? a.proposal_items : [];
  return html`${
    rows.length === 0
      ? html`<p class="muted">The call contained none of the details the analysis looks for.</p>`
      : html`<dl class="facts">${rows.map(([label, v]) => html`<dt>${label}</dt><dd>${v}</dd>`)}</dl>`
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

function TrackerMatches({ events }: { events: CallPageEvent[] }): VNode {
  const matches = events
    .filter((e) => e.event_type === 'call.tracker.matched')
    .flatMap((e) => (Array.isArray(e.data.matches) ? e.data.matches : [])) as {
    name?: unknown;
    matched_terms?: unknown;
    excerpts?: unknown;
  }[];
  if (matches.length === 0) return html`<p class="muted">No keyword tracker matched this call.</p>`;
  const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s) => typeof s === 'string') : []);
  return html`<ul>
    ${matches.map(
      (m) => html`<li>
        <strong>${String(m.name ?? 'Tracker')}</strong>: ${list(m.matched_terms).join(', ')}
        <ul>
          ${list(m.excerpts).map((x) => html`<li><q>${x}</q></li>`)}
        </ul>
      </li>`,
    )}
  </ul>`;
}

/** The outbound lifecycle as a timeline: the stages reached, the current or final state, and the dated events. */
function Lifecycle({ c, events }: { c: CallPageRow; events: CallPageEvent[] }): VNode {
  const state = c.outbound_lifecycle;
  if (!state) return html`<p class="muted">No lifecycle was reported for this call.</p>`;
  const onPath = HAPPY_PATH.indexOf(state);
  const reached = onPath >= 0 ? onPath : (REACHED_BEFORE[state] ?? -1);
  const stages = HAPPY_PATH.slice(0, reached + 1);
  const dated = events.filter((e) =>
    ['call.outbound.attempted', 'call.failed', 'call.outbound.lifecycle_repaired'].includes(e.event_type),
  );
  const eventText = (e: CallPageEvent): string => {
    if (e.event_type === 'call.outbound.lifecycle_repaired') {
      return 'Corrected to completed: a late carrier report showed the call connected';
    }
    if (e.event_type === 'call.failed') return 'Reported as failed';
    return `Attempt finished: ${LIFECYCLE_LABELS[String(e.data.outbound_lifecycle)] ?? 'reported'}`;
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
          ? html`<li class="reached current">
              Ended: ${LIFECYCLE_LABELS[state] ?? words(state)}${c.failure_reason ? ` (${c.failure_reason})` : ''}
            </li>`
          : null
      }
    </ol>
    ${
      dated.length > 0
        ? html`<ul>
            ${dated.map((e) => html`<li><${Time} at=${e.created_at} />: ${eventText(e)}</li>`)}
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

/** The date field of the schedule form → the instant the deletion is due (that day, 00:00 UTC). */
function deletionDate(raw: string | undefined, now: Date): Date | null {
  if (!raw) return null;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || Number.isNaN(Date.parse(`${raw}T00:00:00Z`))) {
    throw badRequest('Give the deletion date as a date (YYYY-MM-DD), or leave it empty.', 'delete_on');
  }
  const at = new Date(`${raw}T00:00:00Z`);
  if (at.getTime() <= now.getTime()) throw badRequest('Choose a deletion date after today.', 'delete_on');
  return at;
}

/** The call page at app_url (/app/calls/{id}) and its actions. */
export function callPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get<{ Params: { id: string } }>('/calls/:id', async (req, reply) => {
      const user = requireUser(req);
      const c = await findCallForPage(deps.db, user.session.organizationId, req.params.id);
      const events = await callPageEvents(deps.db, user.session.organizationId, c.id);
      const setup = c.customer_phone_e164 ? await loadCallSetup(deps.db, user) : null;
      const title = `${c.direction === 'inbound' ? 'Call from' : 'Call to'} ${customerName(c)}`;
      return renderPage(reply, {
        title,
        user,
        nav: 'calls',
        notice: doneNotice(req, DONE),
        body: html`<p><a href="/app/calls">← All calls</a></p>
          <${Facts} c=${c} />
          <h2>Recording</h2>
          <${Recording} deps=${deps} c=${c} />
          <h2>Analysis</h2>
          <${Analysis} c=${c} />
          <h2>Follow-up e-mail draft</h2>
          <${FollowupDraft} c=${c} />
          <h2>Keyword trackers</h2>
          <${TrackerMatches} events=${events} />
          ${
            c.direction === 'outbound' || c.outbound_lifecycle
              ? html`<h2>Outbound call</h2><${Lifecycle} c=${c} events=${events} />`
              : null
          }
          ${
            setup
              ? html`<h2>Call back</h2>
                  <${CallForm} user=${user} setup=${setup} id="call-back" label="Call back"
                    customer=${c.customer_phone_e164} />`
              : null
          }
          <h2>Transcript</h2>
          <${Transcript} c=${c} />
          <h2>Statuses</h2>
          <${StatusForm} c=${c} user=${user} />
          <h2>Trash and deletion</h2>
          <${DeletionControls} c=${c} user=${user} />`,
      });
    });

    app.post<{ Params: { id: string } }>('/calls/:id/status', async (req, reply) => {
      const user = requireUser(req);
      const c = await findCallForPage(deps.db, user.session.organizationId, req.params.id);
      const form = formOf(req.body);
      const crm = field(form, 'crm_status');
      const review = field(form, 'review_status') ?? '';
      if (!crm || !(CRM_STATUSES as readonly string[]).includes(crm)) {
        throw badRequest(`Choose a CRM status: ${CRM_STATUSES.map(words).join(', ')}.`, 'crm_status');
      }
      if (review !== '' && !(REVIEW_STATUSES as readonly string[]).includes(review)) {
        throw badRequest(
          `Choose a review status: ${REVIEW_STATUSES.map(words).join(', ')}, or none.`,
          'review_status',
        );
      }
      const { changed } = await setCallStatuses(deps, c.id, {
        crmStatus: crm as CrmStatus,
        reviewStatus: review === '' ? null : (review as ReviewStatus),
      });
      return seeOther(reply, `${callPath(c.id)}?done=${changed ? 'statuses' : 'unchanged'}`);
    });

    for (const [action, trashed] of [
      ['trash', true],
      ['restore', false],
    ] as const) {
      app.post<{ Params: { id: string } }>(`/calls/:id/${action}`, async (req, reply) => {
        const user = requireUser(req);
        const c = await findCallForPage(deps.db, user.session.organizationId, req.params.id);
        await setTrashed(deps, c.id, trashed);
        return seeOther(reply, `${callPath(c.id)}?done=${trashed ? 'trashed' : 'restored'}`);
      });
    }

    app.post<{ Params: { id: string } }>('/calls/:id/schedule-deletion', async (req, reply) => {
      const user = requireUser(req);
      const c = await findCallForPage(deps.db, user.session.organizationId, req.params.id);
      const form = formOf(req.body);
      const reason = field(form, 'reason');
      if (!reason || !(DELETION_REASONS as readonly string[]).includes(reason)) {
        throw badRequest('Choose the reason for the deletion.', 'reason');
      }
      const at = deletionDate(field(form, 'delete_on')?.trim() || undefined, deps.clock.now());
      await scheduleDeletion(deps, c.id, { reason: reason as DeletionReason, pendingDeletionAt: at });
      return seeOther(reply, `${callPath(c.id)}?done=scheduled`);
    });

    app.post<{ Params: { id: string } }>('/calls/:id/cancel-deletion', async (req, reply) => {
      const user = requireUser(req);
      const c = await findCallForPage(deps.db, user.session.organizationId, req.params.id);
      await cancelDeletion(deps, c.id);
      return seeOther(reply, `${callPath(c.id)}?done=cancelled`);
    });

    app.get<{ Params: { id: string } }>('/calls/:id/erase', async (req, reply) => {
      const user = requireOwner(req, 'erase a call');
      const c = await findCallForPage(deps.db, user.session.organizationId, req.params.id);
      return renderPage(reply, {
        title: 'Erase this call?',
        user,
        nav: 'calls',
        body: html`<p>
            You are about to erase the ${c.direction} call ${c.direction === 'inbound' ? 'from' : 'to'}
            <strong>${customerName(c)}</strong> of ${formatTime(c.created_at)}. This happens at once and cannot be undone.
          </p>
          <p>What is lost for good:</p>
          <ul>
            <li>the recording (the audio file is deleted)${c.recording_state === 'available' ? '' : ' — this call has none stored'};</li>
            <li>the transcript, the analysis and the follow-up e-mail draft;</li>
            <li>the caller's name and phone numbers on this call;</li>
            <li>webhook deliveries of this call not yet sent are cancelled, and the stored event bodies are emptied;</li>
            <li>the call disappears from this app and from the API (it answers "not found").</li>
          </ul>
          <p>
            Receivers that already got the recording are told it was deleted (call.recording.deleted). Copies they
            made are theirs to delete.
          </p>
          <form method="post" action=${`${callPath(c.id)}/erase`} class="stack" data-confirm="Erase this call for good?">
            <${CsrfField} user=${user} />
            <label class="check">
              <input type="checkbox" name="confirm" value="yes" required />
              I understand that the call, its recording and its transcript are erased for good.
            </label>
            <div class="actions">
              <button type="submit" class="danger">Erase the call</button>
              <a href=${callPath(c.id)}>Keep it (back to the call)</a>
            </div>
          </form>`,
      });
    });

    app.post<{ Params: { id: string } }>('/calls/:id/erase', async (req, reply) => {
      const user = requireOwner(req, 'erase a call');
      const c = await findCallForPage(deps.db, user.session.organizationId, req.params.id);
      if (field(formOf(req.body), 'confirm') !== 'yes') {
        throw badRequest('Tick the box to confirm that the call is erased for good.', 'confirm');
      }
      await eraseCall(deps, c.id);
      return seeOther(reply, '/app/calls?done=erased');
    });
  };
}
