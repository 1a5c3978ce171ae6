import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { createTracker, listTrackers, type TrackerView } from '../../../../accounts/trackers.ts';
import type { Deps } from '../../../../deps.ts';
import { formError } from '../kit/form-check.ts';
import { type PageUser, requireUser, seeOther } from '../kit/guard.ts';
import { html } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { CsrfField, Time } from '../kit/ui.ts';

import { DONE, Fields, formOfTracker, type TrackerForm, termsOf } from './form.ts';

/** /app/trackers: the list and the new-tracker form (POST /app/trackers). */
async function renderList(
  deps: Deps,
  reply: FastifyReply,
  user: PageUser,
  o: { notice?: Notice | null; status?: number; v?: TrackerForm } = {},
): Promise<FastifyReply> {
  const trackers = await listTrackers(deps.db, user.session.organizationId);
  return renderPage(reply, {
    title: 'Keyword trackers',
    user,
    nav: 'trackers',
    notice: o.notice ?? null,
    status: o.status,
    body: html`<p>When a processed call mentions one of a tracker's terms, receivers get <code>call.tracker.matched</code>${' with the terms and excerpts.'}</p>
      ${
        trackers.length === 0
          ? html`<p class="muted">No trackers yet.</p>`
          : html`<table class="trackers">
              <thead><tr><th scope="col">Name</th><th scope="col">Terms</th><th scope="col">Created</th></tr></thead>
              <tbody>
                ${trackers.map(
                  (t: TrackerView) => html`<tr data-tracker-id=${t.tracker_id}>
                    <td><a href=${`/app/trackers/${t.tracker_id}`}>${t.name}</a></td>
                    <td>${t.terms.join(', ')}</td>
                    <td><${Time} at=${t.created_at} /></td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }
      <h2>New tracker</h2>
      <form method="post" action="/app/trackers" class="stack" id="create-tracker">
        <${CsrfField} user=${user} />
        <${Fields} v=${o.v ?? { name: '', terms: '' }} idPrefix="new" />
        <div><button type="submit">Create tracker</button></div>
      </form>`,
  });
}

export function trackerListPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/trackers', async (req, reply) =>
      renderList(deps, reply, requireUser(req), { notice: doneNotice(req, DONE) }),
    );

    app.post('/trackers', async (req, reply) => {
      const user = requireUser(req);
      const v = formOfTracker(req.body);
      try {
        await deps.db.transaction((tx) =>
          createTracker(tx, {
            organizationId: user.session.organizationId,
            name: v.name,
            terms: termsOf(v.terms),
            now: deps.clock.now(),
          }),
        );
      } catch (err) {
        return renderList(deps, reply, user, { v, ...formError(err) });
      }
      return seeOther(reply, '/app/trackers?done=created');
    });
  };
}
