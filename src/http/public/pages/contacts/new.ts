import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { createContact } from '../../../../contacts/contacts.ts';
import { createContactSchema } from '../../../../contacts/schemas.ts';
import type { Deps } from '../../../../deps.ts';
import { AppError } from '../../../../errors.ts';
import { isUuid } from '../../../../ids.ts';
import { field, formOf } from '../kit/form.ts';
import { type PageUser, requireUser, scopeOf, seeOther } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { renderPage } from '../kit/layout.ts';
import { CsrfField } from '../kit/ui.ts';

/**
 * /app/contacts/new: the "New contact" form, and POST /app/contacts that creates the contact (the
 * same service and schema as POST /admin/v1/contacts, with the public API's rule of one contact per
 * number) — also the target of the call page's "Save as contact" form (`from_call`: back to that
 * call afterwards). A refused form comes back with each error on its field (aria-invalid,
 * aria-describedby) and focus on the first one (autofocus); a success redirects (post/redirect/get).
 */

const FIELDS = ['phone', 'first_name', 'last_name', 'email', 'company'] as const;
type Field = (typeof FIELDS)[number];
type Values = Record<Field, string>;
type Errors = Partial<Record<Field, VNode | string>>;

/** Each field's refusal in the page's words. */
const WORDS: Record<Field, string> = {
  phone: 'Enter a phone number that can be dialled, such as +1 415 555 2671 (or a national number).',
  first_name: 'The first name can have at most 100 characters.',
  last_name: 'The last name can have at most 100 characters.',
  email: 'Enter an e-mail address such as ana@example.com, or leave it empty.',
  company: 'The company can have at most 200 characters.',
};

const LABELS: Record<Field, string> = {
  phone: 'Phone',
  first_name: 'First name',
  last_name: 'Last name',
  email: 'E-mail',
  company: 'Company',
};

const TYPES: Partial<Record<Field, string>> = { phone: 'tel', email: 'email' };
const MAX: Record<Field, number> = { phone: 64, first_name: 100, last_name: 100, email: 254, company: 200 };

function ContactFormFields({ v, errors }: { v: Values; errors: Errors }): VNode {
  const first = FIELDS.find((f) => errors[f]);
  return html`${FIELDS.map((f) => {
    const id = `nc-${f}`;
    const err = errors[f];
    const hint =
      f === 'phone'
        ? html`<p class="muted" id="nc-phone-hint">In international form (+1…) or as dialled in your country.</p>`
        : null;
    const described = [f === 'phone' ? 'nc-phone-hint' : null, err ? `${id}-error` : null]
      .filter(Boolean)
      .join(' ');
    return html`<div>
      <label for=${id}>${LABELS[f]}${f === 'phone' ? ' (required)' : ''}</label>
      <input type=${TYPES[f] ?? 'text'} id=${id} name=${f} value=${v[f]} maxlength=${MAX[f]} autocomplete="off"
        required=${f === 'phone'} aria-invalid=${err ? 'true' : undefined}
        aria-describedby=${described || undefined} autofocus=${f === first} />
      ${hint}
      ${err ? html`<p class="field-error" id=${`${id}-error`}>${err}</p>` : null}
    </div>`;
  })}`;
}

function renderNew(
  reply: FastifyReply,
  user: PageUser,
  o: { v?: Values; errors?: Errors; fromCall?: string | null; status?: number } = {},
): FastifyReply {
  const v = o.v ?? { phone: '', first_name: '', last_name: '', email: '', company: '' };
  const errors = o.errors ?? {};
  const count = Object.keys(errors).length;
  return renderPage(reply, {
    title: 'New contact',
    user,
    nav: 'contacts',
    status: o.status,
    notice:
      count > 0
        ? {
            kind: 'error',
            text: `The contact was not saved: ${count === 1 ? 'one field needs' : `${count} fields need`} a change.`,
          }
        : null,
    body: html`<form method="post" action="/app/contacts" class="stack" id="new-contact" novalidate>
      <${CsrfField} user=${user} />
      ${o.fromCall ? html`<input type="hidden" name="from_call" value=${o.fromCall} />` : null}
      <${ContactFormFields} v=${v} errors=${errors} />
      <div><button type="submit">Save contact</button> <a href=${o.fromCall ? `/app/calls/${o.fromCall}` : '/app/contacts'}>Cancel</a></div>
    </form>`,
  });
}

/** A refusal of the service or the schema, as errors on the fields. */
function fieldErrors(err: unknown): Errors | null {
  if (err instanceof AppError && err.code === 'CONTACT_EXISTS' && err.contactId) {
    return {
      phone: html`A contact already has this number:
        <a href=${`/app/contacts/${err.contactId}`}>open that contact</a>.`,
    };
  }
  if (
    err instanceof AppError &&
    err.status < 500 &&
    err.param &&
    (FIELDS as readonly string[]).includes(err.param)
  ) {
    return { [err.param]: WORDS[err.param as Field] };
  }
  return null;
}

export function newContactPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/contacts/new', async (req, reply) => renderNew(reply, requireUser(req)));

    app.post('/contacts', async (req, reply) => {
      const user = requireUser(req);
      const form = formOf(req.body);
      const v = Object.fromEntries(FIELDS.map((f) => [f, field(form, f) ?? ''])) as Values;
      const from = field(form, 'from_call') ?? '';
      const fromCall = isUuid(from) ? from.toLowerCase() : null;
      const parsed = createContactSchema.safeParse(v);
      if (!parsed.success) {
        const errors: Errors = {};
        for (const issue of parsed.error.issues) {
          const f = String(issue.path[0]) as Field;
          if ((FIELDS as readonly string[]).includes(f) && !errors[f]) errors[f] = WORDS[f];
        }
        return renderNew(reply, user, { v, errors, fromCall, status: 400 });
      }
      try {
        const c = await createContact(deps, scopeOf(user), parsed.data, { uniquePhone: true });
        return seeOther(
          reply,
          fromCall
            ? `/app/calls/${fromCall}?done=contact_saved`
            : `/app/contacts/${c.contact_id}?done=created`,
        );
      } catch (err) {
        const errors = fieldErrors(err);
        if (!errors) throw err;
        return renderNew(reply, user, { v, errors, fromCall, status: (err as AppError).status });
      }
    });
  };
}
