/**
 * Telephony end-to-end fixtures: the fake Twilio (fake-twilio.ts), the service's public listener on
 * a real socket (127.0.0.1, port 0) behind PUBLIC_BASE_URL, an organization connected to the fake's
 * account with a service number, a webhook receiver subscribed to every event, and readers of what
 * arrives there (verified with the SDK's verifyWebhook) and of the REST API.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { DestinationStream } from 'pino';
import { verifyWebhook } from '../../sdk/src/webhooks/verify.ts';
import { startWorkers } from '../../src/worker.ts';
import { T0 } from './deps.ts';
import { type FakeTwilio, startFakeTwilio } from './fake-twilio.ts';
import { createHarness, type Harness } from './harness.ts';
import { admin, bearer } from './http.ts';
import { settleDownloads } from './jobs.ts';
import { type Receiver, startReceiver } from './receiver.ts';
import { drain, insertSubscription } from './webhooks.ts';

export const PUBLIC_BASE_URL = 'https://calls.example.test';

export interface TelephonyEnv {
  h: Harness;
  fake: FakeTwilio;
  receiver: Receiver;
  close(): Promise<void>;
}

/** One per test file. */
export async function startTelephony(
  env: Record<string, string> = {},
  opts: { logTo?: DestinationStream } = {},
): Promise<TelephonyEnv> {
  const fake = await startFakeTwilio({ publicBaseUrl: PUBLIC_BASE_URL });
  let h: Harness | undefined;
  let receiver: Receiver | undefined;
  try {
    h = await createHarness({ PUBLIC_BASE_URL, TWILIO_API_BASE_URL: fake.url, ...env }, opts);
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    fake.serviceOrigin = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    receiver = await startReceiver();
  } catch (err) {
    await h?.close();
    await fake.close();
    throw err;
  }
  const hh = h;
  const rr = receiver;
  return {
    h: hh,
    fake,
    receiver: rr,
    async close() {
      // closing the public app stops its download runs (a run cut off goes back to the queue)
      await hh.close();
      await rr.close();
      await fake.close();
    },
  };
}

export interface TelephonyOrg {
  orgId: string;
  number: string;
  apiKey: string;
  secret: string;
  subscriptionId: string;
  /** the org's account on the fake (a fresh one per org) */
  account: { accountSid: string; authToken: string };
}

let numbers = 0;
/** A fresh US service number (+1 415 555 01xx range is fictional; these are possible numbers). */
export const serviceNumber = () => `+1415555${String(2000 + ++numbers).padStart(4, '0')}`;

/** An organization on the fake's default account with one service number, an API key and a subscription. */
export async function connectOrg(
  t: TelephonyEnv,
  o: {
    ringTo?: string | null;
    recordingMode?: 'normal' | 'no_recording';
    consent?: { enabled: boolean; text?: string; language?: string | null };
    account?: { accountSid: string; authToken: string };
  } = {},
): Promise<TelephonyOrg> {
  const created = await admin(t.h, 'POST', '/organizations', {
    name: 'Acme Plumbing',
    owner_email: `owner${++numbers}@acme.example`,
    owner_password: 'correct horse battery',
    country: 'US',
  });
  assert.equal(created.statusCode, 201, created.body);
  const orgId = created.json().organization_id as string;
  const account = o.account ?? t.fake.addAccount();
  const put = await admin(t.h, 'PUT', `/organizations/${orgId}/telephony`, {
    provider: 'twilio',
    account_sid: account.accountSid,
    auth_token: account.authToken,
  });
  assert.equal(put.statusCode, 200, put.body);
  const number = serviceNumber();
  const num = await admin(t.h, 'POST', `/organizations/${orgId}/phone-numbers`, {
    number,
    ...(o.ringTo === undefined ? {} : { ring_to: o.ringTo }),
    ...(o.recordingMode ? { recording_mode: o.recordingMode } : {}),
  });
  assert.equal(num.statusCode, 201, num.body);
  if (o.consent) {
    const patch = await admin(t.h, 'PATCH', `/organizations/${orgId}`, { recording_consent: o.consent });
    assert.equal(patch.statusCode, 200, patch.body);
  }
  const key = await admin(t.h, 'POST', `/organizations/${orgId}/api-keys`, {
    scopes: ['read.calls', 'read.recordings'],
  });
  assert.equal(key.statusCode, 201, key.body);
  const sub = await insertSubscription(t.h.deps, {
    orgId,
    url: t.receiver.url,
    at: new Date('2026-06-01T00:00:00Z'),
  });
  return {
    orgId,
    number,
    apiKey: key.json().key,
    secret: sub.secret,
    subscriptionId: sub.subscriptionId,
    account,
  };
}

