import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { CONTACT_CALLS_LIMIT, type ContactCall, callsOfNumber } from '../../../../capture/contact-calls.ts';
import { type CallSetup, loadCallSetup } from '../../../../capture/telephony/call-setup.ts';
import { type ContactView, getContact, updateContact } from '../../../../contacts/contacts.ts';
import { EDITABLE_CONTACT_FIELDS } from '../../../../contacts/diff.ts';
import { updateContactSchema } from '../../../../contacts/schemas.ts';
import type { Deps } from '../../../../deps.ts';
import { notFound, parseInput } from '../../../../errors.ts';
import { CallForm } from '../calls/call-form.ts';
import { field, formOf } from '../kit/form.ts';
import { formError } from '../kit/form-check.ts';
import { type PageUser, requireUser, scopeOf, seeOther } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { doneNotice } from '../kit/notices.ts';
import { CsrfField, formatDuration, Time, words } from '../kit/ui.ts';
import { fullName } from './list.ts';

/**
 * /app/contacts/{id}: a contact's page, its call history (calls with its E.164 number), its Call form
 * and the edit form.
 * A save changes only what differs and emits contact.updated with exactly those keys (the same
 * service as PATCH /admin/v1/contacts/{id}); a save that changes nothing emits nothing.
 */
const DONE: Record<string, string> = {
  created: 'Contact created. Subscribed receivers get a contact.created event.',
  saved: 'Contact saved. Subscribed receivers get a contact.updated event with the changed fields.',
  unchanged: 'Nothing changed, so no event was sent.',
};

type ContactForm = Record<
  'first_name' | 'last_name' | 'email' | 'phone' | 'company' | 'notes' | 'tags',
  string
>;

const formValues = (c: ContactView): ContactForm => ({
  first_name: c.first_name ?? '',
  last_name: c.last_name ?? '',
  email: c.email ?? '',
  phone: c.phone,
  company: c.company ?? '',
  notes: c.notes ?? '',
  tags: c.tags.join(', '),
});

function EditForm({ user, c, v }: { user: PageUser; c: ContactView; v: ContactForm }): VNode {
  const text = (name: keyof ContactForm, label: string, type = 'text', extra: Record<string, unknown> = {}) =>
    html`<div><label for=${`c-${name}`}>${label}</label>
      <input type=${type} id=${`c-${name}`} name=${name} value=${v[name]} ...${extra} /></div>`;
  return html`<form method="post" action=${`/app/contacts/${c.contact_id}`} class="stack" id="edit-contact">
    <${CsrfField} user=${user} />
    ${text('first_name', 'First name', 'text', { maxlength: 100, autocomplete: 'off' })}
    ${text('last_name', 'Last name', 'text', { maxlength: 100, autocomplete: 'off' })}
    ${text('phone', 'Phone', 'tel', { required: true, maxlength: 64, autocomplete: 'off' })}
    ${text('email', 'E-mail', 'email', { maxlength: 254, autocomplete: 'off' })}
    ${text('company', 'Company', 'text', { maxlength: 200, autocomplete: 'off' })}
    <div><label for="c-tags">Tags</label>
      <input type="text" id="c-tags" name="tags" value=${v.tags} aria-describedby="c-tags-hint" />
      <p class="muted" id="c-tags-hint">Separated by commas.</p></div>
    <div><label for="c-notes">Notes</label><textarea id="c-notes" name="notes" rows="5" maxlength="10000">${v.notes}</textarea></div>
    <div><button type="submit">Save contact</button> <a href="/app/contacts">Back to the contacts</a></div>
  </form>`;
}

