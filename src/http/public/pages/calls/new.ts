import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { type CallSetup, loadCallSetup, setupReady } from '../../../../capture/telephony/call-setup.ts';
import { placeCall } from '../../../../capture/telephony/place-call.ts';
import { getContact } from '../../../../contacts/contacts.ts';
import type { Deps } from '../../../../deps.ts';
import type { InitiateFailureReason } from '../../../../domain/outbound-progress.ts';
import { normalizePhone } from '../../../../domain/phone.ts';
import { AppError } from '../../../../errors.ts';
import { isUuid } from '../../../../ids.ts';
import { field, formOf } from '../kit/form.ts';
import { type PageUser, requireUser, scopeOf, seeOther } from '../kit/guard.ts';
import { html } from '../kit/html.ts';
import { type Notice, renderPage } from '../kit/layout.ts';
import { CallForm, type CallValues, NOT_SET_UP } from './call-form.ts';

/**
 * Click-to-call from the web app (issue 9): the "Call" form (the call page's "Call back", a
 * contact's page, the calls list's "New call", and the page /app/calls/new the contacts list links
 * to) and its POST /app/calls. The signed-in user is the agent: the service rings the agent's own
 * phone first, then dials the customer from a service number (placeCall, the function the
 * operator API and POST /api/v1/calls use). The agent's phone is prefilled with the one of the user's latest outbound call
 * (docs/decisions.md "Click-to-call in the web app"). A success answers 303 to the new call's page;
 * a refusal re-renders the form with what was typed and a message: 400 for a number that is no
 * phone number, 409 while the organization has no telephony, 502 when Twilio did not place the call
 * (the attempt exists and is linked).
 */

const CHANGED =
  "The organization's telephony changed meanwhile (a service number or the Twilio account was removed), so nothing rang. Check the form and try again.";

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

export function newCallPages(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    /** The form alone; ?contact=<id> fills in the contact's number (the contacts list's "Call" links). */
    app.get('/calls/new', async (req, reply) => {
      const user = requireUser(req);
      const setup = await loadCallSetup(deps.db, scopeOf(user), user.session.userId);
      const contactId = (req.query as Record<string, unknown>).contact;
      let customer = '';
      if (typeof contactId === 'string' && isUuid(contactId)) {
        const c = await getContact(deps.db, scopeOf(user), contactId);
        customer = c ? (c.phone_e164 ?? c.phone) : '';
      }
      return renderNewCall(reply, user, setup, { values: { customer_phone: customer } });
    });

    app.post('/calls', async (req, reply) => {
      const user = requireUser(req);
      const setup = await loadCallSetup(deps.db, scopeOf(user), user.session.userId);
      const values = readCallForm(req.body);
      try {
        checkCall(values, setup);
        const placed = await placeCall(deps, scopeOf(user), {
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
          return renderNewCall(
            reply,
            user,
            await loadCallSetup(deps.db, scopeOf(user), user.session.userId),
            {
              values,
              status: 409,
              notice: { kind: 'error', text: CHANGED },
            },
          );
        }
        throw err;
      }
    });
  };
}
