/**
 * Outbound telephony end to end (twilio-out): the service's public listener on a real socket behind
 * PUBLIC_BASE_URL, the fake Twilio (fake-twilio.ts) as its TWILIO_API_BASE_URL, an organization with
 * a telephony account on the fake and a service number, a signed-webhook receiver, and readers of
 * what arrives there (verified with the SDK's verifyWebhook) and of the REST API.
 */
import assert from 'node:assert/strict';
import { verifyWebhook } from '../../sdk/src/webhooks/verify.ts';
import { type FakeOutboundCall, outboundCallOf, type TwilioAccount } from './fake-twilio.ts';
import { insertApiKey, insertOrg } from './fixtures.ts';
import { admin } from './http.ts';
import { settleDownloads } from './jobs.ts';
import { call, type Res } from './rest.ts';
import { startTelephony, type TelephonyEnv } from './telephony.ts';
import { drain, insertSubscription } from './webhooks.ts';

/** The telephony test set-up (telephony.ts) is the outbound one too. */
export { PUBLIC_BASE_URL } from './telephony.ts';
export type OutboundEnv = TelephonyEnv;
export const startOutbound = (): Promise<OutboundEnv> => startTelephony();

export interface OutboundOrg {
  orgId: string;
  ownerId: string;
  number: string;
  apiKey: string;
  secret: string;
  account: TwilioAccount;
}

let numbers = 0;
/** A fresh US service number in a fictional range. */
export const serviceNumber = () => `+1415555${String(3000 + ++numbers).padStart(4, '0')}`;

/** A US organization with a telephony account on the fake, one service number, an API key and a subscription. */
export async function outboundOrg(
  t: OutboundEnv,
  o: { recordingMode?: 'normal' | 'no_recording' } = {},
): Promise<OutboundOrg> {
  const { orgId, ownerId } = await insertOrg(t.h.db, { country: 'US' });
  const account = t.fake.addAccount();
  const put = await admin(t.h, 'PUT', `/organizations/${orgId}/telephony`, {
    provider: 'twilio',
    account_sid: account.accountSid,
    auth_token: account.authToken,
  });
  assert.equal(put.statusCode, 200, put.body);
  const number = serviceNumber();
  const num = await admin(t.h, 'POST', `/organizations/${orgId}/phone-numbers`, {
    number,
    ...(o.recordingMode ? { recording_mode: o.recordingMode } : {}),
  });
  assert.equal(num.statusCode, 201, num.body);
  const { key } = await insertApiKey(t.h.db, { orgId, userId: ownerId });
  const sub = await insertSubscription(t.h.deps, { orgId, url: t.receiver.url });
  return { orgId, ownerId, number, apiKey: key, secret: sub.secret, account };
}

export const AGENT_PHONE = '+14155550142';
export const CUSTOMER_PHONE = '(415) 555-2671';
export const CUSTOMER_E164 = '+14155552671';

/** POST …/outbound-calls; answers the service's reply and (when Twilio was asked) the fake's call. */
export async function placeCall(
  t: OutboundEnv,
  org: OutboundOrg,
  body: Record<string, unknown> = {},
): Promise<{ res: Awaited<ReturnType<typeof admin>>; callId: string; leg: FakeOutboundCall | null }> {
  const before = t.fake.createdCalls.length;
  const res = await admin(t.h, 'POST', `/organizations/${org.orgId}/outbound-calls`, {
    agent_user_id: org.ownerId,
    agent_phone: AGENT_PHONE,
    customer_phone: CUSTOMER_PHONE,
    from_number: org.number,
    ...body,
  });
  const callId = res.statusCode === 201 ? (res.json().call_id as string) : '';
  const leg = t.fake.createdCalls.length > before ? outboundCallOf(t.fake, org.account) : null;
  return { res, callId, leg };
}

/**
 * Delivers every due event and answers the events of `callId` the receiver got, verified with the
 * SDK against the organization's secret, in the order they arrived.
 */
export async function eventsAtReceiver(t: OutboundEnv, org: OutboundOrg, callId: string) {
  await settleDownloads(t.h.deps);
  await drain(t.h.deps);
  const out = [];
  const verdicts = verdictsBySecret.get(org.secret) ?? new WeakMap();
  verdictsBySecret.set(org.secret, verdicts);
  for (const r of t.receiver.requests) {
    // Verified once, on receipt (the fake clock moves on): a later look reuses the verdict.
    if (!verdicts.has(r)) {
      try {
        verdicts.set(
          r,
          verifyWebhook(r.body, r.headers, org.secret, { now: () => t.h.clock.now().getTime() }),
        );
      } catch {
        verdicts.set(r, null); // another organization's subscription
      }
    }
    const e = verdicts.get(r);
    if (e && (e.data as { call_id?: string }).call_id === callId) out.push(e);
  }
  return out;
}

const verdictsBySecret = new Map<string, WeakMap<object, ReturnType<typeof verifyWebhook> | null>>();

/** GET /api/v1/calls/{id} with the org's key, checked against the OpenAPI document. */
export const restCall = (t: OutboundEnv, org: OutboundOrg, id: string): Promise<Res> =>
  call(t.h, '/calls/{id}', `/calls/${id}`, org.apiKey);

export const recordingUrl = (t: OutboundEnv, org: OutboundOrg, id: string): Promise<Res> =>
  call(t.h, '/calls/{id}/recording-url', `/calls/${id}/recording-url`, org.apiKey);

/** The stored lifecycle, failure reason, recording state and legs of a call. */
export async function callRow(t: OutboundEnv, id: string) {
  const { rows } = await t.h.db.query<{
    outbound_lifecycle: string;
    failure_reason: string | null;
    recording_state: string;
    provider_call_sid: string | null;
    provider_customer_call_sid: string | null;
  }>(
    `SELECT outbound_lifecycle, failure_reason, recording_state, provider_call_sid, provider_customer_call_sid
       FROM calls WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** The callbacks recorded for a call: kind, outcome, detail, in arrival order. */
export async function callbacksOf(t: OutboundEnv, id: string) {
  const { rows } = await t.h.db.query<{ kind: string; outcome: string; detail: string | null }>(
    'SELECT kind, outcome, detail FROM telephony_callbacks WHERE call_id = $1 ORDER BY received_at, dedupe_key',
    [id],
  );
  return rows;
}
