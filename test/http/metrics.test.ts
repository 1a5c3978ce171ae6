import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { buildMetricsApp } from '../../src/http/metrics-listener.ts';
import { insertApiKey, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders, bearer } from '../helpers/http.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { drain, emit, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let key: string;
let orgId: string;
before(async () => {
  h = await createHarness();
  const org = await insertOrg(h.db);
  orgId = org.orgId;
  ({ key } = await insertApiKey(h.db, { orgId, userId: org.ownerId }));
});
after(() => h.close());

const scrape = async () => {
  const r = await h.operator.inject({ method: 'GET', url: '/metrics', headers: adminHeaders });
  assert.equal(r.statusCode, 200);
  assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  return r.body;
};
/** The value of one sample line (0 when absent). */
const sample = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

test('/metrics carries the process and event-loop defaults', async () => {
  const text = await scrape();
  for (const family of [
    '# TYPE process_cpu_user_seconds_total counter',
    '# TYPE process_resident_memory_bytes gauge',
    '# TYPE nodejs_eventloop_lag_p99_seconds gauge',
    '# TYPE nodejs_heap_size_used_bytes gauge',
    '# TYPE callcap_http_request_duration_seconds histogram',
    '# TYPE callcap_webhook_deliveries gauge',
  ]) {
    assert.ok(text.includes(family), `missing ${family}`);
  }
});

test('HTTP requests are counted by listener, method, route pattern and status', async () => {
  const ok =
    'callcap_http_request_duration_seconds_count{listener="public",method="GET",route="/api/v1/calls/:id",status="404"}';
  const unauth =
    'callcap_http_request_duration_seconds_count{listener="public",method="GET",route="/api/v1/me",status="401"}';
  const op =
    'callcap_http_request_duration_seconds_count{listener="operator",method="GET",route="/healthz",status="200"}';
  const before = await scrape();
  for (let i = 0; i < 3; i++) {
    const r = await h.app.inject({
      method: 'GET',
      url: `/api/v1/calls/00000000-0000-4000-8000-00000000000${i}`,
      headers: bearer(key),
    });
    assert.equal(r.statusCode, 404);
  }
  assert.equal((await h.app.inject({ method: 'GET', url: '/api/v1/me' })).statusCode, 401);
  assert.equal((await h.operator.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  const afterText = await scrape();
  assert.equal(
    sample(afterText, ok) - sample(before, ok),
    3,
    'ids never become labels: one series for the route',
  );
  assert.equal(sample(afterText, unauth) - sample(before, unauth), 1);
  assert.equal(sample(afterText, op) - sample(before, op), 1);
  assert.ok(!afterText.includes('00000000-0000-4000-8000-000000000001'));
});

test('webhook attempts this process made are timed by outcome', async () => {
  const receiver = await startReceiver();
  try {
    const series = 'callcap_webhook_attempt_duration_seconds_count{outcome="2xx"}';
    const before = sample(await scrape(), series);
    await insertSubscription(h.deps, { orgId, url: receiver.url });
    await emit(h.deps, { orgId });
    await emit(h.deps, { orgId });
    await drain(h.deps);
    assert.equal(sample(await scrape(), series) - before, 2);
  } finally {
    await receiver.close();
  }
});

test('METRICS_PORT: a listener of its own serves this process metrics without a token', async () => {
  const app = buildMetricsApp();
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const r = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const text = await r.text();
    assert.ok(text.includes('# TYPE nodejs_eventloop_lag_seconds gauge'));
    assert.ok(text.includes('# TYPE callcap_http_request_duration_seconds histogram'));
    assert.equal((await fetch(`http://127.0.0.1:${port}/admin/v1/maintenance`)).status, 404);
  } finally {
    await app.close();
  }
});
