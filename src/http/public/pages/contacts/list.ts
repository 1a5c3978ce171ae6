import type { FastifyPluginAsync } from 'fastify';
import { loadCallSetup, setupReady } from '../../../../capture/telephony/call-setup.ts';
import { type ContactView, listContacts } from '../../../../contacts/contacts.ts';
import type { Deps } from '../../../../deps.ts';
import { requireUser, scopeOf } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { renderPage } from '../kit/layout.ts';
import { Time } from '../kit/ui.ts';

/** /app/contacts: the organization's contacts (search, pages), each with a Call link when calling is set up. */
const PAGE_SIZE = 25;

export const fullName = (c: ContactView) => [c.first_name, c.last_name].filter(Boolean).join(' ');

function ContactList(p: {
  items: ContactView[];
  q: string;
  page: number;
  hasMore: boolean;
  canCall: boolean;
}): VNode {
  const link = (page: number) =>
    `/app/contacts?${new URLSearchParams({ ...(p.q ? { q: p.q } : {}), page: String(page) })}`;
  return html`<p><a class="button" href="/app/contacts/new">New contact</a></p>
    <form method="get" action="/app/contacts" class="filters" role="search">
      <div class="search"><label for="contact-q">Search</label>
        <input type="search" id="contact-q" name="q" value=${p.q} placeholder="name, company, e-mail or phone" /></div>
      <div><button type="submit" class="secondary">Search</button></div>
    </form>
    ${
      p.items.length === 0
        ? html`<p class="muted">${p.q ? 'No contact matches.' : 'No contacts yet.'}</p>`
        : html`<table class="contacts">
            <thead><tr><th scope="col">Name</th><th scope="col">Phone</th><th scope="col">E-mail</th>
              <th scope="col">Company</th><th scope="col">Tags</th><th scope="col">Updated</th></tr></thead>
            <tbody>
              ${p.items.map(
                (c) => html`<tr data-contact-id=${c.contact_id}>
                  <td><a href=${`/app/contacts/${c.contact_id}`}>${fullName(c) || c.phone}</a></td>
                  <td>${c.phone_e164 ?? c.phone}${
                    p.canCall && c.phone_e164
                      ? html` <a href=${`/app/calls/new?contact=${c.contact_id}`}
                          aria-label=${`Call ${fullName(c) || c.phone_e164}`}>Call</a>`
                      : null
                  }</td>
                  <td>${c.email ?? ''}</td>
                  <td>${c.company ?? ''}</td>
                  <td>${c.tags.join(', ')}</td>
                  <td><${Time} at=${c.updated_at} /></td>
                </tr>`,
              )}
            </tbody>
          </table>`
    }
    <nav class="pager" aria-label="Pages">
      ${p.page > 1 ? html`<a href=${link(p.page - 1)}>Previous page</a>` : html`<span></span>`}
      ${p.hasMore ? html`<a href=${link(p.page + 1)}>Next page</a>` : html`<span></span>`}
    </nav>`;
}

export function contactListPage(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/contacts', async (req, reply) => {
      const user = requireUser(req);
      const query = req.query as Record<string, unknown>;
      const q = typeof query.q === 'string' ? query.q.replaceAll('\u0000', '').slice(0, 100) : '';
      const page =
        typeof query.page === 'string' && /^[1-9]\d{0,5}$/.test(query.page) ? Number(query.page) : 1;
      const r = await listContacts(deps.db, scopeOf(user), {
        search: q,
        limit: PAGE_SIZE,
        offset: (page - 1) * PAGE_SIZE,
      });
      return renderPage(reply, {
        title: 'Contacts',
        user,
        nav: 'contacts',
        body: html`<${ContactList} items=${r.items} q=${q} page=${page} hasMore=${r.has_more}
          canCall=${setupReady(await loadCallSetup(deps.db, scopeOf(user), user.session.userId))} />`,
      });
    });
  };
}
