/**
 * The proof that the data environment is part of the tenant scope (spec/api-v1-additions.md "Test
 * mode": "an id of the other environment answers 404, exactly like an unknown id"). Every route of
 * the REST API (/api/v1), the console JSON API (/app/api) and the web app's pages (/app) whose path
 * takes an id is read from Fastify's route table (so a route added later is covered without touching
 * this file, or fails here until its id is classified below), and asked, from each environment,
 * for the other environment's object: the answer must be the answer for an unknown id (same status,
 * same body with the id in place), and 404 wherever the unknown id is a 404. Afterwards the other
 * environment's objects are all still there, unchanged.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTracker } from '../../src/accounts/trackers.ts';
import { createContact } from '../../src/contacts/contacts.ts';
import { type Environment, tenantScope } from '../../src/domain/tenant.ts';
import { openListenSession } from '../../src/webhooks/subscriptions/listen.ts';
import { startRotation } from '../../src/webhooks/subscriptions/rotation.ts';
import { cheapPasswordHash, login, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import { insertApiKey, insertCall, MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { bearer } from '../helpers/http.ts';
import { type RouteInfo, routesOf } from '../helpers/routes.ts';
import { insertDelivery, insertSubscription } from '../helpers/webhooks.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Surface = 'api-v1' | 'console' | 'page';
type Kind = 'call' | 'contact' | 'subscription' | 'rotation' | 'delivery' | 'apiKey' | 'listen';

/** One environment's objects and the credentials that work in it. */
interface World {
  ids: Record<Kind, string>;
  apiKey: string;
  console: { cookie: string; csrf: string };
  page: { cookie: string; csrf: string };
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const ALL_SCOPES = ['read.calls', 'read.recordings', 'write.calls', 'read.contacts', 'write.contacts'];

let h: Harness;
let orgId: string;
let ownerId: string;
let email: string;
const worlds = {} as Record<Environment, World>;

/** A web-app session through the sign-in form, switched to `env` with the test-mode switch. */
async function pageSession(env: Environment): Promise<{ cookie: string; csrf: string }> {
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
  const csrf = /name="_csrf" value="([^"]+)"/.exec(settings.body)![1]!;
  await switchTo(cookie, csrf, env);
  return { cookie, csrf };
}

/** The test-mode switch of the page layout: a CSRF-checked form post. */
async function switchTo(cookie: string, csrf: string, env: Environment): Promise<void> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/environment',
    headers: { ...FORM, cookie },
    payload: new URLSearchParams({ _csrf: csrf, environment: env, next: '/app/calls' }).toString(),
  });
  assert.equal(res.statusCode, 303, res.body);
  assert.equal(res.headers.location, '/app/calls');
}

async function makeWorld(env: Environment, phone: string): Promise<World> {
  const scope = tenantScope(orgId, env);
  const { keyId, key } = await insertApiKey(h.db, {
    orgId,
    userId: ownerId,
    scopes: ALL_SCOPES,
    environment: env,
  });
  const call = await insertCall(h.db, { orgId, environment: env });
  const contact = await createContact(h.deps, scope, { phone });
  const sub = await insertSubscription(h.deps, { orgId, at: h.clock.now(), environment: env });
  const { deliveryId } = await insertDelivery(h.db, {
    orgId,
    subscriptionId: sub.subscriptionId,
    createdAt: h.clock.now(),
    status: 'dead_lettered',
  });
  const rotation = await startRotation(h.deps, {
    scope,
    subscriptionId: sub.subscriptionId,
    emergency: false,
  });
  const listen = await openListenSession(h.deps, scope, {});
  const c = await login(h, email);
  await switchTo(c.cookie, c.csrf, env);
  return {
    ids: {
      call,
      contact: contact.contact_id,
      subscription: sub.subscriptionId,
      rotation: rotation.rotation_id,
      delivery: deliveryId,
      apiKey: keyId,
      listen: listen.subscription_id,
    },
    apiKey: key,
    console: { cookie: c.cookie, csrf: c.csrf },
    page: await pageSession(env),
  };
}

before(async () => {
  h = await createHarness();
  ({ orgId, ownerId, email } = await orgWithLogin(h.db, cheapPasswordHash()));
  worlds.live = await makeWorld('live', '+14155550101');
  worlds.test = await makeWorld('test', '+14155550101');
  await createTracker(h.db, { organizationId: orgId, name: 'Pricing', terms: ['price'], now: h.clock.now() });
});
after(() => h?.close());

