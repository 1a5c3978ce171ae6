import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { tenantScope } from '../../src/domain/tenant.ts';
import { createMailer, queueEmail } from '../../src/mail/mailer.ts';
import { verifySubscription } from '../../src/webhooks/subscriptions/handshake.ts';
import { startRotation } from '../../src/webhooks/subscriptions/rotation.ts';
import { engine } from '../helpers/db.ts';
import { insertOrg } from '../helpers/fixtures.ts';
import { type Receiver, startReceiver, status } from '../helpers/receiver.ts';
import {
  createEnv,
  deliveryFor,
  drain,
  type Env,
  emit,
  insertSubscription,
  MIN,
  subscriptionRow,
  worker,
} from '../helpers/webhooks.ts';

interface Mail {
  from: string;
  to: string[];
  raw: string;
}

let env: Env;
let rx: Receiver;
let smtp: SMTPServer;
let smtpPort: number;
const inbox: Mail[] = [];

before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  env = await createEnv({
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    MAIL_FROM: 'Call Capture <alerts@callcap.test>',
  });
  rx = await startReceiver(status(401, '{"error":"bad signature"}'));
});
after(async () => {
  await rx?.close();
  await env?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
});

/** Quoted-printable soft breaks removed, so assertions read the text as written. */
const text = (raw: string) =>
  raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, h) => String.fromCharCode(Number.parseInt(h, 16)));

test(`on ${engine}, a 401 pauses the subscription, dead-letters the delivery and sends exactly one e-mail through SMTP`, async (t) => {
  const { orgId, ownerEmail } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: `${rx.url}?token=receiver-own-token` });
  // Two deliveries fail with 401 in the same round: still one pause and one e-mail.
  const a = await emit(env.deps, { orgId });
  const b = await emit(env.deps, { orgId });
  inbox.length = 0;
  const w = worker(env.deps, { concurrency: 8 });
  t.after(() => w.stop());
  assert.equal(await w.drain(), 2);

  for (const e of [a, b]) {
    const d = await deliveryFor(env.db, sub.subscriptionId, e);
    assert.equal(d.status, 'dead_lettered');
    assert.equal(d.reason, 'receiver_rejected_401');
  }
  const s = await subscriptionRow(env.db, sub.subscriptionId);
  assert.equal(s.state, 'paused');
  assert.equal(s.paused_reason, 'receiver_rejected');

  assert.equal(inbox.length, 1);
  assert.deepEqual(inbox[0].to, [ownerEmail]);
  assert.equal(inbox[0].from, 'alerts@callcap.test');
  const mail = text(inbox[0].raw);
  assert.match(mail, /Subject: Webhook subscription paused: http:\/\/127\.0\.0\.1:\d+\/hooks/);
  assert.match(mail, /answered HTTP 401/);
  assert.match(mail, /\{"error":"bad signature"\}/);
  assert.ok(
    mail.includes(
      `Open the subscription: https://calls.example.test/app/settings/integrations/webhooks/${sub.subscriptionId}`,
    ),
    'the notice links to the subscription page (PUBLIC_BASE_URL + its path)',
  );
  assert.ok(!mail.includes('receiver-own-token'), 'the query string of the URL is left out');
  assert.ok(!mail.includes(sub.secret), 'never the secret');
  assert.ok(!/v1=[0-9a-f]{8}/.test(mail), 'never a signature');
  const { rows } = await env.db.query<{ status: string; sent_at: Date | null }>(
    'SELECT status, sent_at FROM email_outbox WHERE organization_id = $1',
    [orgId],
  );
  assert.equal(rows.length, 1);
  assert.equal(rows[0].status, 'sent');
  assert.ok(rows[0].sent_at);

  // More deliveries of the paused subscription neither go out nor send more mail.
  await emit(env.deps, { orgId });
  env.clock.advance(10 * MIN);
  assert.equal(await drain(env.deps), 0);
  assert.equal(inbox.length, 1);
});

test('an e-mail is dispatched once: a second dispatch of the same row sends nothing', async (t) => {
  const mailer = createMailer(env.deps);
  t.after(() => mailer.close());
  const id = await queueEmail(
    env.db,
    { organizationId: null, to: 'ops@example.test', subject: 'hello', body: 'x' },
    env.clock.now(),
  );
  inbox.length = 0;
  assert.equal(await mailer.dispatch(id), 'sent');
  assert.equal(await mailer.dispatch(id), 'not_queued');
  assert.equal(inbox.length, 1);
});

test('without SMTP_URL an e-mail is kept in email_outbox with status kept', async (t) => {
  const mailer = createMailer({ ...env.deps, config: { ...env.deps.config, SMTP_URL: undefined } });
  t.after(() => mailer.close());
  const id = await queueEmail(
    env.db,
    { organizationId: null, to: 'ops@example.test', subject: 'kept', body: 'x' },
    env.clock.now(),
  );
  assert.equal(await mailer.dispatch(id), 'kept');
  const { rows } = await env.db.query<{ status: string }>('SELECT status FROM email_outbox WHERE id = $1', [
    id,
  ]);
  assert.equal(rows[0].status, 'kept');
});

test('an unreachable SMTP server marks the e-mail failed with the error', async (t) => {
  const mailer = createMailer({
    ...env.deps,
    config: { ...env.deps.config, SMTP_URL: 'smtp://127.0.0.1:1' },
  });
  t.after(() => mailer.close());
  const id = await queueEmail(
    env.db,
    { organizationId: null, to: 'ops@example.test', subject: 'nope', body: 'x' },
    env.clock.now(),
  );
  assert.equal(await mailer.dispatch(id), 'failed');
  const { rows } = await env.db.query<{ status: string; last_error: string }>(
    'SELECT status, last_error FROM email_outbox WHERE id = $1',
    [id],
  );
  assert.equal(rows[0].status, 'failed');
  assert.match(rows[0].last_error, /ECONNREFUSED|connect/i);
});

