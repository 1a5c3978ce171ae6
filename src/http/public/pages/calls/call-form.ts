import type { CallSetup } from '../../../../capture/telephony/call-setup.ts';
import { setupReady } from '../../../../capture/telephony/call-setup.ts';
import type { PageUser } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { CsrfField } from '../kit/ui.ts';

/**
 * The "Call" form of click-to-call (posts to /app/calls, calls/new.ts), shown on the call page
 * ("Call back"), a contact's page and /app/calls/new. The setup it needs is a read model of
 * capture/telephony (call-setup.ts).
 */

/** The form's fields as typed (re-rendered after a refusal). */
export interface CallValues {
  customer_phone: string;
  agent_phone: string;
  from_number: string;
}

export const NOT_SET_UP =
  "Calling is not set up for this organization yet: it needs a Twilio account and a service number to call from. The operator who runs this Call Capture service connects them (the operator API's telephony and phone-number settings); ask them, or your organization's owner, to do it.";

/** Said where the form would be while the organization cannot call. */
export const CallingNotSetUp = (): VNode => html`<p class="muted calling-off">${NOT_SET_UP}</p>`;

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