function surfaceOf(url: string): Surface | null {
  if (url.startsWith('/api/v1/')) return 'api-v1';
  if (url.startsWith('/app/api/')) return 'console';
  if (url.startsWith('/app/')) return 'page';
  return null;
}

/**
 * Routes with an id that are not an object of one environment, and why. Everything else with a
 * path parameter must name an object kind (kindOf), or this test fails until it does.
 */
const NOT_ENVIRONMENT_OBJECTS: Record<string, string> = {
  '/app/assets/:name': 'a static file, not tenant data',
  '/api/v1/calls/:id/recording.mp3':
    'authenticated by a signed link (token + exp) minted by recording-url, which is scoped; no key, no session',
  '/app/trackers/:id':
    "trackers are the organization's configuration, shared by both environments (docs/decisions.md)",
  '/app/trackers/:id/delete': 'as /app/trackers/:id',
  '/app/settings/team/invitations/:id/revoke':
    'invitations join the organization (its people), which both environments share, like trackers',
  '/app/settings/team/members/:id/role': "members are the organization's users, shared by both environments",
  '/app/settings/team/members/:id/remove': 'as /app/settings/team/members/:id/role',
};

/** The object kind a path parameter names, from the segment before it. */
function kindOf(url: string, param: string): Kind {
  if (param === 'rid') return 'rotation';
  if (param === 'did') return 'delivery';
  const segments = url.split('/');
  const before = segments[segments.indexOf(`:${param}`) - 1];
  const kinds: Record<string, Kind> = {
    calls: 'call',
    contacts: 'contact',
    'webhook-subscriptions': 'subscription',
    webhooks: 'subscription',
    deliveries: 'delivery',
    'api-keys': 'apiKey',
    listen: 'listen',
  };
  const kind = before === undefined ? undefined : kinds[before];
  if (!kind)
    throw new Error(`${url}: classify the path parameter :${param} (kindOf or NOT_ENVIRONMENT_OBJECTS)`);
  return kind;
}

const fill = (url: string, id: (kind: Kind) => string): string =>
  url.replace(/:(\w+)/g, (_m, name: string) => id(kindOf(url, name)));

/** A body that passes each operation's own checks, so the lookup of the id is what answers. */
function jsonBody(url: string, other: World): unknown {
  if (url.endsWith('/deliveries/resend')) {
    return { from: '2026-06-01T00:00:00Z', to: '2026-06-20T00:00:00Z' };
  }
  if (url.endsWith('/ack')) {
    return {
      stream_id: 'stream-1',
      acks: [{ delivery_id: other.ids.delivery, status: 204, duration_ms: 1 }],
    };
  }
  if (url.startsWith('/api/v1/contacts/')) return { first_name: 'Ada' };
  return {};
}

