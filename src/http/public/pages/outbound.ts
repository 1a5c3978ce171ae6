import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { placeOutboundCall } from '../../../capture/telephony/twilio/outbound.ts';
import { getContact } from '../../../contacts/contacts.ts';
import type { Queryable } from '../../../db/types.ts';
import type { Deps } from '../../../deps.ts';
import type { InitiateFailureReason } from '../../../domain/outbound-progress.ts';
import { normalizePhone } from '../../../domain/phone.ts';
import { AppError } from '../../../errors.ts';
import { isUuid } from '../../../ids.ts';
import { field, formOf } from './form.ts';
import { type PageUser, requireUser, seeOther } from './guard.ts';
import { html, type VNode } from './html.ts';
import { type Notice, renderPage } from './layout.ts';
import { CsrfField } from './ui.ts';

/**
 * Click-to-call from the web app (issue 9): the "Call" form (the call page's "Call back", a
 * contact's page, the calls list's "New call", and the page /app/calls/new the contacts list links
 * to) and its POST /app/calls. The signed-in user is the agent: the service rings the agent's own
 * phone first, then dials the customer from a service number (placeOutboundCall, the function the
 * operator API uses). The agent's phone is prefilled with the one of the user's latest outbound call
 * (docs/decisions.md "Click-to-call in the web app"). A success answers 303 to the new call's page;
 * a refusal re-renders the form with what was typed and a message: 400 for a number that is no
 * phone number, 409 while the organization has no telephony, 502 when Twilio did not place the call
 * (the attempt exists and is linked).
 */

/** What the form needs to know about the organization and the user. */
export interface CallSetup {
  /** the organization has a telephony account */
  account: boolean;
  /** its service numbers (E.164), oldest first */
  numbers: string[];
  /** the organization's country (ISO 3166-1 alpha-2): national spellings of numbers are read in it */
  country: string | null;
  /** the agent phone of the user's latest outbound call (E.164), or null */
  lastAgentPhone: string | null;
}

export const setupReady = (s: CallSetup): boolean => s.account && s.numbers.length > 0;

export async function loadCallSetup(q: Queryable, user: PageUser): Promise<CallSetup> {
  const orgId = user.session.organizationId;
  const { rows } = await q.query<{ account: boolean; country: string | null; numbers: string[] | null }>(
    `SELECT EXISTS (SELECT 1 FROM telephony_accounts t WHERE t.organization_id = o.id) AS account,
            o.country,
            (SELECT array_agg(p.number_e164 ORDER BY p.created_at, p.number_e164)
               FROM phone_numbers p WHERE p.organization_id = o.id) AS numbers
       FROM organizations o WHERE o.id = $1`,
    [orgId],
    { name: 'pages_call_setup_v1' },
  );
  // The latest outbound call this user placed, among the organization's latest RECENT_OUTBOUND
  // (calls_org_direction_created_idx, newest first): bounded work on every page that shows the
  // form, also for a user who never placed a call in an organization with 100,000 outbound calls.
  const last = await q.query<{ agent_phone_e164: string }>(
    `SELECT agent_phone_e164 FROM (
       SELECT agent_phone_e164, agent_user_id, created_at, id FROM calls
        WHERE organization_id = $1 AND direction = 'outbound' AND erased_at IS NULL
        ORDER BY created_at DESC, id DESC LIMIT ${RECENT_OUTBOUND}) recent
      WHERE agent_user_id = $2 AND agent_phone_e164 IS NOT NULL
      ORDER BY created_at DESC, id DESC LIMIT 1`,
    [orgId, user.session.userId],
    { name: 'pages_last_agent_phone_v2' },
  );
  const r = rows[0];
  return {
    account: r?.account ?? false,
    numbers: r?.numbers ?? [],
    country: r?.country ?? null,
    lastAgentPhone: last.rows[0]?.agent_phone_e164 ?? null,
  };
}

/** The form's fields as typed (re-rendered after a refusal). */
export interface CallValues {
  customer_phone: string;
  agent_phone: string;
  from_number: string;
}

const NOT_SET_UP =
  "Calling is not set up for this organization yet: it needs a Twilio account and a service number to call from. The operator who runs this Call Capture service connects them (the operator API's telephony and phone-number settings); ask them, or your organization's owner, to do it.";

