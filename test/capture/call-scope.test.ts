/**
 * Tenant data has one door: the call commands (trash, restore, deletion scheduling, erasure, CRM and
 * review statuses) take a scope, and another organization's call answers 404 from the area function
 * itself — not from a check a route makes first. Proven twice: calling the area functions directly,
 * and posting the web app's call actions, whose handlers make no lookup of their own.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setCallStatuses } from '../../src/capture/call-status.ts';
import { cancelDeletion, eraseCall, scheduleDeletion, setTrashed } from '../../src/capture/deletion.ts';
import { ANY_TENANT, type Scope, tenantScope } from '../../src/domain/tenant.ts';
import { AppError } from '../../src/errors.ts';
import { cheapPasswordHash, orgWithLogin, PASSWORD } from '../helpers/app-api.ts';
import { insertCall, MISSING, storedCall } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
let mine: { orgId: string; email: string };
let theirs: { orgId: string };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

before(async () => {
  h = await createHarness();
  mine = await orgWithLogin(h.db, cheapPasswordHash());
  theirs = await orgWithLogin(h.db, cheapPasswordHash());
});
after(() => h?.close());

/** Every command once, on `callId`, within `scope`. */
const COMMANDS = {
  trash: (scope: Scope, id: string) => setTrashed(h.deps, scope, id, true),
  restore: (scope: Scope, id: string) => setTrashed(h.deps, scope, id, false),
  'schedule-deletion': (scope: Scope, id: string) =>
    scheduleDeletion(h.deps, scope, id, { reason: 'consent_withdrawn', pendingDeletionAt: null }),
  'cancel-deletion': (scope: Scope, id: string) => cancelDeletion(h.deps, scope, id),
  statuses: (scope: Scope, id: string) =>
    setCallStatuses(h.deps, scope, id, { crmStatus: 'qualified', reviewStatus: 'handled' }),
  erase: (scope: Scope, id: string) => eraseCall(h.deps, scope, id),
};

const notFound = (err: unknown) => err instanceof AppError && err.code === 'NOT_FOUND';

test("each call command answers NOT_FOUND for another organization's call and changes nothing", async () => {
  for (const [name, run] of Object.entries(COMMANDS)) {
    const id = await insertCall(h.db, { orgId: theirs.orgId, recordingState: 'not_captured' });
    const before = await storedCall(h.db, id);
    await assert.rejects(run(tenantScope(mine.orgId), id), notFound, name);
    assert.deepEqual(await storedCall(h.db, id), before, `${name} changed the other organization's call`);
    // The same id in its own organization's scope, and in the operator's, is found.
    await run(tenantScope(theirs.orgId), id);
    if (name !== 'erase') await run(ANY_TENANT, id);
  }
});

test('an id that does not exist and an erased call answer the same NOT_FOUND in any scope', async () => {
  const erased = await insertCall(h.db, { orgId: mine.orgId, erasedAt: h.clock.now() });
  for (const [name, run] of Object.entries(COMMANDS)) {
    for (const id of [MISSING, erased, 'not-a-uuid']) {
      await assert.rejects(run(tenantScope(mine.orgId), id), notFound, `${name} ${id}`);
      await assert.rejects(run(ANY_TENANT, id), notFound, `${name} ${id} (operator)`);
    }
  }
});

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const form = await h.app.inject({ url: '/app/login' });
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
  const pre = String(form.headers['set-cookie']).split(';')[0]!;
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/login',
    headers: { ...FORM, cookie: pre },
    payload: new URLSearchParams({ _csrf: token, email: mine.email, password: PASSWORD }).toString(),
  });
  assert.equal(res.statusCode, 303);
  const cookie = (res.headers['set-cookie'] as string[])[0]!.split(';')[0]!;
  const page = await h.app.inject({ url: '/app/calls', headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return { cookie, csrf };
}

test("the web app's call actions on another organization's call answer a 404 page and change nothing", async () => {
  const { cookie, csrf } = await signIn();
  const form = {
    _csrf: csrf,
    crm_status: 'qualified',
    review_status: 'handled',
    reason: 'consent_withdrawn',
    confirm: 'yes',
  };
  for (const action of ['status', 'trash', 'restore', 'schedule-deletion', 'cancel-deletion', 'erase']) {
    const id = await insertCall(h.db, { orgId: theirs.orgId, recordingState: 'not_captured' });
    const before = await storedCall(h.db, id);
    const res = await h.app.inject({
      method: 'POST',
      url: `/app/calls/${id}/${action}`,
      headers: { ...FORM, cookie },
      payload: new URLSearchParams(form).toString(),
    });
    assert.equal(res.statusCode, 404, action);
    assert.match(res.headers['content-type'] as string, /^text\/html/, action);
    assert.deepEqual(await storedCall(h.db, id), before, action);
    // The same post on a call of one's own goes through (303 to the call, or to the list after erasure).
    const own = await insertCall(h.db, { orgId: mine.orgId, recordingState: 'not_captured' });
    const ok = await h.app.inject({
      method: 'POST',
      url: `/app/calls/${own}/${action}`,
      headers: { ...FORM, cookie },
      payload: new URLSearchParams(form).toString(),
    });
    assert.equal(ok.statusCode, 303, `${action} on one's own call`);
  }
});
