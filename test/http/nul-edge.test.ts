/**
 * The NUL character (U+0000) at the edge (issue 15 item 3, src/http/nul-guard.ts): PostgreSQL text
 * cannot hold it, and before the edge rule a NUL in a text field failed its statement (500
 * DATABASE_ERROR, an error-level stack trace). Now, on every route of both listeners, read from
 * Fastify's route table (so a route added later is covered without touching this file):
 *
 * - a NUL in a query parameter is 400 BAD_REQUEST naming the parameter;
 * - a NUL in a JSON body field — a value, an array element, an object key, at any depth — is 400
 *   naming the field by its path; in a web page's form field, a 400 page with the same message;
 * - a realistic body of each operation that takes text, with a NUL put into each of its text fields
 *   in turn, answers that exact 400 (these reached the database before) and writes nothing;
 * - a NUL in a header cannot arrive at all (Node's parser answers 400), and a NUL percent-encoded
 *   into the session cookie is just an unknown session (401).
 *
 * Telephony callbacks drop the character instead (test/telephony/nul-callbacks.test.ts).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { createTracker } from '../../src/accounts/trackers.ts';
import { createContact } from '../../src/contacts/contacts.ts';
import { tenantScope } from '../../src/domain/tenant.ts';
import { INVALID_LINK_MESSAGE } from '../../src/http/public/api-v1/recording-download.ts';
import { type ConsoleClient, cheapPasswordHash, login, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import { T0 } from '../helpers/deps.ts';
import { insertApiKey, insertCall, MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders, bearer, errorBody, errorJson } from '../helpers/http.ts';
import { mp3 } from '../helpers/mp3.ts';
import { type RouteInfo, routesOf } from '../helpers/routes.ts';
import { insertDelivery, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let email: string;
let orgId: string;
let ownerId: string;
let apiKey: string;
let callId: string;
let contactId: string;
let subId: string;
let trackerId: string;
let consoleSession: ConsoleClient;
let page: { cookie: string; csrf: string };

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

before(async () => {
  h = await createHarness();
  ({ email, orgId, ownerId } = await orgWithLogin(h.db, cheapPasswordHash()));
  ({ key: apiKey } = await insertApiKey(h.db, {
    orgId,
    userId: ownerId,
    scopes: ['read.calls', 'read.recordings', 'write.calls', 'read.contacts', 'write.contacts'],
  }));
  callId = await insertCall(h.db, { orgId });
  ({ contact_id: contactId } = await createContact(h.deps, tenantScope(orgId), { phone: '+14155550100' }));
  ({ subscriptionId: subId } = await insertSubscription(h.deps, { orgId, at: h.clock.now() }));
  await insertDelivery(h.db, {
    orgId,
    subscriptionId: subId,
    createdAt: h.clock.now(),
    status: 'dead_lettered',
  });
  ({ tracker_id: trackerId } = await createTracker(h.db, {
    organizationId: orgId,
    name: 'Pricing',
    terms: ['price'],
    now: h.clock.now(),
  }));
  consoleSession = await login(h, email);
  page = await signInPage();
});
after(() => h?.close());

/** A web-app session (cookie) and its CSRF token, through the sign-in form. */
async function signInPage(): Promise<{ cookie: string; csrf: string }> {
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
  const settings = await h.app.inject({ url: '/app/settings/integrations', headers: { cookie } });
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(settings.body)![1]! };
}

type Surface = 'api-v1' | 'console' | 'page' | 'operator' | 'health';
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

function surfaceOf(listener: 'public' | 'operator', url: string): Surface {
  if (listener === 'operator') return url.startsWith('/admin/') ? 'operator' : 'health';
  if (url.startsWith('/api/v1')) return 'api-v1';
  if (url === '/app/api' || url.startsWith('/app/api/')) return 'console';
  if (url.startsWith('/app')) return 'page';
  return 'health';
}

/** Path parameters: ids the guard never needs (it answers before any handler), names that route. */
const fill = (url: string): string =>
  url.replace(/:(\w+)/g, (_m, name: string) =>
    name === 'name' ? 'app.css' : name === 'kind' ? 'answer' : MISSING,
  );

