import type { FastifyPluginAsync } from 'fastify';
import { findCallForPage } from '../../../../capture/call-page.ts';
import { setCallStatuses } from '../../../../capture/call-status.ts';
import { cancelDeletion, eraseCall, scheduleDeletion, setTrashed } from '../../../../capture/deletion.ts';
import { callStatusesSchema, scheduleDeletionSchema } from '../../../../capture/schemas.ts';
import type { Deps } from '../../../../deps.ts';
import { CRM_STATUSES, REVIEW_STATUSES } from '../../../../domain/values.ts';
import { badRequest } from '../../../../errors.ts';
import { parseDay } from '../kit/dates.ts';
import { type FormBody, field, formOf } from '../kit/form.ts';
import { checkForm } from '../kit/form-check.ts';
import { requireOwner, requireUser, scopeOf, seeOther } from '../kit/guard.ts';
import { html } from '../kit/html.ts';
import { renderPage } from '../kit/layout.ts';
import { CsrfField, formatTime, words } from '../kit/ui.ts';
import { callPath, customerName } from './detail.ts';

/**
 * The call page's forms: statuses, trash and restore, scheduled deletion, erasure. Each is checked
 * with the schema the service and the operator API use for the same action (capture/schemas.ts),
 * refused in the page's words, and answered with 303 back to the call page (?done=<key>, detail.ts).
 */

/**
 * The schedule form as the operator API's body: the reason, and the date field (a day) as the
 * instant the deletion is due, that day at 00:00 UTC — a value that is no date stays as typed, so
 * the schema refuses it.
 */
function scheduleValues(form: FormBody): Record<string, unknown> {
  const raw = field(form, 'delete_on')?.trim() || undefined;
  const day = raw === undefined ? null : parseDay(raw);
  return {
    reason: field(form, 'reason'),
    pending_deletion_at: raw === undefined ? undefined : (day?.toISOString() ?? raw),
  };
}

/** The call page's actions: POST /app/calls/{id}/… (statuses, trash, deletion) and the erase confirmation. */
export function callActions(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Params: { id: string } }>('/calls/:id/status', async (req, reply) => {
      const user = requireUser(req);
      const form = formOf(req.body);
      const review = field(form, 'review_status') ?? '';
      const next = checkForm(
        callStatusesSchema,
        { crm_status: field(form, 'crm_status'), review_status: review === '' ? null : review },
        {
          crm_status: `Choose a CRM status: ${CRM_STATUSES.map(words).join(', ')}.`,
          review_status: `Choose a review status: ${REVIEW_STATUSES.map(words).join(', ')}, or none.`,
        },
      );
      const { changed } = await setCallStatuses(deps, scopeOf(user), req.params.id, {
        crmStatus: next.crm_status,
        reviewStatus: next.review_status,
      });
      return seeOther(reply, `${callPath(req.params.id)}?done=${changed ? 'statuses' : 'unchanged'}`);
    });

    for (const [action, trashed] of [
      ['trash', true],
      ['restore', false],
    ] as const) {
      app.post<{ Params: { id: string } }>(`/calls/:id/${action}`, async (req, reply) => {
        const user = requireUser(req);
        await setTrashed(deps, scopeOf(user), req.params.id, trashed);
        return seeOther(reply, `${callPath(req.params.id)}?done=${trashed ? 'trashed' : 'restored'}`);
      });
    }

    app.post<{ Params: { id: string } }>('/calls/:id/schedule-deletion', async (req, reply) => {
      const user = requireUser(req);
      const form = formOf(req.body);
      const input = checkForm(scheduleDeletionSchema, scheduleValues(form), {
        reason: 'Choose the reason for the deletion.',
        pending_deletion_at: 'Give the deletion date as a date (YYYY-MM-DD), or leave it empty.',
      });
      const at = input.pending_deletion_at ? new Date(input.pending_deletion_at) : null;
      if (at && at.getTime() <= deps.clock.now().getTime()) {
        throw badRequest('Choose a deletion date after today.', 'delete_on');
      }
      await scheduleDeletion(deps, scopeOf(user), req.params.id, {
        reason: input.reason,
        pendingDeletionAt: at,
      });
      return seeOther(reply, `${callPath(req.params.id)}?done=scheduled`);
    });

    app.post<{ Params: { id: string } }>('/calls/:id/cancel-deletion', async (req, reply) => {
      const user = requireUser(req);
      await cancelDeletion(deps, scopeOf(user), req.params.id);
      return seeOther(reply, `${callPath(req.params.id)}?done=cancelled`);
    });

    app.get<{ Params: { id: string } }>('/calls/:id/erase', async (req, reply) => {
      const user = requireOwner(req, 'erase a call');
      const c = await findCallForPage(deps.db, scopeOf(user), req.params.id);
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
      if (field(formOf(req.body), 'confirm') !== 'yes') {
        throw badRequest('Tick the box to confirm that the call is erased for good.', 'confirm');
      }
      await eraseCall(deps, scopeOf(user), req.params.id);
      return seeOther(reply, '/app/calls?done=erased');
    });
  };
}