const CHANGED =
  "The organization's telephony changed meanwhile (a service number or the Twilio account was removed), so nothing rang. Check the form and try again.";

/** Said where the form would be while the organization cannot call. */
export const CallingNotSetUp = (): VNode => html`<p class="muted calling-off">${NOT_SET_UP}</p>`;

/** How far back (outbound calls of the organization) the form looks for the user's own phone. */
const RECENT_OUTBOUND = 200;

const nationalHint = (country: string | null) =>
  country === 'US' || country === 'CA'
    ? 'Any spelling: +1 (415) 555-2671, 415 555 2671, 1.415.555.2671…'
    : country
      ? `With its country code (+44 20 7946 0958), or as dialled in your country (${country}).`
      : 'With its country code, such as +1 415 555 2671.';

/**
 * The "Call" form (posts to /app/calls), or the sentence saying calling is not set up. `id` is the
 * form's id and prefixes its elements' (a page may hold other forms); `customer` prefills the
 * customer's number; `values` are what was typed (after a refusal).
 */
export function CallForm(p: {
  user: PageUser;
  setup: CallSetup;
  id: string;
  label: string;
  values?: Partial<CallValues>;
  customer?: string | null;
}): VNode {
  const { setup } = p;
  if (!setupReady(setup)) return html`<${CallingNotSetUp} />`;
  const v: CallValues = {
    customer_phone: p.values?.customer_phone ?? p.customer ?? '',
    agent_phone: p.values?.agent_phone ?? setup.lastAgentPhone ?? '',
    from_number: p.values?.from_number ?? setup.numbers[0] ?? '',
  };
  const id = (name: string) => `${p.id}-${name}`;
  return html`<form method="post" action="/app/calls" class="stack call-form" id=${p.id}>
    <${CsrfField} user=${p.user} />
    <div>
      <label for=${id('customer')}>Customer's number</label>
      <input type="tel" id=${id('customer')} name="customer_phone" value=${v.customer_phone} required
        maxlength="64" autocomplete="off" aria-describedby=${id('customer-hint')} />
      <small id=${id('customer-hint')} class="muted">${nationalHint(setup.country)}</small>
    </div>
    <div>
      <label for=${id('agent')}>Your phone</label>
      <input type="tel" id=${id('agent')} name="agent_phone" value=${v.agent_phone} required
        maxlength="64" autocomplete="tel" aria-describedby=${id('agent-hint')} />
      <small id=${id('agent-hint')} class="muted">
        The service rings this phone first; answer and press a key to be put through to the customer.
        ${setup.lastAgentPhone ? ' Filled in with the phone of your last call.' : ''}
      </small>
    </div>
    ${
      setup.numbers.length > 1
        ? html`<div>
            <label for=${id('from')}>Call from</label>
            <select id=${id('from')} name="from_number" aria-describedby=${id('from-hint')}>
              ${setup.numbers.map((n) => html`<option value=${n} selected=${n === v.from_number}>${n}</option>`)}
            </select>
            <small id=${id('from-hint')} class="muted">The service number the customer sees calling.</small>
          </div>`
        : html`<input type="hidden" name="from_number" value=${setup.numbers[0]} />
            <p class="muted">The customer sees the call coming from ${setup.numbers[0]}.</p>`
    }
    <div><button type="submit">${p.label}</button></div>
  </form>`;
}

/** What the page says when Twilio did not place the call (the attempt is stored as failed_to_initiate). */
const FAILED: Record<InitiateFailureReason, string> = {
  provider_rejected:
    'Twilio refused to place the call (it could not ring your phone from this service number). Check your phone number and try again; if it keeps failing, ask the operator of the service to check the Twilio account.',
  provider_auth_failed:
    "Twilio did not accept this organization's telephony credentials, so nothing rang. The operator who runs this service must update the Twilio account.",
  provider_unavailable: 'Twilio could not be reached, so nothing rang. Please try again in a moment.',
};