/** The credentials each surface's routes want, so the request reaches the edge rule. */
function credentials(surface: Surface, method: Method, url: string): Record<string, string> {
  switch (surface) {
    case 'operator':
    case 'health':
      return url === '/healthz' || url === '/readyz' ? {} : { ...adminHeaders };
    case 'api-v1':
      return bearer(apiKey);
    case 'console':
      // The case: the login is unauthenticated.
      if (url === '/app/api/login') return {};
      return {
        cookie: consoleSession.cookie,
        ...(method === 'GET' ? {} : { 'x-csrf-token': consoleSession.csrf }),
      };
    case 'page':
      return { cookie: page.cookie };
  }
}

interface Probe {
  listener: 'public' | 'operator';
  method: Method;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
}

async function send(p: Probe) {
  const app = p.listener === 'operator' ? h.operator : h.app;
  return app.inject({
    method: p.method,
    url: p.url,
    headers: p.headers ?? {},
    ...(p.payload === undefined ? {} : { payload: p.payload }),
  });
}

const fieldMessage = (path: string) => `Field "${path}" must not contain a NUL character.`;
const queryMessage = (name: string) => `Query parameter "${name}" must not contain a NUL character.`;

/** What a page's error answer shows of a message (htm escapes the quotes). */
const onPage = (message: string) => message.replaceAll('"', '&quot;');

/** Asserts the exact 400 of the edge rule: the spec's JSON body, or the page that says it. */
/** The REST API's writes: they read a JSON body (api-v1/body.ts), after authentication and scope. */
const API_WRITES = new Set([
  'POST /api/v1/calls',
  'POST /api/v1/contacts',
  'PATCH /api/v1/contacts/:id',
  'POST /api/v1/test-helpers/inbound-calls',
]);
/** REST paths with no GET: a GET there is a method the path does not serve (405). */
const POST_ONLY = new Set(['/api/v1/test-helpers/inbound-calls']);

function assertRefused(
  res: Awaited<ReturnType<typeof send>>,
  surface: Surface,
  message: string,
  param: string | undefined,
  what: string,
) {
  assert.equal(res.statusCode, 400, `${what}: ${res.body.slice(0, 300)}`);
  if (surface === 'page') {
    assert.match(String(res.headers['content-type']), /^text\/html/, what);
    assert.ok(res.body.includes(onPage(message)), `${what}: the page says ${message}`);
    return;
  }
  assert.deepEqual(errorJson(res), errorBody('BAD_REQUEST', message, T0, param), what);
}

/**
 * Every probe of a test is sent and checked; the mismatches are collected and the test fails once
 * with all of them (so a regression shows every route it touches, not only the first).
 */
const failures: string[] = [];
function collect(what: string, check: () => void): void {
  try {
    check();
  } catch (err) {
    const message = (err as Error).message.replace(/\s+/g, ' ').slice(0, 600);
    failures.push(message.startsWith(what) ? message : `${what}: ${message}`);
  }
}
const noFailures = () => assert.deepEqual(failures.splice(0), [], 'every probe answered as the rule says');

/** Rows the refused requests must not have written. */
async function rowCounts() {
  const out: Record<string, number> = {};
  for (const table of [
    'organizations',
    'users',
    'api_keys',
    'calls',
    'contacts',
    'trackers',
    'webhook_subscriptions',
    'telephony_accounts',
    'sessions',
  ]) {
    const { rows } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    out[table] = rows[0]!.n;
  }
  return out;
}

/** Every route of both listeners but the Twilio callbacks; the sign-outs last (a probe that got through would end the session). */
function everyRoute(): { listener: 'public' | 'operator'; route: RouteInfo; surface: Surface }[] {
  const last = (r: { route: RouteInfo }) => (r.route.url.endsWith('/logout') ? 1 : 0);
  return [
    ...routesOf(h.app)
      .filter((r) => !r.url.startsWith('/telephony/'))
      .map((route) => ({ listener: 'public' as const, route, surface: surfaceOf('public', route.url) })),
    ...routesOf(h.operator).map((route) => ({
      listener: 'operator' as const,
      route,
      surface: surfaceOf('operator', route.url),
    })),
  ].sort((a, b) => last(a) - last(b));
}

const methodsOf = (r: RouteInfo): Method[] =>
  r.methods.filter((m): m is Method => m !== 'HEAD' && m !== 'OPTIONS');

