/**
 * `callcap trigger <event_type>` with a test key (issue 17): the request each event type makes,
 * against a stand-in for the REST API that records it. Without a test key (or for webhook.test and
 * other types) the command is the `callcap listen` trigger it was, which signs in to the console.
 * The end-to-end run with a real test key against the service follows once test keys exist.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { cliInProcess } from '../helpers/cli.ts';

const seen: { method: string; url: string; auth: string; body: unknown }[] = [];
const server = createServer(async (req: IncomingMessage, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  seen.push({
    method: req.method!,
    url: req.url!,
    auth: String(req.headers.authorization),
    body: JSON.parse(raw),
  });
  res.writeHead(201, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ success: true, data: { call_id: '11111111-1111-4111-8111-111111111111' } }));
});
let base = '';
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

function trigger(type: string, key: string | null = 'cc_test_abc') {
  return cliInProcess(['trigger', type], {
    CALLCAP_API_URL: base,
    CALLCAP_URL: 'http://127.0.0.1:9',
    XDG_CONFIG_HOME: '/nonexistent-callcap-test',
    ...(key ? { CALLCAP_API_KEY: key } : {}),
  });
}

test('each event type starts the test call that emits it, with the test key', async () => {
  const cases: [string, string, unknown][] = [
    ['call.completed', '/api/v1/test-helpers/inbound-calls', { scenario: 'conversation' }],
    ['call.followup_email.drafted', '/api/v1/test-helpers/inbound-calls', { scenario: 'conversation' }],
    ['call.outbound.attempted', '/api/v1/calls', { customer_phone: '+12025550000' }],
    ['call.failed', '/api/v1/calls', { customer_phone: '+12025550001' }],
    ['call.outbound.lifecycle_repaired', '/api/v1/calls', { customer_phone: '+12025550004' }],
  ];
  for (const [type, url, body] of cases) {
    seen.length = 0;
    const r = await trigger(type);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(seen, [{ method: 'POST', url, auth: 'Bearer cc_test_abc', body }]);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.event_type, type);
    assert.equal(summary.call_id, '11111111-1111-4111-8111-111111111111');
    assert.equal(summary.request, `POST ${url.slice('/api/v1'.length)}`);
  }
});

test('without a test key, or for another type, it is the listen trigger (console sign-in); no REST request', async () => {
  seen.length = 0;
  for (const [type, key] of [
    ['call.completed', null],
    ['call.completed', 'cc_live_abc'],
    ['webhook.test', 'cc_test_abc'],
    ['contact.created', 'cc_test_abc'],
  ] as const) {
    const r = await trigger(type, key);
    assert.equal(r.code, 2, `${type} ${key}`);
    assert.match(r.stderr, /^callcap: not signed in: run "callcap login" first/);
  }
  assert.deepEqual(seen, []);
});