/** The contact's calls: the organization's calls with the contact's E.164 number, newest first. */
function CallHistory({
  c,
  calls,
}: {
  c: ContactView;
  calls: { items: ContactCall[]; has_more: boolean };
}): VNode {
  if (!c.phone_e164) {
    return html`<p class="muted">The contact's phone number is not a usable number, so no call can be tied to it.</p>`;
  }
  if (calls.items.length === 0) return html`<p class="muted">No calls with ${c.phone_e164} yet.</p>`;
  return html`<table class="contact-calls" id="contact-calls">
      <caption class="sr-only">Calls with ${c.phone_e164}, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Direction</th><th scope="col">About</th>
        <th scope="col">Duration</th><th scope="col">CRM status</th><th scope="col">Review</th></tr></thead>
      <tbody>
        ${calls.items.map(
          (k) => html`<tr data-call-id=${k.id}>
            <td data-label="When"><a href=${`/app/calls/${k.id}`}><${Time} at=${k.created_at} /></a></td>
            <td data-label="Direction">${k.direction === 'inbound' ? 'Inbound' : 'Outbound'}</td>
            <td data-label="About">${k.subject ?? html`<span class="muted">No subject</span>`}${
              k.trashed ? html` <span class="badge bad">In the trash</span>` : null
            }</td>
            <td data-label="Duration">${formatDuration(k.duration)}</td>
            <td data-label="CRM status">${words(k.crm_status)}</td>
            <td data-label="Review">${k.review_status ? words(k.review_status) : 'Not set'}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${
      calls.has_more
        ? html`<p class="muted">The ${CONTACT_CALLS_LIMIT} newest calls are shown; the calls list has them all.</p>`
        : null
    }`;
}

const callsOf = (deps: Deps, user: PageUser, c: ContactView) =>
  c.phone_e164
    ? callsOfNumber(deps.db, scopeOf(user), c.phone_e164)
    : Promise.resolve({ items: [], has_more: false });

async function renderEdit(
  reply: FastifyReply,
  user: PageUser,
  c: ContactView,
  setup: CallSetup,
  calls: { items: ContactCall[]; has_more: boolean },
  o: { v?: ContactForm; notice?: Notice | null; status?: number } = {},
): Promise<FastifyReply> {
  return renderPage(reply, {
    title: fullName(c) || c.phone,
    user,
    nav: 'contacts',
    notice: o.notice ?? null,
    status: o.status,
    body: html`<dl class="facts">
        <dt>Phone (E.164)</dt><dd>${c.phone_e164 ?? html`<span class="muted">not a usable number</span>`}</dd>
        <dt>Created</dt><dd><${Time} at=${c.created_at} /></dd>
        <dt>Updated</dt><dd><${Time} at=${c.updated_at} /></dd>
      </dl>
      <h2>Calls</h2>
      <${CallHistory} c=${c} calls=${calls} />
      ${
        c.phone_e164
          ? html`<h2>Call</h2>
              <${CallForm} user=${user} setup=${setup} id="call-contact" label="Call" customer=${c.phone_e164} />`
          : null
      }
      <h2>Edit</h2>
      <${EditForm} user=${user} c=${c} v=${o.v ?? formValues(c)} />`,
  });
}

type IdParams = { Params: { id: string } };

export function contactPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get<IdParams>('/contacts/:id', async (req, reply) => {
      const user = requireUser(req);
      const c = await getContact(deps.db, scopeOf(user), req.params.id);
      if (!c) throw notFound(`No contact ${req.params.id} in your organization.`);
      const [setup, calls] = await Promise.all([
        loadCallSetup(deps.db, scopeOf(user), user.session.userId),
        callsOf(deps, user, c),
      ]);
      return renderEdit(reply, user, c, setup, calls, {
        notice: doneNotice(req, DONE),
      });
    });

    app.post<IdParams>('/contacts/:id', async (req, reply) => {
      const user = requireUser(req);
      const before = await getContact(deps.db, scopeOf(user), req.params.id);
      if (!before) throw notFound(`No contact ${req.params.id} in your organization.`);
      const form = formOf(req.body);
      const v: ContactForm = {
        first_name: field(form, 'first_name') ?? '',
        last_name: field(form, 'last_name') ?? '',
        email: field(form, 'email') ?? '',
        phone: field(form, 'phone') ?? '',
        company: field(form, 'company') ?? '',
        notes: field(form, 'notes') ?? '',
        tags: field(form, 'tags') ?? '',
      };
      try {
        const patch = parseInput(updateContactSchema, {
          ...v,
          tags: v.tags
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
        });
        const after = await updateContact(deps, scopeOf(user), before.contact_id, patch);
        const changed = EDITABLE_CONTACT_FIELDS.some(
          (f) => JSON.stringify(after[f]) !== JSON.stringify(before[f]),
        );
        return seeOther(reply, `/app/contacts/${before.contact_id}?done=${changed ? 'saved' : 'unchanged'}`);
      } catch (err) {
        return renderEdit(
          reply,
          user,
          before,
          await loadCallSetup(deps.db, scopeOf(user), user.session.userId),
          await callsOf(deps, user, before),
          { v, ...formError(err) },
        );
      }
    });
  };
}
