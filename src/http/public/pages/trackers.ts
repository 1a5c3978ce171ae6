import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import {
  createTracker,
  deleteTracker,
  listTrackers,
  TRACKER_MAX_TERMS,
  TRACKER_NAME_MAX_LENGTH,
  type TrackerView,
  updateTracker,
} from '../../../accounts/trackers.ts';
import type { Deps } from '../../../deps.ts';
import { notFound } from '../../../errors.ts';
import { field, formOf } from './form.ts';
import { type PageUser, requireUser, seeOther } from './guard.ts';
import { html, type VNode } from './html.ts';
import { type Notice, renderPage } from './layout.ts';
import { doneNotice, formError } from './settings/shared.ts';
import { CsrfField, Time } from './ui.ts';

/**
 * /app/trackers: keyword trackers — create, edit (rename, change terms), delete after a confirmation
 * page. Processed transcripts are matched against the terms; a match emits call.tracker.matched.
 */
const DONE: Record<string, string> = {
  created: 'Tracker created. Calls processed from now on are matched against its terms.',
  saved: 'Tracker saved. Calls processed from now on are matched against the new terms.',
  deleted: 'Tracker deleted. Earlier matches stay in the events already sent.',
};

interface TrackerForm {
  name: string;
  terms: string;
}

/** Terms as typed: one per line or separated by commas. */
export const termsOf = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((t) => t.trim())
    .filter(Boolean);

function Fields({ v, idPrefix }: { v: TrackerForm; idPrefix: string }): VNode {
  return html`<div><label for=${`${idPrefix}-name`}>Name</label>
      <input type="text" id=${`${idPrefix}-name`} name="name" required maxlength=${TRACKER_NAME_MAX_LENGTH} value=${v.name} /></div>
    <div><label for=${`${idPrefix}-terms`}>Terms</label>
      <textarea id=${`${idPrefix}-terms`} name="terms" rows="4" required aria-describedby=${`${idPrefix}-terms-hint`}>${v.terms}</textarea>
      <p class="muted" id=${`${idPrefix}-terms-hint`}>One per line or separated by commas; up to ${TRACKER_MAX_TERMS}. Matching ignores case.</p></div>`;
}

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

const formOfTracker = (body: unknown): TrackerForm => {
  const form = formOf(body);
  return { name: field(form, 'name') ?? '', terms: field(form, 'terms') ?? '' };
};

type IdParams = { Params: { id: string } };

export function trackerPages(deps: Deps): FastifyPluginAsync {
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
