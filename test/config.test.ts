import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../src/config.ts';

test('webhooks may target private addresses on a local start only, unless the setting decides', () => {
  const cases: [Record<string, string>, boolean, 'setting' | 'local'][] = [
    // npm start's defaults: embedded database, http://localhost:3000
    [{}, true, 'local'],
    [{ PUBLIC_BASE_URL: 'http://127.0.0.1:3000' }, true, 'local'],
    [{ PUBLIC_BASE_URL: 'http://[::1]:3000' }, true, 'local'],
    // a deployment: a public base URL, or PostgreSQL
    [{ PUBLIC_BASE_URL: 'https://calls.example.com' }, false, 'local'],
    [{ PUBLIC_BASE_URL: 'http://10.0.0.5:3000' }, false, 'local'],
    [{ PUBLIC_BASE_URL: 'http://localhost.example.com' }, false, 'local'],
    [{ DATABASE_URL: 'postgres://u@db.example.com/callcap' }, false, 'local'],
    // the setting wins either way
    [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: '0' }, false, 'setting'],
    [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: '' }, false, 'setting'],
    [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }, false, 'setting'],
    [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', PUBLIC_BASE_URL: 'https://calls.example.com' }, true, 'setting'],
    [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', DATABASE_URL: 'postgres://u@db/c' }, true, 'setting'],
  ];
  for (const [env, allowed, source] of cases) {
    const c = loadConfig(env);
    assert.equal(c.WEBHOOK_ALLOW_PRIVATE_TARGETS, allowed, JSON.stringify(env));
    assert.equal(c.privateTargetsSource, source, JSON.stringify(env));
  }
  assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }), /WEBHOOK_ALLOW_PRIVATE_TARGETS/);
});
