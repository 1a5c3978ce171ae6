import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import {
  deleteTracker,
  listTrackers,
  type TrackerView,
  updateTracker,
} from '../../../../accounts/trackers.ts';
import type { Deps } from '../../../../deps.ts';
import { notFound } from '../../../../errors.ts';
import { field, formOf } from '../kit/form.ts';
import { formError } from '../kit/form-check.ts';
import { type PageUser, requireUser, seeOther } from '../kit/guard.ts';
import { html } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { CsrfField } from '../kit/ui.ts';

import { DONE, Fields, formOfTracker, type TrackerForm, termsOf } from './form.ts';

/** /app/trackers/{id}: edit a tracker (rename, change terms), delete it after a confirmation. */
async function renderEdit(
  reply: FastifyReply,
  user: PageUser,
  t: TrackerView,
  o: { notice?: Notice | null; status?: number; v?: TrackerForm } = {},
): Promise<FastifyReply> {
  return renderPage(reply, {
    title: `Tracker: ${t.name}`,
    user,
    nav: 'trackers',
    notice: o.notice ?? null,
    status: o.status,
    body: html`<form method="post" action=${`/app/trackers/${t.tracker_id}`} class="stack" id="edit-tracker">
        <${CsrfField} user=${user} />
        <${Fields} v=${o.v ?? { name: t.name, terms: t.terms.join('\n') }} idPrefix="edit" />
        <div><button type="submit">Save tracker</button> <a href="/app/trackers">Back to the trackers</a></div>
      </form>
      <section class="danger-zone" aria-labelledby="delete-title">
        <h2 id="delete-title">Delete</h2>
        <p>Calls processed after the deletion are no longer matched against these terms. Events already sent keep their matches.</p>
        <form method="post" action=${`/app/trackers/${t.tracker_id}/delete`} class="stack" data-confirm="Delete this tracker?">
          <${CsrfField} user=${user} />
          <label class="check"><input type="checkbox" name="confirm" value="yes" required /> Yes, delete the tracker "${t.name}".</label>
          <div><button type="submit" class="danger">Delete tracker</button></div>
        </form>
      </section>`,
  });
}

async function findTracker(deps: Deps, user: PageUser, id: string): Promise<TrackerView> {
  const t = (await listTrackers(deps.db, user.session.organizationId)).find((x) => x.tracker_id === id);
  if (!t) throw notFound(`No tracker ${id} in your organization.`);
  return t;
}

type IdParams = { Params: { id: string } };

export function trackerPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get<IdParams>('/trackers/:id', async (req, reply) => {
      const user = requireUser(req);
      return renderEdit(reply, user, await findTracker(deps, user, req.params.id), {
        notice: doneNotice(req, DONE),
      });
    });

    app.post<IdParams>('/trackers/:id', async (req, reply) => {
      const user = requireUser(req);
      const t = await findTracker(deps, user, req.params.id);
      const v = formOfTracker(req.body);
      try {
        await updateTracker(deps.db, {
          organizationId: user.session.organizationId,
          trackerId: t.tracker_id,
          name: v.name,
          terms: termsOf(v.terms),
        });
      } catch (err) {
        return renderEdit(reply, user, t, { v, ...formError(err) });
      }
      return seeOther(reply, `/app/trackers/${t.tracker_id}?done=saved`);
    });

    app.post<IdParams>('/trackers/:id/delete', async (req, reply) => {
      const user = requireUser(req);
      const t = await findTracker(deps, user, req.params.id);
      if (field(formOf(req.body), 'confirm') !== 'yes') {
        return renderEdit(reply, user, t, {
          status: 400,
          notice: { kind: 'error', text: 'Tick the box to confirm the deletion.' },
        });
      }
      await deleteTracker(deps.db, user.session.organizationId, t.tracker_id);
      return seeOther(reply, '/app/trackers?done=deleted');
    });
  };
}
