import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HOUR, MINUTE } from '../../src/clock.ts';
import { decryptSecret } from '../../src/webhooks/delivery/secret-box.ts';
import { expirePendingRotations } from '../../src/webhooks/subscriptions/rotation.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { insertDelivery } from '../helpers/webhooks.ts';

let h: Harness;
let c: ConsoleClient;
let r: Receiver;
let email: string;

/** Moves the fake clock; sessions end after 2 h idle / 12 h, so log in again afterwards. */
async function advance(ms: number) {
  h.clock.advance(ms);
  c = await login(h, email);
}

before(async () => {
  h = await createHarness();
  ({ email } = await orgWithLogin(h.db, await passwordHash()));
  c = await login(h, email);
  r = await startReceiver();
});
after(async () => {
  await r?.close();
  await h?.close();
});

async function subscription(): Promise<{ id: string; secret: string }> {
  const res = await c.post('/app/api/webhook-subscriptions', { url: r.url });
  assert.equal(res.json.state, 'active');
  return { id: res.json.subscription_id, secret: res.json.secret };
}

type SecretRow = {
  id: string;
  status: string;
  kind: string;
  expires_at: Date | null;
  activated_at: Date | null;
  ciphertext: string;
};
const secrets = async (subId: string) =>
  (
    await h.db.query<SecretRow>(
      'SELECT id, status, kind, expires_at, activated_at, ciphertext FROM webhook_secrets WHERE subscription_id = $1 ORDER BY created_at, id',
      [subId],
    )
  ).rows;
const activeSecret = async (subId: string) => {
  const a = (await secrets(subId)).filter((s) => s.status === 'active');
  assert.equal(a.length, 1);
  return decryptSecret(h.deps.keys.secretEncryptionKey, a[0]!.ciphertext);
};

test('a standard rotation answers 201 with a new pending secret that expires in 24 hours', async () => {
  const sub = await subscription();
  const res = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  assert.equal(res.status, 201);
  assert.match(res.json.secret, /^whsec_/);
  assert.notEqual(res.json.secret, sub.secret);
  assert.equal(res.json.status, 'pending');
  const row = (await secrets(sub.id)).find((s) => s.id === res.json.rotation_id)!;
  assert.equal(row.status, 'pending');
  assert.equal(row.kind, 'standard');
  assert.equal(row.expires_at?.getTime(), h.clock.now().getTime() + 24 * HOUR);
  assert.equal(decryptSecret(h.deps.keys.secretEncryptionKey, row.ciphertext), res.json.secret);
  // Signing still uses the old secret until activation.
  assert.equal(await activeSecret(sub.id), sub.secret);
  const view = await c.get(`/app/api/webhook-subscriptions/${sub.id}`);
  assert.equal(view.json.pending_rotation.rotation_id, res.json.rotation_id);
});

