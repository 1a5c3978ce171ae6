import type { FastifyPluginAsync } from 'fastify';
import { setStatusesOfCalls } from '../../../../capture/call-status.ts';
import { callStatusesBulkSchema } from '../../../../capture/schemas.ts';
import type { Deps } from '../../../../deps.ts';
import { BULK_MAX } from '../../../../domain/inbox.ts';
import { CRM_STATUSES, REVIEW_STATUSES } from '../../../../domain/values.ts';
import { fieldError } from '../kit/field-errors.ts';
import { field, fields, formOf } from '../kit/form.ts';
import { checkForm } from '../kit/form-check.ts';
import { requireUser, scopeOf, seeOther } from '../kit/guard.ts';
import { safeNext } from '../kit/next-path.ts';
import { words } from '../kit/ui.ts';
import { renderInbox } from './list.ts';

/**
 * POST /app/calls/bulk: the inbox's quick action on one row and its bulk action on the selected
 * rows, and the board's moves — one form shape: `ids` (repeated), `review_status` and `crm_status`
 * (empty: keep), `back` (the inbox or board address to return to). Checked with the service's schema,
 * applied by setStatusesOfCalls in one transaction, scoped to the user's organization: an id of another
 * organization changes nothing and is answered like the others. 303 back to `back` with ?done=.
 */

/** Where to come back: an address of the inbox or the board, else the inbox. */
function backOf(raw: string | undefined): { path: string; hash: string } {
  const [path = '', hash = ''] = (raw ?? '').split('#', 2);
  const safe = safeNext(path);
  const ok = safe === '/app/calls' || safe.startsWith('/app/calls?') || safe.startsWith('/app/calls/board');
  return { path: ok ? safe : '/app/calls', hash: /^card-[0-9a-f-]{36}$/.test(hash) ? `#${hash}` : '' };
}

const withDone = (path: string, done: string): string => {
  const i = path.indexOf('?');
  const q = new URLSearchParams(i < 0 ? '' : path.slice(i + 1));
  q.set('done', done);
  return `${i < 0 ? path : path.slice(0, i)}?${q}`;
};

export function bulkStatusAction(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.post('/calls/bulk', async (req, reply) => {
      const user = requireUser(req);
      const form = formOf(req.body);
      const opt = (name: string) => {
        const v = field(form, name)?.trim();
        return v ? v : undefined;
      };
      const values = {
        ids: fields(form, 'ids'),
        crm_status: opt('crm_status'),
        review_status: opt('review_status'),
      };
      let input: ReturnType<typeof callStatusesBulkSchema.parse>;
      try {
        input = checkForm(callStatusesBulkSchema, values, {
          ids: `Select the calls to change (tick their boxes), at most ${BULK_MAX} at a time.`,
          crm_status: `Choose a CRM status (${CRM_STATUSES.map(words).join(', ')}) or a review status to set.`,
          review_status: `Choose a review status: ${REVIEW_STATUSES.map(words).join(', ')}.`,
        });
      } catch (err) {
        // The inbox's bulk form: the inbox again, at the address it came from, the error on its
        // field (the rows' boxes or a status) with the focus there, what was chosen kept. A quick
        // form or a board move cannot be refused but by a hand-made post: the error page.
        const back = backOf(field(form, 'back'));
        if (field(form, 'source') !== 'bulk' || back.path.startsWith('/app/calls/board')) throw err;
        const e = fieldError(err);
        const known = (v: string | undefined, set: readonly string[]) =>
          v !== undefined && set.includes(v) ? v : undefined;
        return renderInbox(deps, reply, user, back.path, {
          status: e.status,
          notice: e.notice,
          bulk: {
            err: e.err,
            ids: new Set(values.ids),
            crm: known(values.crm_status, CRM_STATUSES),
            review: known(values.review_status, REVIEW_STATUSES),
          },
        });
      }
      const { changed } = await setStatusesOfCalls(deps, scopeOf(user), input.ids, {
        crmStatus: input.crm_status,
        reviewStatus: input.review_status,
      });
      const back = backOf(field(form, 'back'));
      return seeOther(reply, `${withDone(back.path, changed > 0 ? 'changed' : 'unchanged')}${back.hash}`);
    });
  };
}