test('an e-mail left queued by an interrupted process is sent by dispatchStale', async (t) => {
  const mailer = createMailer(env.deps);
  t.after(() => mailer.close());
  const id = await queueEmail(
    env.db,
    { organizationId: null, to: 'ops@example.test', subject: 'late', body: 'x' },
    env.clock.now(),
  );
  inbox.length = 0;
  assert.equal(await mailer.dispatchStale(), 0, 'too recent: its own process may still send it');
  env.clock.advance(6 * MIN);
  assert.equal(await mailer.dispatchStale(), 1);
  assert.equal(inbox.length, 1);
  const { rows } = await env.db.query<{ status: string }>('SELECT status FROM email_outbox WHERE id = $1', [
    id,
  ]);
  assert.equal(rows[0].status, 'sent');
});

/** The e-mails queued for an organization, oldest first. */
async function outboxOf(orgId: string) {
  const { rows } = await env.db.query<{ to_address: string; subject: string; body: string; status: string }>(
    'SELECT to_address, subject, body, status FROM email_outbox WHERE organization_id = $1 ORDER BY created_at, id',
    [orgId],
  );
  return rows;
}

test('a pause after two 410 replies in a row sends one e-mail to the owner saying so', async (t) => {
  const gone = await startReceiver(status(410, 'endpoint removed'));
  t.after(() => gone.close());
  const { orgId, ownerEmail } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: gone.url });
  await emit(env.deps, { orgId, eventType: 'contact.created', callId: null });
  inbox.length = 0;
  assert.equal(await drain(env.deps), 1);
  assert.equal((await subscriptionRow(env.db, sub.subscriptionId)).state, 'active', 'one 410 does not pause');
  assert.equal(inbox.length, 0);
  env.clock.advance(2 * MIN);
  assert.equal(await drain(env.deps), 1);

  const s = await subscriptionRow(env.db, sub.subscriptionId);
  assert.equal(s.state, 'paused');
  assert.equal(s.paused_reason, 'receiver_gone');
  assert.equal(inbox.length, 1);
  assert.deepEqual(inbox[0].to, [ownerEmail]);
  const mail = text(inbox[0].raw);
  assert.match(mail, /Subject: Webhook subscription paused: http:\/\/127\.0\.0\.1:\d+\/hooks/);
  assert.match(mail, /Why: your endpoint answered 410 Gone twice in a row\./);
  assert.match(mail, /Last reply: HTTP 410, body starts with:\s+endpoint removed/);
  assert.match(mail, /Pause reason code: receiver_gone/);
  const outbox = await outboxOf(orgId);
  assert.equal(outbox.length, 1);
  assert.equal(outbox[0].status, 'sent');
});

test('an emergency rotation pauses the subscription without any e-mail: the owner paused it', async () => {
  const { orgId } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: rx.url });
  await emit(env.deps, { orgId });
  inbox.length = 0;
  const rot = await startRotation(env.deps, {
    scope: tenantScope(orgId),
    subscriptionId: sub.subscriptionId,
    emergency: true,
  });
  assert.equal(rot.state, 'paused');
  const s = await subscriptionRow(env.db, sub.subscriptionId);
  assert.equal(s.state, 'paused');
  assert.equal(s.paused_reason, 'emergency_rotation');
  // Nothing is sent while paused, so nothing can pause it again either.
  env.clock.advance(10 * MIN);
  assert.equal(await drain(env.deps), 0);
  assert.deepEqual(await outboxOf(orgId), []);
  assert.equal(inbox.length, 0);
});

test('after re-verification a new automatic pause sends a second e-mail', async (t) => {
  // Accepts the verification handshake, rejects every event with 401.
  const picky = await startReceiver((req, res) => {
    if (JSON.parse(req.body).event_type === 'webhook.subscription.verify')
      return void res.writeHead(200).end();
    res.writeHead(401).end('bad signature');
  });
  t.after(() => picky.close());
  const { orgId, ownerEmail } = await insertOrg(env.db);
  const sub = await insertSubscription(env.deps, { orgId, url: picky.url });
  inbox.length = 0;

  await emit(env.deps, { orgId });
  assert.equal(await drain(env.deps), 1);
  assert.equal((await subscriptionRow(env.db, sub.subscriptionId)).state, 'paused');
  assert.equal(inbox.length, 1);

  env.clock.advance(MIN);
  const again = await verifySubscription(env.deps, tenantScope(orgId), sub.subscriptionId);
  assert.equal(again.state, 'active');
  assert.equal(inbox.length, 1, 're-verification itself sends nothing');

  env.clock.advance(MIN);
  await emit(env.deps, { orgId });
  assert.equal(await drain(env.deps), 1);
  const s = await subscriptionRow(env.db, sub.subscriptionId);
  assert.equal(s.state, 'paused');
  assert.equal(s.paused_reason, 'receiver_rejected');
  assert.equal(inbox.length, 2, 'one e-mail per pause');
  assert.deepEqual(inbox[1].to, [ownerEmail]);
  assert.match(text(inbox[1].raw), /answered HTTP 401/);
  const outbox = await outboxOf(orgId);
  assert.deepEqual(
    outbox.map((m) => [m.to_address, m.status]),
    [
      [ownerEmail, 'sent'],
      [ownerEmail, 'sent'],
    ],
  );
});
