/**
 * Erasure really erases (issue 6, defect 1): after POST /admin/v1/calls/{id}/erase (or the retention
 * sweep) no table holds the call's personal data, event bodies and receivers' echoed replies
 * included, and no receiver is sent anything of it any more — only its deletion events go out.
 * Calls are erased in every delivery state: queued for an active subscription, held for a paused
 * one, dead-lettered, delivered, claimed by a worker but not yet sent, and in flight.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { onRecordingStored } from '../../src/capture/completion.ts';
import { runRetentionSweep } from '../../src/capture/retention.ts';
import { MINUTE } from '../../src/clock.ts';
import { newId } from '../../src/ids.ts';
import { pauseNotice, redactPauseNotice } from '../../src/webhooks/delivery/pause-notice.ts';
import { reconcileDeliveries } from '../../src/webhooks/delivery/reconcile.ts';
import { type ConsoleClient, login, orgWithLogin, passwordHash } from '../helpers/app-api.ts';
import { engine } from '../helpers/db.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';
import { type Handler, type Receiver, startReceiver } from '../helpers/receiver.ts';
import { emit, insertSubscription, worker } from '../helpers/webhooks.ts';

let h: Harness;
let hash: string;
const receivers: Receiver[] = [];

before(async () => {
  h = await createHarness();
  hash = await passwordHash();
});
after(async () => {
  for (const r of receivers) await r.close();
  await h.close();
});

interface Person {
  name: string;
  /** as the carrier reports it: US national format */
  phone: string;
  /** a phrase found only in this call's transcript */
  phrase: string;
  street: string;
}

const transcriptOf = (p: Person) => `Agent: Acme Plumbing, how can I help you?
Caller: Hi, my name is ${p.name}. I need a plumber to fix my water heater, the ${p.phrase}. It's urgent.
Agent: Where are you?
Caller: ${p.street}, Springfield. Tomorrow morning would be great.`;

const isHandshake = (body: string) => body.includes('"webhook.subscription.verify"');

/** Answers the handshake with 200 and every delivery with `code`, echoing the body it was sent. */
const echo =
  (code: number): Handler =>
  ({ body }, res) => {
    res.statusCode = isHandshake(body) ? 200 : code;
    res.end(isHandshake(body) ? 'ok' : body);
  };

async function receiver(h0: Handler): Promise<Receiver> {
  const r = await startReceiver(h0);
  receivers.push(r);
  return r;
}

/** An organization in the US (national numbers parse) whose owner can log in to the console. */
async function org(): Promise<{ orgId: string; console: ConsoleClient }> {
  const { orgId, email } = await orgWithLogin(h.db, hash);
  await h.db.query(`UPDATE organizations SET country = 'US' WHERE id = $1`, [orgId]);
  await h.db.query(
    `INSERT INTO trackers (id, organization_id, name, terms, created_at) VALUES ($1, $2, 'Urgent jobs', $3, $4)`,
    [newId(), orgId, ['urgent', 'water heater'], h.clock.now()],
  );
  return { orgId, console: await login(h, email) };
}

/**
 * A call reported by the adapter with its transcript, so the processing run's events (transcribed,
 * completed, follow-up drafted, tracker matched) are emitted. With audio the run waits for the
 * recording, which is then stored (erasing it emits call.recording.deleted).
 */
async function reportCall(orgId: string, p: Person, opts: { audio?: boolean } = {}): Promise<string> {
  const res = await admin(h, 'POST', `/organizations/${orgId}/calls`, {
    direction: 'inbound',
    caller_phone: p.phone,
    caller_name: p.name,
    company_phone: '+14155550100',
    recording_mode: opts.audio ? 'normal' : 'no_recording',
    transcript_original: transcriptOf(p),
  });
  assert.equal(res.statusCode, 201, res.body);
  const id: string = res.json().call_id;
  // the transcript is analysed by the processing jobs right after the response
  await settleJobs(h.deps);
  if (opts.audio) {
    const key = `recordings/${orgId}/${id}/a.mp3`;
    await h.deps.store.put(key, Readable.from([Buffer.from('ID3 audio')]));
    await h.db.transaction(async (tx) => {
      await tx.query(
        `UPDATE calls SET recording_state = 'available', recording_key = $2, duration = 9, recording_sid = 'RE77'
          WHERE id = $1`,
        [id, key],
      );
      await onRecordingStored(tx, h.deps, id);
    });
  }
  return id;
}

