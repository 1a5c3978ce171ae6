/**
 * Click-to-call from the web app at the HTTP level (no browser): POST /app/calls with the session's
 * CSRF token places an outbound call through the fake Twilio as the signed-in user and answers 303
 * to the call's page; refusals are pages with their status and a message (400 a bad number, 409 no
 * telephony, 502 Twilio did not place the call), never a stack or a secret.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { newId } from '../../src/ids.ts';
import { cheapPasswordHash, PASSWORD } from '../helpers/app-api.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { admin } from '../helpers/http.ts';
import {
  AGENT_PHONE,
  CUSTOMER_E164,
  type OutboundEnv,
  type OutboundOrg,
  outboundOrg,
  serviceNumber,
  startOutbound,
} from '../helpers/outbound.ts';

let t: OutboundEnv;
let org: OutboundOrg;
let owner: { cookie: string; csrf: string };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Signs in through the page form; answers the session cookie and the pages' CSRF token. */
async function signIn(email: string): Promise<{ cookie: string; csrf: string }> {
  const h = t.h;
  const form = await h.app.inject({ url: '/app/login' });
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const pre = String(form.headers['set-cookie']).split(';')[0]!;
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/login',
    headers: { ...FORM, cookie: pre },
    payload: new URLSearchParams({ _csrf: token, email, password: PASSWORD }).toString(),
  });
  assert.equal(res.statusCode, 303, res.body);
  const cookie = (res.headers['set-cookie'] as string[])[0]!.split(';')[0]!;
  const page = await h.app.inject({ url: '/app/calls', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return { cookie, csrf };
}

async function loginAs(userId: string): Promise<{ cookie: string; csrf: string }> {
  const { rows } = await t.h.db.query<{ email: string }>(
    'UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING email',
    [userId, cheapPasswordHash()],
  );
  return signIn(rows[0]!.email);
}

const post = (who: { cookie: string; csrf?: string }, fields: Record<string, string>) =>
  t.h.app.inject({
    method: 'POST',
    url: '/app/calls',
    headers: { ...FORM, cookie: who.cookie },
    payload: new URLSearchParams({ ...(who.csrf ? { _csrf: who.csrf } : {}), ...fields }).toString(),
  });

const get = (who: { cookie: string }, url: string) =>
  t.h.app.inject({ url, headers: { cookie: who.cookie } });

const countCalls = async (orgId: string) =>
  Number(
    (await t.h.db.query<{ n: string }>('SELECT count(*) AS n FROM calls WHERE organization_id = $1', [orgId]))
      .rows[0]!.n,
  );

/** The notice of a page (its text, whitespace folded). */
const noticeOf = (body: string) =>
  /<p class="notice [a-z]+" role="[a-z]+">([\s\S]*?)<\/p>/
    .exec(body)?.[1]
    ?.replace(/\s+/g, ' ')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .trim();

/** The value of the first input named `name` (an empty value renders as a bare `value`). */
const inputValue = (body: string, name: string) => {
  const m = new RegExp(`name="${name}" value(?:="([^"]*)")?`).exec(body);
  return m ? (m[1] ?? '') : null;
};

before(async () => {
  t = await startOutbound();
  org = await outboundOrg(t);
  owner = await loginAs(org.ownerId);
});
after(async () => {
  await t?.close();
});

test('a form post without the CSRF token is refused with 403 and nothing rings', async () => {
  const calls = t.fake.createdCalls.length;
  const before = await countCalls(org.orgId);
  const res = await post(
    { cookie: owner.cookie },
    {
      customer_phone: CUSTOMER_E164,
      agent_phone: AGENT_PHONE,
      from_number: org.number,
    },
  );
  assert.equal(res.statusCode, 403);
  assert.match(res.headers['content-type'] as string, /^text\/html/);
  assert.equal(
    noticeOf(res.body),
    'This form could not be accepted: its security token is missing or out of date. Go back, reload the page and try again.',
  );
  const wrong = await post({ cookie: owner.cookie, csrf: 'x'.repeat(43) }, { customer_phone: CUSTOMER_E164 });
  assert.equal(wrong.statusCode, 403);
  assert.equal(t.fake.createdCalls.length, calls);
  assert.equal(await countCalls(org.orgId), before);
  // Signed out, the post goes to the sign-in page.
  const out = await t.h.app.inject({ method: 'POST', url: '/app/calls', headers: FORM, payload: '' });
  assert.equal(out.statusCode, 303);
  assert.equal(out.headers.location, '/app/login');
});

test('bad input is a 400 page naming the problem, with what was typed kept in the form', async () => {
  const calls = t.fake.createdCalls.length;
  const before = await countCalls(org.orgId);
  const cases: [Record<string, string>, string][] = [
    [
      { customer_phone: '', agent_phone: AGENT_PHONE, from_number: org.number },
      "Enter the customer's number.",
    ],
    [
      { customer_phone: '555', agent_phone: AGENT_PHONE, from_number: org.number },
      "The customer's number is not a phone number that can be dialled. Write it with its country code (+14155552671) or as dialled in US.",
    ],
    [
      { customer_phone: CUSTOMER_E164, agent_phone: '', from_number: org.number },
      'Enter your phone number: the service rings it first.',
    ],
    [
      { customer_phone: CUSTOMER_E164, agent_phone: 'my desk', from_number: org.number },
      'Your phone number is not a phone number that can be dialled. Write it with its country code (+14155550142) or as dialled in US.',
    ],
    [
      { customer_phone: CUSTOMER_E164, agent_phone: AGENT_PHONE, from_number: '+14155559999' },
      `Choose one of the organization's service numbers to call from: ${org.number}.`,
    ],
  ];
  for (const [fields, message] of cases) {
    const res = await post(owner, fields);
    assert.equal(res.statusCode, 400, message);
    assert.match(res.headers['content-type'] as string, /^text\/html/);
    assert.equal(noticeOf(res.body), message);
    assert.match(res.body, /<title>New call · Call Capture<\/title>/);
    assert.equal(inputValue(res.body, 'customer_phone'), fields.customer_phone);
    assert.equal(inputValue(res.body, 'agent_phone'), fields.agent_phone);
  }
  // A repeated field is the pages' usual 400.
  const twice = await t.h.app.inject({
    method: 'POST',
    url: '/app/calls',
    headers: { ...FORM, cookie: owner.cookie },
    payload: `_csrf=${owner.csrf}&customer_phone=1&customer_phone=2`,
  });
  assert.equal(twice.statusCode, 400);
  assert.equal(noticeOf(twice.body), 'Field "customer_phone" is given more than once.');
  assert.equal(t.fake.createdCalls.length, calls, 'Twilio was never asked');
  assert.equal(await countCalls(org.orgId), before, 'no call was stored');
});

test('success: 303 to the new call, placed as the signed-in user; the page shows "ringing the agent"', async () => {
  const res = await post(owner, {
    customer_phone: '(415) 555-2671',
    agent_phone: '415.555.0142',
    from_number: org.number,
  });
  assert.equal(res.statusCode, 303, res.body);
  const id = /^\/app\/calls\/([0-9a-f-]{36})\?done=calling$/.exec(String(res.headers.location))?.[1];
  assert.ok(id, String(res.headers.location));
  const { rows } = await t.h.db.query(
    `SELECT direction, agent_user_id, agent_phone_e164, customer_phone_e164, company_phone_e164, outbound_lifecycle
       FROM calls WHERE id = $1`,
    [id],
  );
  assert.deepEqual(rows[0], {
    direction: 'outbound',
    agent_user_id: org.ownerId,
    agent_phone_e164: AGENT_PHONE,
    customer_phone_e164: CUSTOMER_E164,
    company_phone_e164: org.number,
    outbound_lifecycle: 'ringing_agent',
  });
  const asked = t.fake.createdCalls.at(-1)!;
  assert.equal(asked.accountSid, org.account.accountSid);
  assert.equal(asked.params.To, AGENT_PHONE);
  assert.equal(asked.params.From, org.number);

  const page = await get(owner, String(res.headers.location));
  assert.equal(page.statusCode, 200);
  assert.equal(
    noticeOf(page.body),
    'Calling: your phone rings first. Answer it and press a key to be put through to the customer. Reload this page to follow the call.',
  );
  assert.match(page.body, /<li class="reached current">\s*Now: Ringing the agent\s*<\/li>/);
  // The call page offers to call the customer back, with the agent's phone remembered.
  assert.match(page.body, /<h2>Call back<\/h2>/);
  assert.equal(inputValue(page.body, 'customer_phone'), CUSTOMER_E164);
  assert.equal(inputValue(page.body, 'agent_phone'), AGENT_PHONE);
  const form = await get(owner, '/app/calls/new');
  assert.equal(form.statusCode, 200);
  assert.equal(inputValue(form.body, 'agent_phone'), AGENT_PHONE);
  assert.match(form.body, /Filled in with the phone of your last call\./);
});

test('failed_to_initiate: Twilio refuses; a 502 page says so in words and links the recorded attempt', async () => {
  for (const [status, code, message] of [
    [
      400,
      21211,
      'Twilio refused to place the call (it could not ring your phone from this service number). Check your phone number and try again; if it keeps failing, ask the operator of the service to check the Twilio account.',
    ],
    [
      401,
      20003,
      "Twilio did not accept this organization's telephony credentials, so nothing rang. The operator who runs this service must update the Twilio account.",
    ],
    [503, 20500, 'Twilio could not be reached, so nothing rang. Please try again in a moment.'],
  ] as const) {
    t.fake.failNextCreateCall(status, code, `Twilio says ${code}: internal detail`);
    const res = await post(owner, {
      customer_phone: CUSTOMER_E164,
      agent_phone: AGENT_PHONE,
      from_number: org.number,
    });
    assert.equal(res.statusCode, 502, res.body);
    assert.equal(noticeOf(res.body), message);
    const id =
      /The attempt is recorded: <a href="\/app\/calls\/([0-9a-f-]{36})">see the failed call<\/a>/.exec(
        res.body,
      )?.[1];
    assert.ok(id);
    const row = await t.h.db.query('SELECT outbound_lifecycle FROM calls WHERE id = $1', [id]);
    assert.equal(row.rows[0]!.outbound_lifecycle, 'failed_to_initiate');
    assert.ok(!res.body.includes(org.account.authToken), 'no secret on the page');
    assert.ok(!res.body.includes('internal detail'), "not Twilio's words");
    assert.doesNotMatch(res.body, /at [a-zA-Z]+ \(|\.ts:\d+/, 'no stack');
  }
});

test('several service numbers: the form offers a choice, and the call goes out from the chosen one', async () => {
  const second = serviceNumber();
  const added = await admin(t.h, 'POST', `/organizations/${org.orgId}/phone-numbers`, { number: second });
  assert.equal(added.statusCode, 201, added.body);
  const form = await get(owner, '/app/calls/new');
  assert.match(form.body, /<select id="new-call-from" name="from_number"/);
  assert.match(form.body, new RegExp(`<option value="\\${second}">`));
  const res = await post(owner, {
    customer_phone: CUSTOMER_E164,
    agent_phone: AGENT_PHONE,
    from_number: second,
  });
  assert.equal(res.statusCode, 303, res.body);
  assert.equal(t.fake.createdCalls.at(-1)!.params.From, second);
});

test('a member places calls too, as themselves; a contact link fills in the number', async () => {
  const memberId = newId();
  await t.h.db.query(
    `INSERT INTO users (id, organization_id, email, password_hash, role, created_at)
     VALUES ($1, $2, $3, 'x', 'agent', now())`,
    [memberId, org.orgId, `member-${memberId}@example.test`],
  );
  const member = await loginAs(memberId);
  const { contact_id } = await createContact(t.h.deps, tenantScope(org.orgId), {
    phone: '+14155550177',
    first_name: 'Ana',
  });
  const list = await get(member, '/app/contacts');
  assert.match(
    list.body,
    new RegExp(`<a href="/app/calls/new\\?contact=${contact_id}" aria-label="Call Ana">Call</a>`),
  );
  const form = await get(member, `/app/calls/new?contact=${contact_id}`);
  assert.equal(inputValue(form.body, 'customer_phone'), '+14155550177');
  assert.equal(
    inputValue(form.body, 'agent_phone'),
    '',
    "nothing remembered: the owner's phone is not theirs",
  );
  const contactPage = await get(member, `/app/contacts/${contact_id}`);
  assert.match(
    contactPage.body,
    /<form method="post" action="\/app\/calls" class="stack call-form" id="call-contact">/,
  );
  const res = await post(member, {
    customer_phone: '+14155550177',
    agent_phone: '+14155550143',
    from_number: org.number,
  });
  assert.equal(res.statusCode, 303, res.body);
  const id = String(res.headers.location).split('/')[3]!.split('?')[0];
  const { rows } = await t.h.db.query('SELECT agent_user_id FROM calls WHERE id = $1', [id]);
  assert.equal(rows[0]!.agent_user_id, memberId);
});

test('an organization without telephony: the pages say so and who sets it up; a post is a 409 page', async () => {
  const bare = await insertOrg(t.h.db, { country: 'US' });
  const who = await loginAs(bare.ownerId);
  const notSetUp =
    "Calling is not set up for this organization yet: it needs a Twilio account and a service number to call from. The operator who runs this Call Capture service connects them (the operator API's telephony and phone-number settings); ask them, or your organization's owner, to do it.";
  const norm = (s: string) => s.replace(/&#39;|&#x27;/g, "'");
  const newCall = await get(who, '/app/calls/new');
  assert.equal(newCall.statusCode, 200);
  assert.ok(norm(newCall.body).includes(notSetUp));
  assert.doesNotMatch(newCall.body, /name="customer_phone"/);
  // The list only links to that page (its one round trip stays one).
  const list = await get(who, '/app/calls');
  assert.equal(list.statusCode, 200);
  assert.match(list.body, /<a href="\/app\/calls\/new">New call<\/a>/);
  const id = await insertCall(t.h.db, { orgId: bare.orgId, customerE164: CUSTOMER_E164 });
  const callPage = await get(who, `/app/calls/${id}`);
  assert.ok(norm(callPage.body).includes(notSetUp));
  const res = await post(who, {
    customer_phone: CUSTOMER_E164,
    agent_phone: AGENT_PHONE,
    from_number: org.number,
  });
  assert.equal(res.statusCode, 409);
  assert.equal(noticeOf(res.body), notSetUp);
  assert.equal(await countCalls(bare.orgId), 1, 'only the fixture call');

  // An account without a service number is not enough either.
  const account = t.fake.addAccount();
  const put = await admin(t.h, 'PUT', `/organizations/${bare.orgId}/telephony`, {
    provider: 'twilio',
    account_sid: account.accountSid,
    auth_token: account.authToken,
  });
  assert.equal(put.statusCode, 200);
  const still = await post(who, {
    customer_phone: CUSTOMER_E164,
    agent_phone: AGENT_PHONE,
    from_number: org.number,
  });
  assert.equal(still.statusCode, 409);
  assert.ok(!still.body.includes(account.authToken));
});