test('a rotation request without a body is a standard rotation', async () => {
  const sub = await subscription();
  const res = await h.app.inject({
    method: 'POST',
    url: `/app/api/webhook-subscriptions/${sub.id}/rotations`,
    headers: { cookie: c.cookie, 'x-csrf-token': c.csrf },
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.json().status, 'pending');
});

test('a second standard rotation replaces the pending one, which expires', async () => {
  const sub = await subscription();
  const first = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  const second = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  const rows = await secrets(sub.id);
  assert.equal(rows.find((s) => s.id === first.json.rotation_id)?.status, 'expired');
  assert.equal(rows.find((s) => s.id === second.json.rotation_id)?.status, 'pending');
  const act = await c.post(
    `/app/api/webhook-subscriptions/${sub.id}/rotations/${first.json.rotation_id}/activate`,
  );
  assert.equal(act.status, 409);
  assert.equal(act.json.error.code, 'CONFLICT');
});

test('a rotation test answers 202 and queues a webhook.test delivery tied to the pending secret', async () => {
  const sub = await subscription();
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  const res = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/test`);
  assert.equal(res.status, 202);
  const { rows } = await h.db.query<{ secret_id: string; event_type: string; status: string; body: string }>(
    `SELECT d.secret_id, d.event_type, d.status, e.body FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.id = $1`,
    [res.json.delivery_id],
  );
  assert.equal(rows[0]?.secret_id, rot.json.rotation_id);
  assert.equal(rows[0]?.event_type, 'webhook.test');
  assert.equal(rows[0]?.status, 'pending');
  const env = JSON.parse(rows[0]!.body);
  assert.equal(env.resource_id, sub.id);
  assert.equal(env.data._test, true);
});

test('activation answers 200, switches signing to the new secret at once and retires the old one after 1 hour', async () => {
  const sub = await subscription();
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  h.clock.advance(10 * MINUTE);
  const res = await c.post(
    `/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/activate`,
  );
  assert.equal(res.status, 200);
  const now = h.clock.now();
  assert.deepEqual(res.json, {
    rotation_id: rot.json.rotation_id,
    activated_at: now.toISOString(),
    previous_secret_retires_at: new Date(now.getTime() + HOUR).toISOString(),
  });
  assert.equal(await activeSecret(sub.id), rot.json.secret);
  const old = (await secrets(sub.id)).find((s) => s.kind === 'initial')!;
  assert.equal(old.status, 'retiring');
  assert.equal(old.expires_at?.getTime(), now.getTime() + HOUR);
  h.clock.advance(HOUR);
  const swept = await expirePendingRotations(h.deps);
  assert.ok(swept.retired >= 1);
  assert.equal((await secrets(sub.id)).find((s) => s.kind === 'initial')?.status, 'retired');
  const again = await c.post(
    `/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/activate`,
  );
  assert.equal(again.status, 409);
  assert.match(again.json.error.message, /active, not pending/);
});

test('a pending secret older than 24 hours cannot be activated: 409 CONFLICT, and it is marked expired', async () => {
  const sub = await subscription();
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  await advance(24 * HOUR);
  const res = await c.post(
    `/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/activate`,
  );
  assert.equal(res.status, 409);
  assert.equal(res.json.error.code, 'CONFLICT');
  assert.match(res.json.error.message, /24 hours/);
  assert.equal((await secrets(sub.id)).find((s) => s.id === rot.json.rotation_id)?.status, 'expired');
  assert.equal(await activeSecret(sub.id), sub.secret);
});

test('the periodic sweep expires a 24-hour-old pending secret and skips its waiting rotation test', async () => {
  const sub = await subscription();
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  const t = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/test`);
  await advance(24 * HOUR - 1);
  await expirePendingRotations(h.deps);
  assert.equal((await secrets(sub.id)).find((s) => s.id === rot.json.rotation_id)?.status, 'pending');
  h.clock.advance(1);
  const swept = await expirePendingRotations(h.deps);
  assert.ok(swept.expired >= 1);
  assert.equal((await secrets(sub.id)).find((s) => s.id === rot.json.rotation_id)?.status, 'expired');
  const { rows } = await h.db.query<{ status: string; reason: string }>(
    'SELECT status, reason FROM webhook_deliveries WHERE id = $1',
    [t.json.delivery_id],
  );
  assert.deepEqual(rows[0], { status: 'skipped', reason: 'rotation_expired' });
  const test2 = await c.post(
    `/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/test`,
  );
  assert.equal(test2.status, 409);
});