async function probe(
  viewer: World,
  surface: Surface,
  method: Method,
  url: string,
  route: string,
  body: unknown,
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {};
  let payload: string | undefined;
  if (surface === 'api-v1') Object.assign(headers, bearer(viewer.apiKey));
  if (surface === 'console') {
    headers.cookie = viewer.console.cookie;
    if (method !== 'GET') {
      headers['x-csrf-token'] = viewer.console.csrf;
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
  }
  if (surface === 'page') {
    headers.cookie = viewer.page.cookie;
    if (method !== 'GET') {
      Object.assign(headers, FORM);
      payload = new URLSearchParams({ _csrf: viewer.page.csrf }).toString();
    }
  }
  if (surface === 'api-v1' && method !== 'GET') {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  void route;
  return h.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

/** The answer with every id of the probe replaced, so two answers compare as answers. */
function normalised(res: LightMyRequestResponse, ids: string[]): string {
  let body = res.body;
  for (const id of ids) body = body.replaceAll(id, '<id>');
  // What is left of a UUID is the answer's own request id (meta.request_id, the error page's reference).
  body = body.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<request-id>');
  return `${res.statusCode} ${body}`;
}

/** The REST paths' served methods; any other answers 405 before reading anything. */
const API_METHODS: Record<string, Method[]> = {
  '/api/v1/calls/:id': ['GET'],
  '/api/v1/calls/:id/recording-url': ['GET'],
  '/api/v1/contacts/:id': ['GET', 'PATCH'],
};

for (const [viewerEnv, otherEnv] of [
  ['live', 'test'],
  ['test', 'live'],
] as const) {
  test(`from the ${viewerEnv} environment, every id of the ${otherEnv} environment answers as an unknown id (404) on every REST, console and page route`, async () => {
    const viewer = worlds[viewerEnv];
    const other = worlds[otherEnv];
    const failures: string[] = [];
    let probes = 0;
    let notFound = 0;
    const routes: RouteInfo[] = routesOf(h.app).filter(
      (r) => r.url.includes('/:') && surfaceOf(r.url) !== null,
    );
    // Sign-outs and destructive operations come last only by chance of the table; none may reach the
    // other environment's objects anyway (checked after the loop).
    for (const route of routes) {
      if (NOT_ENVIRONMENT_OBJECTS[route.url]) continue;
      const surface = surfaceOf(route.url) as Surface;
      const methods =
        surface === 'api-v1'
          ? (API_METHODS[route.url] ?? assert.fail(`${route.url}: list its served methods in API_METHODS`))
          : route.methods.filter((m): m is Method => m !== 'HEAD' && m !== 'OPTIONS');
      for (const method of methods) {
        const what = `${viewerEnv} ${method} ${route.url}`;
        const otherIds = Object.values(other.ids);
        const body = jsonBody(route.url, other);
        const unknownBody = JSON.parse(JSON.stringify(body).replaceAll(other.ids.delivery, MISSING));
        const unknown = await probe(
          viewer,
          surface,
          method,
          fill(route.url, () => MISSING),
          route.url,
          unknownBody,
        );
        const crossed = await probe(
          viewer,
          surface,
          method,
          fill(route.url, (k) => other.ids[k]),
          route.url,
          body,
        );
        probes++;
        const a = normalised(unknown, [MISSING]);
        const b = normalised(crossed, otherIds);
        if (a !== b)
          failures.push(`${what}: unknown id ${a.slice(0, 200)} — other environment's ${b.slice(0, 200)}`);
        if (unknown.statusCode === 404) notFound++;
        if (method === 'GET' && crossed.statusCode !== 404)
          failures.push(`${what}: ${crossed.statusCode}, not 404`);
      }
    }
    assert.deepEqual(failures, [], 'every probe answered as for an unknown id');
    console.log(`${viewerEnv} → ${otherEnv}: ${probes} route methods probed, ${notFound} of them 404`);
    assert.ok(probes >= 40, `${probes} route methods`);
    assert.ok(notFound >= 30, `${notFound} answered 404`);
  });
}

test("after the probes, each environment's objects are still all there, untouched", async () => {
  for (const env of ['live', 'test'] as const) {
    const { ids } = worlds[env];
    const q = async (sql: string, id: string) => (await h.db.query(sql, [id])).rowCount;
    assert.equal(
      await q('SELECT 1 FROM calls WHERE id = $1 AND erased_at IS NULL AND trashed_at IS NULL', ids.call),
      1,
    );
    assert.equal(await q('SELECT 1 FROM contacts WHERE id = $1 AND version = 0', ids.contact), 1);
    assert.equal(
      await q('SELECT 1 FROM webhook_subscriptions WHERE id = $1 AND deleted_at IS NULL', ids.subscription),
      1,
    );
    assert.equal(
      await q('SELECT 1 FROM webhook_subscriptions WHERE id = $1 AND deleted_at IS NULL', ids.listen),
      1,
    );
    assert.equal(
      await q(`SELECT 1 FROM webhook_secrets WHERE id = $1 AND status = 'pending'`, ids.rotation),
      1,
    );
    assert.equal(
      await q(`SELECT 1 FROM webhook_deliveries WHERE id = $1 AND status = 'dead_lettered'`, ids.delivery),
      1,
    );
    assert.equal(await q('SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL', ids.apiKey), 1);
  }
});

test('each environment reads its own objects by id (the probes above are not 404 for everything)', async () => {
  for (const env of ['live', 'test'] as const) {
    const w = worlds[env];
    const call = await h.app.inject({ url: `/api/v1/calls/${w.ids.call}`, headers: bearer(w.apiKey) });
    assert.equal(call.statusCode, 200, call.body);
    const contact = await h.app.inject({
      url: `/api/v1/contacts/${w.ids.contact}`,
      headers: bearer(w.apiKey),
    });
    assert.equal(contact.statusCode, 200, contact.body);
    const sub = await h.app.inject({
      url: `/app/api/webhook-subscriptions/${w.ids.subscription}`,
      headers: { cookie: w.console.cookie },
    });
    assert.equal(sub.statusCode, 200, sub.body);
    assert.equal(sub.json().environment, env);
    const page = await h.app.inject({ url: `/app/calls/${w.ids.call}`, headers: { cookie: w.page.cookie } });
    assert.equal(page.statusCode, 200);
    assert.equal(page.body.includes('Test mode: you are seeing test data'), env === 'test');
  }
});