function renderNewCall(
  reply: FastifyReply,
  user: PageUser,
  setup: CallSetup,
  o: { values?: Partial<CallValues>; notice?: Notice | null; status?: number; failedCallId?: string } = {},
): FastifyReply {
  return renderPage(reply, {
    title: 'New call',
    user,
    nav: 'calls',
    status: o.status,
    notice: o.notice ?? null,
    body: html`<p><a href="/app/calls">← All calls</a></p>
      ${
        o.failedCallId
          ? html`<p>The attempt is recorded: <a href=${`/app/calls/${o.failedCallId}`}>see the failed call</a>.</p>`
          : null
      }
      <${CallForm} user=${user} setup=${setup} id="new-call" label="Call" values=${o.values} />`,
  });
}

/** A refusal of the form as a page: the typed values again, the message, the status. */
class CallRefused extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** The form's fields, checked the way the page can explain (the service function checks them again). */
function readCallForm(body: unknown): CallValues {
  const form = formOf(body);
  return {
    customer_phone: (field(form, 'customer_phone') ?? '').trim().slice(0, 64),
    agent_phone: (field(form, 'agent_phone') ?? '').trim().slice(0, 64),
    from_number: (field(form, 'from_number') ?? '').trim().slice(0, 64),
  };
}

function checkCall(values: CallValues, setup: CallSetup): void {
  if (!setupReady(setup)) throw new CallRefused(409, NOT_SET_UP);
  const spelled = setup.country ? ` or as dialled in ${setup.country}` : '';
  if (!values.customer_phone) throw new CallRefused(400, "Enter the customer's number.");
  if (!normalizePhone(values.customer_phone, setup.country)) {
    throw new CallRefused(
      400,
      `The customer's number is not a phone number that can be dialled. Write it with its country code (+14155552671)${spelled}.`,
    );
  }
  if (!values.agent_phone) throw new CallRefused(400, 'Enter your phone number: the service rings it first.');
  if (!normalizePhone(values.agent_phone, setup.country)) {
    throw new CallRefused(
      400,
      `Your phone number is not a phone number that can be dialled. Write it with its country code (+14155550142)${spelled}.`,
    );
  }
  const from = normalizePhone(values.from_number, setup.country)?.e164;
  if (!from || !setup.numbers.includes(from)) {
    throw new CallRefused(
      400,
      `Choose one of the organization's service numbers to call from: ${setup.numbers.join(', ')}.`,
    );
  }
}

export function outboundCallPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    /** The form alone; ?contact=<id> fills in the contact's number (the contacts list's "Call" links). */
    app.get('/calls/new', async (req, reply) => {
      const user = requireUser(req);
      const setup = await loadCallSetup(deps.db, user);
      const contactId = (req.query as Record<string, unknown>).contact;
      let customer = '';
      if (typeof contactId === 'string' && isUuid(contactId)) {
        const c = await getContact(deps.db, user.session.organizationId, contactId);
        customer = c ? (c.phone_e164 ?? c.phone) : '';
      }
      return renderNewCall(reply, user, setup, { values: { customer_phone: customer } });
    });

    app.post('/calls', async (req, reply) => {
      const user = requireUser(req);
      const setup = await loadCallSetup(deps.db, user);
      const values = readCallForm(req.body);
      try {
        checkCall(values, setup);
        const placed = await placeOutboundCall(deps, user.session.organizationId, {
          agentUserId: user.session.userId,
          agentPhone: values.agent_phone,
          customerPhone: values.customer_phone,
          fromNumber: values.from_number,
        });
        if (placed.outbound_lifecycle === 'failed_to_initiate') {
          const reason = placed.failure_reason ?? 'provider_unavailable';
          return renderNewCall(reply, user, setup, {
            values,
            status: 502,
            notice: { kind: 'error', text: FAILED[reason] },
            failedCallId: placed.call_id,
          });
        }
        return seeOther(reply, `/app/calls/${placed.call_id}?done=calling`);
      } catch (err) {
        if (err instanceof CallRefused) {
          return renderNewCall(reply, user, setup, {
            values,
            status: err.status,
            notice: { kind: 'error', text: err.message },
          });
        }
        // The service number or the account was removed between the check and the call.
        if (err instanceof AppError && err.code === 'VALIDATION_ERROR') {
          return renderNewCall(reply, user, await loadCallSetup(deps.db, user), {
            values,
            status: 409,
            notice: { kind: 'error', text: CHANGED },
          });
        }
        throw err;
      }
    });
  };
}