/** Everything that identifies the caller, read from the stored call before it is erased. */
async function personalStrings(callId: string, p: Person): Promise<string[]> {
  const { rows } = await h.db.query<{ customer_phone_e164: string; customer_phone_national: string }>(
    'SELECT customer_phone_e164, customer_phone_national FROM calls WHERE id = $1',
    [callId],
  );
  const { customer_phone_e164: e164, customer_phone_national: national } = rows[0]!;
  assert.match(e164, /^\+1415555\d{4}$/);
  const digits = e164.slice(1);
  return [e164, national, p.phone, digits, [...digits].reverse().join(''), p.name, p.phrase, p.street];
}

/** Every row of every table of the database, as text, searched for the strings: "table: string" per hit. */
async function dumpHits(strings: readonly string[]): Promise<string[]> {
  const tables = await h.db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'
      ORDER BY table_name`,
  );
  assert.ok(tables.rows.length >= 15, 'the dump sees the whole schema');
  const hits = new Set<string>();
  for (const { table_name } of tables.rows) {
    const { rows } = await h.db.query<{ t: string }>(`SELECT x::text AS t FROM "${table_name}" x`);
    for (const r of rows) {
      const text = r.t.toLowerCase();
      for (const s of strings) if (text.includes(s.toLowerCase())) hits.add(`${table_name}: ${s}`);
    }
  }
  return [...hits].sort();
}

interface DeliveryOfCall {
  id: string;
  event_type: string;
  status: string;
  reason: string | null;
  held: boolean;
  subscription_id: string;
}

async function deliveriesOfCall(callId: string): Promise<DeliveryOfCall[]> {
  const { rows } = await h.db.query<DeliveryOfCall>(
    `SELECT d.id, d.event_type, d.status, d.reason, d.held, d.subscription_id
       FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE e.call_id = $1 ORDER BY d.event_type, d.subscription_id`,
    [callId],
  );
  return rows;
}

const DELETION_TYPES = ['call.deletion_scheduled', 'call.recording.deleted'];
const contentOnly = (ds: DeliveryOfCall[]) => ds.filter((d) => !DELETION_TYPES.includes(d.event_type));

/** Requests a receiver got from index `from` on, handshakes left out. */
const deliveredSince = (r: Receiver, from: number) =>
  r.requests.slice(from).filter((q) => !isHandshake(q.body));

async function until(check: () => Promise<boolean> | boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const people: Record<'A' | 'B' | 'C' | 'D' | 'X' | 'Y', Person> = {
  A: {
    name: 'Zebulon Quixley',
    phone: '(415) 555-0131',
    phrase: 'tangerine gazebo leak',
    street: '17 Quince Lane',
  },
  B: {
    name: 'Philippa Varnsworth',
    phone: '(415) 555-0132',
    phrase: 'cobalt windmill drip',
    street: '23 Juniper Court',
  },
  C: {
    name: 'Ignatius Pembleton',
    phone: '(415) 555-0133',
    phrase: 'saffron lighthouse flood',
    street: '31 Walnut Row',
  },
  D: {
    name: 'Octavia Bramblecourt',
    phone: '(415) 555-0134',
    phrase: 'emerald teapot burst',
    street: '47 Hazel Drive',
  },
  X: {
    name: 'Cornelius Wetherby',
    phone: '(415) 555-0135',
    phrase: 'violet pagoda seep',
    street: '59 Alder Way',
  },
  Y: {
    name: 'Marigold Fenwicke',
    phone: '(415) 555-0136',
    phrase: 'amber carousel gush',
    street: '61 Birch Mews',
  },
};

test(`on ${engine}, calls erased while queued, held, dead-lettered and delivered leave nothing in any table and reach no receiver again`, async () => {
  // One organization per state, each with its own receiver that echoes what it is sent.
  const a = await org();
  const b = await org();
  const c = await org();
  const d = await org();
  const rxA = await receiver(echo(200));
  const rxB = await receiver(echo(200));
  const rxC = await receiver(echo(422));
  const rxD = await receiver(echo(200));
  const subA = (await insertSubscription(h.deps, { orgId: a.orgId, url: rxA.url })).subscriptionId;
  const subB = (await insertSubscription(h.deps, { orgId: b.orgId, url: rxB.url, state: 'paused' }))
    .subscriptionId;
  const subC = (await insertSubscription(h.deps, { orgId: c.orgId, url: rxC.url })).subscriptionId;
  const subD = (await insertSubscription(h.deps, { orgId: d.orgId, url: rxD.url })).subscriptionId;
  const w = worker(h.deps);
  try {
    // C and D go out first: C's receiver rejects with 422 (dead-lettered, subscription paused, owner
    // e-mailed with the reply, which echoes the body), D's acknowledges (the reply echoes it too).
    const callC = await reportCall(c.orgId, people.C);
    const callD = await reportCall(d.orgId, people.D, { audio: true });
    await w.drain();
    const dC = await deliveriesOfCall(callC);
    assert.ok(dC.length >= 4, 'transcribed, completed, follow-up and tracker events');
    assert.ok(dC.some((x) => x.status === 'dead_lettered'));
    assert.ok((await deliveriesOfCall(callD)).every((x) => x.status === 'delivered'));
    // A is queued for an active subscription, B held for a paused one.
    const callA = await reportCall(a.orgId, people.A);
    const callB = await reportCall(b.orgId, people.B);
    assert.ok((await deliveriesOfCall(callA)).every((x) => x.status === 'pending' && !x.held));
    assert.ok((await deliveriesOfCall(callB)).every((x) => x.status === 'pending' && x.held));

    const marks = {
      A: await personalStrings(callA, people.A),
      B: await personalStrings(callB, people.B),
      C: await personalStrings(callC, people.C),
      D: await personalStrings(callD, people.D),
    };
    const all = Object.values(marks).flat();
    // The search works: before the erase every call's data is found, outside `calls` too.
    const beforeHits = await dumpHits(all);
    for (const s of [people.A.phrase, people.C.name, people.D.street])
      assert.ok(beforeHits.includes(`events: ${s}`), `${s} found in events before the erase`);
    assert.ok(beforeHits.some((x) => x.startsWith('webhook_attempts: ')));
    assert.ok(beforeHits.some((x) => x.startsWith('email_outbox: ')));

    const seen = { A: rxA.requests.length, B: rxB.requests.length, C: rxC.requests.length };
    const seenD = rxD.requests.length;
    for (const id of [callA, callC, callD])
      assert.equal((await admin(h, 'POST', `/calls/${id}/erase`)).statusCode, 204);
    // B is erased by the retention sweep when its scheduled deletion falls due.
    const pendingAt = new Date(h.clock.now().getTime() + MINUTE).toISOString();
    assert.equal(
      (
        await admin(h, 'POST', `/calls/${callB}/schedule-deletion`, {
          reason: 'user_erasure',
          pending_deletion_at: pendingAt,
        })
      ).statusCode,
      204,
    );
    h.clock.advance(2 * MINUTE);
    assert.equal((await runRetentionSweep(h.deps)).erased, 1);

    // Undelivered deliveries of the erased calls are skipped with the reason, in the same commit.
    for (const id of [callA, callB, callC]) {
      const ds = contentOnly(await deliveriesOfCall(id));
      assert.ok(ds.length >= 4);
      for (const x of ds) assert.deepEqual([x.status, x.reason], ['skipped', 'call_erased'], x.event_type);
    }

    // The worker runs, B and C are re-verified, C's dead letter is resent singly and in bulk.
    await w.drain();
    for (const [who, sub] of [
      [b, subB],
      [c, subC],
    ] as const) {
      const v = await who.console.post(`/app/api/webhook-subscriptions/${sub}/verify`);
      assert.equal(v.status, 200);
      assert.equal(v.json.state, 'active');
    }
    await w.drain();
    const dead = contentOnly(await deliveriesOfCall(callC))[0]!;
    const resend = await c.console.post(`/app/api/deliveries/${dead.id}/resend`);
    assert.equal(resend.status, 409);
    assert.equal(resend.json.success, false);
    assert.equal(resend.json.error.code, 'CONFLICT');
    assert.match(resend.json.error.message, new RegExp(`call ${callC} was erased`));
    const window = {
      from: new Date(h.clock.now().getTime() - 60 * MINUTE).toISOString(),
      to: new Date(h.clock.now().getTime() + MINUTE).toISOString(),
    };
    const bulkUrl = `/app/api/webhook-subscriptions/${subC}/deliveries/resend`;
    const dry = await c.console.post(bulkUrl, { ...window, dry_run: true });
    assert.equal(dry.status, 200);
    assert.equal(dry.json.count, 0);
    assert.equal(dry.json.erased_excluded, contentOnly(await deliveriesOfCall(callC)).length);
    const bulk = await c.console.post(bulkUrl, window);
    assert.equal(bulk.status, 202);
    assert.equal(bulk.json.count, 0);
    assert.match(bulk.json.message, /erased/);
    // Reconciliation does not re-create deliveries of an erased call for a subscription verified
    // before its events (one that "missed" them).
    const rxE = await receiver(echo(200));
    const subE = (await insertSubscription(h.deps, { orgId: a.orgId, url: rxE.url })).subscriptionId;
    await reconcileDeliveries(h.deps);
    assert.equal((await deliveriesOfCall(callA)).filter((x) => x.subscription_id === subE).length, 0);
    await w.drain();

    // No receiver saw anything of A, B or C after the erase; D only its deletion event.
    assert.deepEqual(deliveredSince(rxA, seen.A), []);
    assert.deepEqual(deliveredSince(rxB, seen.B), []);
    assert.deepEqual(deliveredSince(rxC, seen.C), []);
    assert.deepEqual(rxE.requests, []);
    const toD = deliveredSince(rxD, seenD);
    assert.deepEqual(
      toD.map((q) => JSON.parse(q.body).event_type),
      ['call.recording.deleted'],
    );
    for (const s of marks.D) assert.ok(!toD[0]!.body.includes(s), `deletion event carries no ${s}`);
    const allD = await deliveriesOfCall(callD);
    assert.ok(
      allD.every((x) => x.status === 'delivered'),
      'delivered stays delivered',
    );
    assert.deepEqual(
      allD.filter((x) => x.event_type === 'call.recording.deleted').map((x) => x.subscription_id),
      [subD],
    );

    // The delivery log shows why.
    const log = await a.console.get(`/app/api/webhook-subscriptions/${subA}/deliveries`);
    assert.equal(log.status, 200);
    assert.ok(log.json.items.length >= 4);
    for (const item of log.json.items)
      assert.deepEqual([item.status, item.reason], ['skipped', 'call_erased']);

    // The e-mail that reported C's pause still says so, without the echoed reply.
    const mail = await h.db.query<{ body: string }>(
      'SELECT body FROM email_outbox WHERE organization_id = $1',
      [c.orgId],
    );
    assert.equal(mail.rows.length, 1);
    assert.match(mail.rows[0]!.body, /was paused automatically/);
    assert.match(mail.rows[0]!.body, /Last reply: HTTP 422 \(not kept: the call it concerned was erased\)/);

    assert.deepEqual(await dumpHits(all), []);
  } finally {
    await w.stop();
  }
});

test(`on ${engine}, a delivery claimed before the erase but not yet sent is dropped, not sent`, async () => {
  const o = await org();
  let release: (() => void) | null = null;
  const rx = await receiver(({ body }, res: ServerResponse) => {
    if (body.includes('"contact.updated"') && release === null) {
      release = () => res.end('ok');
      return;
    }
    res.end(body);
  });
  const sub = (await insertSubscription(h.deps, { orgId: o.orgId, url: rx.url })).subscriptionId;
  // The blocker is due first and holds the only request slot; the call's events wait behind it.
  await emit(h.deps, { orgId: o.orgId, eventType: 'contact.updated', callId: null });
  h.clock.advance(1000);
  const callX = await reportCall(o.orgId, people.X);
  const marks = await personalStrings(callX, people.X);
  const w = worker(h.deps, { concurrency: 1, pollIntervalMs: 60_000 });
  try {
    await w.start();
    await until(() => release !== null, 'the blocking request');
    assert.equal((await admin(h, 'POST', `/calls/${callX}/erase`)).statusCode, 204);
    h.clock.advance(2000);
    (release as unknown as () => void)();
    await until(async () => {
      const { rows } = await h.db.query<{ status: string }>(
        `SELECT status FROM webhook_deliveries WHERE subscription_id = $1 AND event_type = 'contact.updated'`,
        [sub],
      );
      return rows[0]?.status === 'delivered';
    }, 'the blocker delivered');
  } finally {
    await w.stop();
  }
  assert.deepEqual(
    rx.requests.map((q) => JSON.parse(q.body).event_type),
    ['contact.updated'],
    'nothing of the erased call was sent',
  );
  const ds = await deliveriesOfCall(callX);
  assert.ok(ds.length >= 4);
  for (const x of ds) assert.deepEqual([x.status, x.reason], ['skipped', 'call_erased']);
  assert.deepEqual(await dumpHits(marks), []);
});

test(`on ${engine}, attempts in flight during the erase keep no reply text and do not bring their deliveries back`, async () => {
  const o = await org();
  const held: Array<() => void> = [];
  const holdThen =
    (code: number): Handler =>
    ({ body }, res) => {
      held.push(() => {
        res.statusCode = code;
        res.end(body);
      });
    };
  const ok = await receiver(holdThen(200));
  const rejecting = await receiver(holdThen(422));
  const subOk = (await insertSubscription(h.deps, { orgId: o.orgId, url: ok.url })).subscriptionId;
  await insertSubscription(h.deps, { orgId: o.orgId, url: rejecting.url });
  const callY = await reportCall(o.orgId, people.Y);
  const marks = await personalStrings(callY, people.Y);
  const n = (await deliveriesOfCall(callY)).length;
  assert.ok(n >= 8, 'four events to each of two subscriptions');
  const w = worker(h.deps);
  try {
    const run = w.runOnce();
    await until(() => held.length === n, 'every request in flight');
    assert.equal((await admin(h, 'POST', `/calls/${callY}/erase`)).statusCode, 204);
    for (const answer of held) answer();
    await run;
  } finally {
    await w.stop();
  }
  const ds = await deliveriesOfCall(callY);
  for (const x of ds) assert.deepEqual([x.status, x.reason], ['skipped', 'call_erased'], x.event_type);
  const attempts = await h.db.query<{ response_status: number; response_snippet: string | null }>(
    `SELECT a.response_status, a.response_snippet FROM webhook_attempts a
       JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id
      WHERE e.call_id = $1`,
    [callY],
  );
  assert.equal(attempts.rows.length, n, 'each request that went out is logged');
  assert.ok(attempts.rows.every((r) => r.response_snippet === null));
  assert.deepEqual(attempts.rows.map((r) => r.response_status).sort(), [
    ...Array(n / 2).fill(200),
    ...Array(n / 2).fill(422),
  ]);
  // The content did reach the acknowledging subscription: it is owed the call's deletion events.
  const reach = await h.db.query(
    'SELECT 1 FROM webhook_call_reach WHERE subscription_id = $1 AND call_id = $2',
    [subOk, callY],
  );
  assert.equal(reach.rowCount, 1);
  assert.deepEqual(await dumpHits(marks), []);
});

test('redactPauseNotice keeps the status and the rest of the notice, and drops the quoted reply', () => {
  const facts = {
    subscriptionId: 'sub-1',
    url: 'https://hooks.example.test/in?token=abc',
    reason: 'receiver_rejected',
    pausedAt: new Date('2026-06-15T10:00:00.000Z'),
    errorClass: null,
    callId: 'call-1',
  };
  const quoted = pauseNotice({
    ...facts,
    responseStatus: 422,
    snippet: '{"caller_phone":"+14155550131"}\nline two',
  });
  assert.match(quoted.body, /\+14155550131/);
  const redacted = redactPauseNotice(quoted.body);
  assert.equal(
    redacted,
    quoted.body.replace(
      /Last reply: .*\n {2}.*\n {2}line two\n/,
      'Last reply: HTTP 422 (not kept: the call it concerned was erased)\n',
    ),
  );
  assert.doesNotMatch(redacted, /14155550131|line two/);
  assert.match(redacted, /Subscription id: sub-1/);
  assert.equal(redactPauseNotice(redacted), redacted, 'idempotent');
  const noReply = pauseNotice({
    ...facts,
    responseStatus: null,
    errorClass: 'timeout',
    snippet: 'timed out',
  });
  assert.match(
    redactPauseNotice(noReply.body),
    /\nLast reply: \(not kept: the call it concerned was erased\)\n\nWhile it is paused/,
  );
  const withdrawn = pauseNotice({ ...facts, responseStatus: 422, snippet: null, replyWithdrawn: true });
  assert.match(
    withdrawn.body,
    /Last reply: HTTP 422 \(not kept: the delivery was withdrawn while the request was out/,
  );
});