test('a NUL in a query parameter: 400 naming it on every route of both listeners', async () => {
  const counted = { refused: 0, other: 0 };

  for (const { listener, route, surface } of everyRoute()) {
    for (const method of methodsOf(route)) {
      const what = `${listener} ${method} ${route.url}`;
      const headers = credentials(surface, method, route.url);
      let payload: string | Buffer | undefined;
      if (surface === 'page' && method !== 'GET') {
        headers['content-type'] = FORM['content-type'];
        payload = new URLSearchParams({ _csrf: page.csrf }).toString();
      }
      if (route.url === '/admin/v1/calls/:id/recording') {
        // The audio upload refuses anything but audio/mpeg before its query is read.
        headers['content-type'] = 'audio/mpeg';
        payload = Buffer.from([0xff, 0xfb, 0x90, 0x64]);
      }
      const res = await send({
        listener,
        method,
        url: `${fill(route.url)}?recording_sid=a%00b`,
        headers,
        ...(payload === undefined ? {} : { payload }),
      });
      collect(what, () => {
        if (
          surface === 'api-v1' &&
          (method !== 'GET' || POST_ONLY.has(route.url)) &&
          !API_WRITES.has(`${method} ${route.url}`)
        ) {
          // A method a REST path does not serve answers 405 before anything is read (its documented order).
          assert.equal(res.statusCode, 405, res.body);
          counted.other++;
        } else if (route.url === '/api/v1/openapi.json') {
          assert.equal(res.statusCode, 200, 'the document reads no query');
          counted.other++;
        } else if (route.url === '/api/v1/calls/:id/recording.mp3') {
          // Authenticated by its token and exp only: a NUL there is no minted link.
          assert.deepEqual(errorJson(res), errorBody('UNAUTHORIZED', INVALID_LINK_MESSAGE));
          counted.other++;
        } else {
          assertRefused(res, surface, queryMessage('recording_sid'), 'recording_sid', what);
          counted.refused++;
        }
      });
    }
  }
  // A NUL in a parameter's name, and in the second value of a repeated one.
  for (const url of ['/admin/v1/organizations?na%00me=1', '/admin/v1/organizations?page=1&page=%00']) {
    const res = await send({ listener: 'operator', method: 'GET', url, headers: { ...adminHeaders } });
    const name = url.includes('na%00me') ? 'na\\u0000me' : 'page';
    collect(url, () => assertRefused(res, 'operator', queryMessage(name), name, url));
  }
  const rest = await h.app.inject({ url: '/api/v1/calls?status=new&ph%00one=1', headers: bearer(apiKey) });
  collect('GET /api/v1/calls', () =>
    assertRefused(rest, 'api-v1', queryMessage('ph\\u0000one'), 'ph\\u0000one', 'GET /api/v1/calls'),
  );
  noFailures();
  console.log(
    `query: ${counted.refused} route methods refused the NUL, ${counted.other} answered before reading a query`,
  );
  assert.ok(counted.refused > 50, `${counted.refused} route methods`);
});

