import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { T0 } from '../helpers/deps.ts';
import { checkEnvelope, eventsOf } from '../helpers/events.ts';
import { insertOrg, MISSING } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin, errorBody, errorJson } from '../helpers/http.ts';

let h: Harness;
let orgId: string;
before(async () => {
  h = await createHarness();
  ({ orgId } = await insertOrg(h.db, { country: 'US' }));
});
after(async () => {
  await h.close();
});

async function createContact(body: Record<string, unknown> = {}) {
  const res = await admin(h, 'POST', `/organizations/${orgId}/contacts`, {
    phone: '(415) 555-2671',
    first_name: 'Ana',
    email: 'ana@example.com',
    ...body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().contact_id as string;
}

const patch = (id: string, body: unknown) => admin(h, 'PATCH', `/contacts/${id}`, body);

test('creating a contact answers 201 {contact_id} and emits contact.created with the full snapshot', async () => {
  const res = await admin(h, 'POST', `/organizations/${orgId}/contacts`, {
    phone: '(415) 555-2671',
    first_name: 'Ana',
    last_name: 'Lopez',
    email: 'ana@example.com',
    company: '',
  });
  assert.equal(res.statusCode, 201);
  assert.deepEqual(Object.keys(res.json()), ['contact_id']);
  const id = res.json().contact_id;
  const row = (
    await h.db.query('SELECT phone, phone_e164, company, version FROM contacts WHERE id = $1', [id])
  ).rows[0];
  assert.deepEqual(row, { phone: '(415) 555-2671', phone_e164: '+14155552671', company: null, version: 0 });
  const events = await eventsOf(h.db, id);
  assert.equal(events.length, 1);
  assert.equal(events[0].call_id, null);
  const data = checkEnvelope(events[0], {
    type: 'contact.created',
    resourceId: id,
    factKey: id,
    dataKeys: ['contact'],
  });
  assert.deepEqual(data, {
    contact: {
      id,
      phone: '(415) 555-2671',
      first_name: 'Ana',
      last_name: 'Lopez',
      email: 'ana@example.com',
      company: null,
    },
  });
});

test('creating a contact with an unusable phone is a 422; bad bodies are a 400; an unknown organization a 404', async () => {
  const bad = await admin(h, 'POST', `/organizations/${orgId}/contacts`, { phone: 'call me' });
  assert.equal(bad.statusCode, 422);
  assert.equal(bad.json().error.code, 'VALIDATION_ERROR');
  for (const [body, message] of [
    [{}, /Field "phone" is required/],
    [{ phone: '+14155552671', email: 'not-an-address' }, /Field "email"/],
    [{ phone: '+14155552671', notes: 'x' }, /Unknown field "notes"/],
  ] as const) {
    const res = await admin(h, 'POST', `/organizations/${orgId}/contacts`, body);
    assert.equal(res.statusCode, 400, JSON.stringify(body));
    assert.match(res.json().error.message, message);
  }
  const missing = await admin(h, 'POST', `/organizations/${MISSING}/contacts`, { phone: '+14155552671' });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(errorJson(missing), errorBody('NOT_FOUND', `No organization ${MISSING}.`));
});

test('an edit answers 200 with the contact and emits contact.updated with only the changed keys', async () => {
  const id = await createContact();
  h.clock.advance(1000);
  const res = await patch(id, {
    first_name: 'Ana',
    last_name: 'Lopez',
    tags: [' vip ', 'VIP', 'lead'],
    notes: 'Prefers e-mail',
  });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    contact_id: id,
    phone: '(415) 555-2671',
    phone_e164: '+14155552671',
    first_name: 'Ana',
    last_name: 'Lopez',
    email: 'ana@example.com',
    company: null,
    notes: 'Prefers e-mail',
    tags: ['vip', 'lead'],
    created_at: T0,
    updated_at: '2026-06-15T10:00:01.000Z',
  });
  const updated = (await eventsOf(h.db, id)).filter((e) => e.event_type === 'contact.updated');
  assert.equal(updated.length, 1);
  const data = checkEnvelope(updated[0], {
    type: 'contact.updated',
    resourceId: id,
    factKey: `${id}:1`,
    dataKeys: ['contact_id', 'diff'],
    createdAt: '2026-06-15T10:00:01.000Z',
  });
  assert.deepEqual(data, {
    contact_id: id,
    diff: { last_name: 'Lopez', notes: 'Prefers e-mail', tags: ['vip', 'lead'] },
  });
  h.clock.set(T0);
});

test('an edit that changes nothing answers 200 and emits nothing', async () => {
  const id = await createContact();
  const res = await patch(id, { first_name: 'Ana', email: 'ana@example.com' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().first_name, 'Ana');
  assert.deepEqual(
    (await eventsOf(h.db, id)).map((e) => e.event_type),
    ['contact.created'],
  );
});

test('edits back and forth at the same instant are three distinct events', async () => {
  const id = await createContact();
  await patch(id, { company: 'Acme' });
  await patch(id, { company: null });
  await patch(id, { company: 'Acme' });
  const updates = (await eventsOf(h.db, id)).filter((e) => e.event_type === 'contact.updated');
  assert.equal(new Set(updates.map((e) => e.id)).size, 3);
  assert.deepEqual(
    updates
      .map((e) => e.envelope.data.diff)
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    [{ company: 'Acme' }, { company: 'Acme' }, { company: null }],
  );
});

test('a phone edit is validated and re-normalised; an unusable one is a 422 that changes nothing', async () => {
  const id = await createContact();
  const bad = await patch(id, { phone: '12', first_name: 'Eve' });
  assert.equal(bad.statusCode, 422);
  const unchanged = (await h.db.query('SELECT phone, first_name, version FROM contacts WHERE id = $1', [id]))
    .rows[0];
  assert.deepEqual(unchanged, { phone: '(415) 555-2671', first_name: 'Ana', version: 0 });
  const ok = await patch(id, { phone: '+44 20 7946 0958' });
  assert.equal(ok.json().phone_e164, '+442079460958');
  const last = (await eventsOf(h.db, id)).find((e) => e.event_type === 'contact.updated')!;
  assert.deepEqual(last.envelope.data.diff, { phone: '+44 20 7946 0958' });
});

test('an unknown contact is a 404; an empty or unknown-field edit is a 400', async () => {
  for (const target of [MISSING, 'nope']) {
    const res = await patch(target, { first_name: 'X' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(errorJson(res), errorBody('NOT_FOUND', `No contact ${target}.`));
  }
  const id = await createContact();
  const empty = await patch(id, {});
  assert.equal(empty.statusCode, 400);
  assert.deepEqual(
    errorJson(empty),
    errorBody(
      'BAD_REQUEST',
      'Send at least one of the fields first_name, last_name, email, phone, company, notes, tags.',
    ),
  );
  const unknown = await patch(id, { nickname: 'A' });
  assert.equal(unknown.statusCode, 400);
  assert.match(unknown.json().error.message, /Unknown field "nickname"/);
});