/** Runs the recording downloads due (the public app's included), delivers every due event and answers the org's events as the receiver verified them. */
export async function deliveredEvents(t: TelephonyEnv, org: TelephonyOrg) {
  await settleDownloads(t.h.deps);
  await drain(t.h.deps);
  // One receiver serves every org of the file: a request is this org's when its secret signed it.
  const mine = [];
  for (const r of t.receiver.requests) {
    try {
      mine.push(verifyWebhook(r.body, r.headers, org.secret, { now: () => t.h.clock.now().getTime() }));
    } catch {
      // another organization's subscription
    }
  }
  return mine.filter((e) => {
    const data = e.data as { call_id?: string };
    return data.call_id !== undefined && callsOf.get(org.orgId)?.has(data.call_id);
  });
}

/** call ids per org (filled by callIdOf) so events of other tests' calls are told apart. */
const callsOf = new Map<string, Set<string>>();

/** The id of the call with this CallSid (and remembers it for deliveredEvents). */
export async function callIdOf(t: TelephonyEnv, callSid: string): Promise<string> {
  const { rows } = await t.h.db.query<{ id: string; organization_id: string }>(
    'SELECT id, organization_id FROM calls WHERE provider_call_sid = $1',
    [callSid],
  );
  assert.ok(rows[0], `a call for ${callSid}`);
  const set = callsOf.get(rows[0].organization_id) ?? new Set();
  set.add(rows[0].id);
  callsOf.set(rows[0].organization_id, set);
  return rows[0].id;
}

/** GET /api/v1/calls/{id} with the org's key; answers status and data. */
export async function restCall(t: TelephonyEnv, org: TelephonyOrg, callId: string) {
  const res = await t.h.app.inject({
    method: 'GET',
    url: `/api/v1/calls/${callId}`,
    headers: bearer(org.apiKey),
  });
  return { status: res.statusCode, body: res.json() };
}

/** GET /api/v1/calls/{id}/recording-url with the org's key. */
export async function restRecordingUrl(t: TelephonyEnv, org: TelephonyOrg, callId: string) {
  const res = await t.h.app.inject({
    method: 'GET',
    url: `/api/v1/calls/${callId}/recording-url`,
    headers: bearer(org.apiKey),
  });
  return { status: res.statusCode, body: res.json() };
}

/** The telephony columns of a call and the callbacks recorded for it. */
export async function callState(t: TelephonyEnv, callId: string) {
  const { rows } = await t.h.db.query<Record<string, unknown>>(
    `SELECT recording_state, recording_sid, recording_consent, voicemail, recording_channels, provider_call_status,
            duration, recording_key IS NOT NULL AS has_blob, updated_at
       FROM calls WHERE id = $1`,
    [callId],
  );
  return rows[0]!;
}

export async function callbacksOf(t: TelephonyEnv, callId: string) {
  const { rows } = await t.h.db.query<{
    dedupe_key: string;
    kind: string;
    outcome: string;
    detail: string | null;
  }>(
    'SELECT dedupe_key, kind, outcome, detail FROM telephony_callbacks WHERE call_id = $1 ORDER BY received_at, dedupe_key',
    [callId],
  );
  return rows;
}

/**
 * Runs body with the worker role started on t's service (processing jobs and the periodic jobs,
 * checked every 5 real ms); always stops it and puts the fake clock back at T0.
 */
export async function withWorkers(t: TelephonyEnv, body: () => Promise<void>): Promise<void> {
  const stop = await startWorkers(t.h.deps, { tickMs: 5, jobsPollIntervalMs: 5 });
  try {
    await body();
  } finally {
    await stop();
    t.h.clock.set(T0);
  }
}