test('an emergency rotation replaces the secret at once, pauses the subscription and skips its queue', async () => {
  const sub = await subscription();
  const pendingRot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  const q1 = await insertDelivery(h.db, { orgId: c.orgId, subscriptionId: sub.id, createdAt: h.clock.now() });
  const q2 = await insertDelivery(h.db, { orgId: c.orgId, subscriptionId: sub.id, createdAt: h.clock.now() });
  const done = await insertDelivery(h.db, {
    orgId: c.orgId,
    subscriptionId: sub.id,
    createdAt: h.clock.now(),
    status: 'delivered',
  });
  const res = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, { emergency: true });
  assert.equal(res.status, 201);
  assert.equal(res.json.status, 'active');
  assert.equal(res.json.state, 'paused');
  assert.equal(await activeSecret(sub.id), res.json.secret);
  const rows = await secrets(sub.id);
  assert.equal(rows.find((s) => s.kind === 'initial')?.status, 'retired');
  assert.equal(rows.find((s) => s.id === pendingRot.json.rotation_id)?.status, 'expired');
  assert.equal(rows.find((s) => s.id === res.json.rotation_id)?.kind, 'emergency');
  const view = await c.get(`/app/api/webhook-subscriptions/${sub.id}`);
  assert.equal(view.json.state, 'paused');
  assert.equal(view.json.paused_reason, 'emergency_rotation');
  const d = await h.db.query<{ id: string; status: string; reason: string | null }>(
    'SELECT id, status, reason FROM webhook_deliveries WHERE id = ANY ($1::uuid[]) ORDER BY id',
    [[q1.deliveryId, q2.deliveryId, done.deliveryId]],
  );
  const by = Object.fromEntries(d.rows.map((x) => [x.id, [x.status, x.reason]]));
  assert.deepEqual(by[q1.deliveryId], ['skipped', 'emergency_rotation']);
  assert.deepEqual(by[q2.deliveryId], ['skipped', 'emergency_rotation']);
  assert.deepEqual(by[done.deliveryId], ['delivered', null]);
  // Paused: Test is refused until re-verification, which resumes sending.
  assert.equal(
    (await c.post(`/app/api/webhook-subscriptions/${sub.id}/test`)).json.error.code,
    'SUBSCRIPTION_INACTIVE',
  );
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${sub.id}/verify`)).json.state, 'active');
  // The skipped deliveries can be resent from the log.
  assert.equal((await c.post(`/app/api/deliveries/${q1.deliveryId}/resend`)).status, 202);
});

test('rotation routes of an unknown rotation id answer 404', async () => {
  const sub = await subscription();
  const rid = '0f0e0d0c-0b0a-4909-8807-060504030201';
  assert.equal(
    (await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations/${rid}/activate`)).status,
    404,
  );
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations/${rid}/test`)).status, 404);
  assert.equal((await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations/nope/test`)).status, 404);
});

test('a rotation id of another subscription answers 404', async () => {
  const a = await subscription();
  const b = await subscription();
  const rot = await c.post(`/app/api/webhook-subscriptions/${a.id}/rotations`, {});
  const res = await c.post(
    `/app/api/webhook-subscriptions/${b.id}/rotations/${rot.json.rotation_id}/activate`,
  );
  assert.equal(res.status, 404);
});

test("GET rotations lists the secrets' lifecycle newest first and never a secret", async () => {
  const sub = await subscription();
  h.clock.advance(1000);
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  const res = await c.get(`/app/api/webhook-subscriptions/${sub.id}/rotations`);
  assert.equal(res.status, 200);
  assert.deepEqual(
    res.json.items.map((s: { status: string; kind: string }) => [s.status, s.kind]),
    [
      ['pending', 'standard'],
      ['active', 'initial'],
    ],
  );
  assert.ok(!JSON.stringify(res.json).includes(rot.json.secret));
  assert.ok(!JSON.stringify(res.json).includes(sub.secret));
});

test('emergency: true must be a boolean: 400', async () => {
  const sub = await subscription();
  const res = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, { emergency: 'yes' });
  assert.equal(res.status, 400);
  assert.match(res.json.error.message, /emergency/);
});

test('the old secret is still retiring at activation + 59:59 and retired at + 1 h', async () => {
  const sub = await subscription();
  h.clock.advance(1000);
  const rot = await c.post(`/app/api/webhook-subscriptions/${sub.id}/rotations`, {});
  const act = await c.post(
    `/app/api/webhook-subscriptions/${sub.id}/rotations/${rot.json.rotation_id}/activate`,
  );
  assert.equal(act.status, 200);
  const activatedAt = h.clock.now().getTime();
  const oldStatus = async () => (await secrets(sub.id)).find((s) => s.kind === 'initial')?.status;

  h.clock.set(new Date(activatedAt + HOUR - 1000));
  await expirePendingRotations(h.deps);
  assert.equal(await oldStatus(), 'retiring', 'at 59:59 the receiver may still see the old secret');
  c = await login(h, email);
  const listed = await c.get(`/app/api/webhook-subscriptions/${sub.id}/rotations`);
  assert.deepEqual(
    listed.json.items.map((s: { status: string; kind: string }) => [s.status, s.kind]),
    [
      ['active', 'standard'],
      ['retiring', 'initial'],
    ],
  );

  h.clock.set(new Date(activatedAt + HOUR));
  await expirePendingRotations(h.deps);
  assert.equal(await oldStatus(), 'retired');
});