test('a NUL in any JSON field or form field: 400 naming its path, on every route that takes a body', async () => {
  const before = await rowCounts();
  let probes = 0;
  for (const { listener, route, surface } of everyRoute()) {
    for (const method of methodsOf(route).filter((m) => m !== 'GET')) {
      const what = `${listener} ${method} ${route.url}`;
      const url = fill(route.url);
      const headers = credentials(surface, method, route.url);
      if (surface === 'api-v1' && !API_WRITES.has(`${method} ${route.url}`)) {
        // A method the path does not serve is a 405, answered before the body is read.
        const res = await send({
          listener,
          method,
          url,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: JSON.stringify({ name: 'a\u0000b' }),
        });
        collect(what, () => assert.equal(res.statusCode, 405, res.body));
        continue;
      }
      if (route.url === '/admin/v1/calls/:id/recording' && method === 'PUT') {
        // Takes MP3 bytes only (415 before the body is read); its text is its query (test above).
        const res = await send({
          listener,
          method,
          url,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: JSON.stringify({ name: 'a\u0000b' }),
        });
        collect(what, () => assert.equal(res.statusCode, 415, res.body));
        continue;
      }
      if (surface === 'page') {
        const res = await send({
          listener,
          method,
          url,
          headers: { ...headers, ...FORM },
          payload: new URLSearchParams({ _csrf: page.csrf, name: 'a\u0000b' }).toString(),
        });
        collect(what, () => assertRefused(res, surface, fieldMessage('name'), 'name', what));
        probes++;
        continue;
      }
      const bodies: [unknown, string][] = [
        [{ name: 'Ada\u0000' }, 'name'],
        [{ contacts: [{ name: 'ok' }, { name: 'B\u0000b' }] }, 'contacts[1].name'],
        [{ tags: ['ok', '\u0000'] }, 'tags[1]'],
        [{ outer: { 'in\u0000ner': 1 } }, 'outer.in\\u0000ner'],
      ];
      for (const [body, path] of bodies) {
        const res = await send({
          listener,
          method,
          url,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        const label = `${what} ${JSON.stringify(body)}`;
        collect(label, () => assertRefused(res, surface, fieldMessage(path), path, label));
        probes++;
      }
    }
  }
  // A body that is itself a string holding a NUL names no field.
  const res = await h.operator.inject({
    method: 'POST',
    url: `/admin/v1/organizations`,
    headers: { ...adminHeaders, 'content-type': 'application/json' },
    payload: JSON.stringify('\u0000'),
  });
  collect('a string body', () =>
    assert.deepEqual(
      errorJson(res),
      errorBody('BAD_REQUEST', 'The request body must not contain a NUL character.'),
    ),
  );
  // A NUL at the bottom of a body nested 5,000 arrays deep: refused, its path cut short.
  const deep = await h.operator.inject({
    method: 'POST',
    url: '/admin/v1/organizations',
    headers: { ...adminHeaders, 'content-type': 'application/json' },
    payload: `${'['.repeat(5_000)}${JSON.stringify('\u0000')}${']'.repeat(5_000)}`,
  });
  const cut = `${'[0]'.repeat(67).slice(0, 200)}…`;
  collect('a deeply nested body', () =>
    assert.deepEqual(errorJson(deep), errorBody('BAD_REQUEST', fieldMessage(cut), T0, cut)),
  );
  noFailures();
  assert.deepEqual(await rowCounts(), before, 'nothing written');
  console.log(`bodies: ${probes} NUL bodies refused`);
  assert.ok(probes > 100, `${probes} probes`);
});

/**
 * A realistic body of each operation that stores text, the NUL put into each of its text fields in
 * turn (these reached the database before the edge rule: 500 DATABASE_ERROR).
 */
const JSON_BODIES: {
  listener: 'public' | 'operator';
  method: Method;
  url: () => string;
  body: () => unknown;
}[] = [
  {
    listener: 'public',
    method: 'POST',
    url: () => '/app/api/login',
    body: () => ({ email, password: PASSWORD }),
  },
  {
    listener: 'public',
    method: 'POST',
    url: () => '/app/api/api-keys',
    body: () => ({ name: 'CRM sync', scopes: ['read.calls', 'read.recordings'] }),
  },
  {
    listener: 'public',
    method: 'POST',
    url: () => '/app/api/webhook-subscriptions',
    body: () => ({
      url: 'https://crm.example.com/hooks',
      event_types: ['call.completed'],
      verification_mode: 'permissive',
    }),
  },
  {
    listener: 'public',
    method: 'POST',
    url: () => `/app/api/webhook-subscriptions/${subId}/deliveries/resend`,
    body: () => ({
      from: '2026-05-20T00:00:00Z',
      to: '2026-06-01T00:00:00Z',
      statuses: ['dead_lettered'],
      event_type: 'call.completed',
    }),
  },
  {
    listener: 'public',
    method: 'POST',
    url: () => '/app/api/listen/trigger',
    body: () => ({ event_type: 'call.completed' }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => '/admin/v1/organizations',
    body: () => ({
      name: 'Bob Roofing',
      owner_email: 'bob@roofing.example',
      owner_password: 'correct horse battery',
      country: 'US',
    }),
  },
  {
    listener: 'operator',
    method: 'PATCH',
    url: () => `/admin/v1/organizations/${orgId}`,
    body: () => ({
      name: 'Acme Plumbing & Heating',
      country: 'US',
      recording_consent: { enabled: true, text: 'This call is recorded.', language: 'en' },
    }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/organizations/${orgId}/users`,
    body: () => ({ email: 'agent@acme.example', password: 'correct horse battery' }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/organizations/${orgId}/api-keys`,
    body: () => ({ scopes: ['read.calls'], user_id: ownerId, name: 'CRM' }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/organizations/${orgId}/trackers`,
    body: () => ({ name: 'Competitors', terms: ['Globex', 'Initech'] }),
  },
  {
    listener: 'operator',
    method: 'PUT',
    url: () => `/admin/v1/organizations/${orgId}/telephony`,
    body: () => ({
      provider: 'twilio',
      account_sid: `AC${'0'.repeat(32)}`,
      auth_token: 'f'.repeat(32),
    }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/organizations/${orgId}/calls`,
    body: () => ({
      direction: 'inbound',
      caller_phone: '+14155550142',
      company_phone: '+14155550100',
      caller_name: 'Ada Lovelace',
      transcript_original: 'Customer: my boiler is broken.',
      transcript_processed: {
        summary: 'Broken boiler.',
        client_city: 'Springfield',
        proposal_items: [{ kind: 'service', text: 'Boiler repair' }],
        followup_email: { subject: 'Your boiler', body: 'Hello Ada', language: 'en' },
      },
    }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/organizations/${orgId}/contacts`,
    body: () => ({
      phone: '+14155550199',
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@navy.example',
      company: 'Navy',
    }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/organizations/${orgId}/phone-numbers`,
    body: () => ({ number: '+14155550177', ring_to: '+14155550178', recording_mode: 'normal' }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/organizations/${orgId}/outbound-calls`,
    body: () => ({
      agent_user_id: ownerId,
      agent_phone: '+14155550142',
      customer_phone: '+14155552671',
      from_number: '+14155550100',
    }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/calls/${callId}/transcript`,
    body: () => ({ text: 'Customer: the tap drips.', language: 'en' }),
  },
  {
    listener: 'operator',
    method: 'POST',
    url: () => `/admin/v1/calls/${callId}/recording/delete`,
    body: () => ({ deletion_kind: 'hard_deleted', reason: 'asked by the customer' }),
  },
  {
    listener: 'operator',
    method: 'PATCH',
    url: () => `/admin/v1/contacts/${contactId}`,
    body: () => ({ first_name: 'Grace', notes: 'Prefers mornings.', tags: ['vip', 'boiler'] }),
  },
];

/** Form posts of the web pages that store text (each field in turn gets the NUL). */
const FORM_BODIES: { url: () => string; fields: () => Record<string, string> }[] = [
  { url: () => '/app/trackers', fields: () => ({ name: 'Competitors', terms: 'Globex\nInitech' }) },
  { url: () => `/app/trackers/${trackerId}`, fields: () => ({ name: 'Pricing', terms: 'price\nquote' }) },
  {
    url: () => `/app/contacts/${contactId}`,
    fields: () => ({
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@navy.example',
      phone: '+14155550100',
      company: 'Navy',
      notes: 'Prefers mornings.',
      tags: 'vip, boiler',
    }),
  },
  {
    url: () => '/app/settings/organization',
    fields: () => ({
      retention_days: '30',
      language: 'en',
      consent_enabled: '1',
      consent_text: 'This call is recorded.',
      consent_language: 'en',
    }),
  },
  {
    url: () => '/app/settings/integrations/api-keys',
    fields: () => ({ name: 'CRM sync', scopes: 'read.calls', recordings_consent: 'no' }),
  },
  {
    url: () => '/app/settings/integrations/webhooks',
    fields: () => ({ url: 'https://crm.example.com/hooks', verification_mode: 'permissive' }),
  },
  {
    url: () => '/app/calls',
    fields: () => ({
      customer_phone: '+14155552671',
      agent_phone: '+14155550142',
      from_number: '+14155550100',
    }),
  },
];

/** Every string of a JSON value with its path (as the 400 names it), and a setter for it. */
function textLeaves(value: unknown, path = ''): { path: string; set: (root: unknown) => unknown }[] {
  const out: { path: string; set: (root: unknown) => unknown }[] = [];
  const walk = (v: unknown, p: string, trail: (string | number)[]) => {
    if (typeof v === 'string') {
      out.push({
        path: p,
        set: (root) => {
          const copy = structuredClone(root) as Record<string | number, unknown>;
          let at = copy;
          for (const k of trail.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
          const last = trail.at(-1)!;
          const s = at[last] as string;
          at[last] = `${s.slice(0, 1)}\u0000${s.slice(1)}`;
          return copy;
        },
      });
    } else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, `${p}[${i}]`, [...trail, i]);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(x, p ? `${p}.${k}` : k, [...trail, k]);
    }
  };
  walk(value, path, []);
  return out;
}

test('every text field of the operations that store text (and the queries they read): the NUL is a 400 naming it, nothing is written', async () => {
  const before = await rowCounts();
  let probes = 0;
  for (const op of JSON_BODIES) {
    const body = op.body();
    const url = op.url();
    const surface = surfaceOf(op.listener, url);
    const headers = { ...credentials(surface, op.method, url), 'content-type': 'application/json' };
    for (const leaf of textLeaves(body)) {
      const res = await send({
        listener: op.listener,
        method: op.method,
        url,
        headers,
        payload: JSON.stringify(leaf.set(body)),
      });
      const what = `${op.method} ${url} ${leaf.path}`;
      collect(what, () => assertRefused(res, surface, fieldMessage(leaf.path), leaf.path, what));
      probes++;
    }
  }
  for (const form of FORM_BODIES) {
    const url = form.url();
    const fields = form.fields();
    for (const name of Object.keys(fields)) {
      const res = await send({
        listener: 'public',
        method: 'POST',
        url,
        headers: { cookie: page.cookie, ...FORM },
        payload: new URLSearchParams({
          _csrf: page.csrf,
          ...fields,
          [name]: `x\u0000${fields[name]}`,
        }).toString(),
      });
      collect(`POST ${url} ${name}`, () =>
        assertRefused(res, 'page', fieldMessage(name), name, `POST ${url} ${name}`),
      );
      probes++;
    }
  }
  // The sign-in form, unauthenticated (its own CSRF cookie and field).
  const form = await h.app.inject({ url: '/app/login' });
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const pre = String(form.headers['set-cookie']).split(';')[0]!;
  for (const name of ['email', 'password']) {
    const fields: Record<string, string> = { _csrf: token, email, password: PASSWORD };
    fields[name] = `${fields[name]}\u0000`;
    const res = await h.app.inject({
      method: 'POST',
      url: '/app/login',
      headers: { ...FORM, cookie: pre },
      payload: new URLSearchParams(fields).toString(),
    });
    collect(`POST /app/login ${name}`, () =>
      assertRefused(res, 'page', fieldMessage(name), name, `POST /app/login ${name}`),
    );
    probes++;
  }
  // Query parameters that are text the handlers store or look up.
  const queries: Probe[] = [
    {
      listener: 'operator',
      method: 'PUT',
      url: `/admin/v1/calls/${callId}/recording?recording_sid=RE%00${'0'.repeat(32)}`,
      headers: { ...adminHeaders, 'content-type': 'audio/mpeg' },
      payload: mp3(2).bytes,
    },
    {
      listener: 'public',
      method: 'GET',
      url: `/app/api/webhook-subscriptions/${subId}/deliveries?cursor=a%00b`,
      headers: { cookie: consoleSession.cookie },
    },
    { listener: 'public', method: 'GET', url: '/app/contacts?q=Gr%00ace', headers: { cookie: page.cookie } },
  ];
  for (const q of queries) {
    const res = await send(q);
    const name = /\?(\w+)=/.exec(q.url)![1]!;
    const what = `${q.method} ${q.url}`;
    collect(what, () => assertRefused(res, surfaceOf(q.listener, q.url), queryMessage(name), name, what));
    probes++;
  }
  noFailures();
  assert.deepEqual(await rowCounts(), before, 'nothing written');
  console.log(`realistic bodies and queries: ${probes} text fields refused with their NUL`);
});

test('headers: a raw NUL never reaches a route (400 from the HTTP parser); a percent-encoded one in the session cookie is no session', async () => {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = h.app.server.address() as { port: number };
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('GET /app/api/session HTTP/1.1\r\nHost: x\r\nCookie: cc_session=a\u0000b\r\n\r\n');
    });
    let data = '';
    socket.on('data', (c) => {
      data += c.toString('latin1');
    });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
  assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };
  assert.equal(body.error.code, 'BAD_REQUEST');

  const res = await fetch(`http://127.0.0.1:${port}/app/api/session`, {
    headers: { cookie: 'cc_session=a%00b' },
  });
  assert.equal(res.status, 401);
  assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'UNAUTHORIZED');
});
