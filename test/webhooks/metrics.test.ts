import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders } from '../helpers/http.ts';
import { type Receiver, startReceiver, status } from '../helpers/receiver.ts';
import { drain, emit, insertSubscription } from '../helpers/webhooks.ts';

let h: Harness;
let ok: Receiver;
let failing: Receiver;
before(async () => {
  h = await createHarness();
  ok = await startReceiver();
  failing = await startReceiver(status(503));
});
after(async () => {
  await ok?.close();
  await failing?.close();
  await h?.close();
});

const scrape = () => h.operator.inject({ method: 'GET', url: '/metrics', headers: adminHeaders });

test('GET /metrics without the operator token answers 401', async () => {
  const r = await h.operator.inject({ method: 'GET', url: '/metrics' });
  assert.equal(r.statusCode, 401);
  assert.equal(r.json().error.code, 'UNAUTHORIZED');
});

test('GET /metrics reports queue depth, attempts by outcome and delivery latency in the Prometheus text format', async () => {
  const { orgId } = await insertOrg(h.db);
  await insertSubscription(h.deps, { orgId, url: ok.url });
  await insertSubscription(h.deps, { orgId, url: failing.url });
  await insertSubscription(h.deps, { orgId, url: ok.url, state: 'paused' });
  await emit(h.deps, { orgId, at: new Date(h.clock.now().getTime() - 40) });
  await emit(h.deps, { orgId, at: new Date(h.clock.now().getTime() - 3000) });
  await drain(h.deps);

  const r = await scrape();
  assert.equal(r.statusCode, 200);
  assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  const lines = r.body.split('\n');
  const has = (line: string) => assert.ok(lines.includes(line), `missing: ${line}\n${r.body}`);
  has('# TYPE callcap_webhook_deliveries gauge');
  has('callcap_webhook_deliveries{status="pending"} 4');
  has('callcap_webhook_deliveries{status="delivered"} 2');
  has('callcap_webhook_deliveries{status="dead_lettered"} 0');
  has('callcap_webhook_deliveries{status="skipped"} 0');
  has('callcap_webhook_queue_depth{queue="scheduled"} 2');
  has('callcap_webhook_queue_depth{queue="held"} 2');
  has('callcap_webhook_queue_depth{queue="ready"} 0');
  has('# TYPE callcap_webhook_attempts_total counter');
  has('callcap_webhook_attempts_total{outcome="2xx"} 2');
  has('callcap_webhook_attempts_total{outcome="5xx"} 2');
  has('# TYPE callcap_webhook_delivery_latency_seconds histogram');
  has('callcap_webhook_delivery_latency_seconds_bucket{le="0.025"} 0');
  has('callcap_webhook_delivery_latency_seconds_bucket{le="0.05"} 1');
  has('callcap_webhook_delivery_latency_seconds_bucket{le="2.5"} 1');
  has('callcap_webhook_delivery_latency_seconds_bucket{le="5"} 2');
  has('callcap_webhook_delivery_latency_seconds_bucket{le="+Inf"} 2');
  has('callcap_webhook_delivery_latency_seconds_sum 3.04');
  has('callcap_webhook_delivery_latency_seconds_count 2');
  assert.ok(r.body.endsWith('\n'));
});
